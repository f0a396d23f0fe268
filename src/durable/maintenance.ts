import type { RuntimeTimers } from "./timers.js";

/** A periodic job: given the time of the run; may return a promise the next task waits for. */
export type MaintenanceTask = (now: number) => unknown;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/**
 * How often housekeeping runs: a quarter of `cleanupMaxAgeMs` (a record outlives its age by at most
 * that), at most an hour (steady pruning), at least a minute (an age of 0 is no busy loop).
 */
export function maintenancePeriodMs(cleanupMaxAgeMs: number): number {
  return Math.min(HOUR_MS, Math.max(MINUTE_MS, Math.floor(cleanupMaxAgeMs / 4)));
}

export interface MaintenanceOptions {
  /** From the end of one run to the start of the next. */
  periodMs: number;
  /** The tasks by name, run in this order. */
  tasks: Record<string, MaintenanceTask>;
  now: () => number;
  timers: RuntimeTimers;
  /** Told when a task fails; the task runs again next period. */
  onError: (task: string, error: unknown) => void;
}

/**
 * A host's housekeeping: named tasks run in order every `periodMs`, one run at a time, from start() to
 * stop(). A failing task is reported and runs again next period; its timer keeps no process alive.
 */
export class Maintenance {
  private handle: unknown;
  private running = false;
  /** The run in progress, if any; it never rejects. */
  private run: Promise<void> | undefined;

  constructor(private readonly options: MaintenanceOptions) {}

  /** Runs the tasks now, in the background, and again one period after each run ends. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.runNow();
  }

  /** No run starts after this; resolves once a run in progress has ended (so files can be closed). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.handle !== undefined) this.options.timers.clearTimeout(this.handle);
    this.handle = undefined;
    await this.run;
  }

  private runNow(): void {
    this.run = this.runTasks().finally(() => {
      this.run = undefined;
      if (this.running) this.schedule();
    });
  }

  private schedule(): void {
    const handle = this.options.timers.setTimeout(() => {
      this.handle = undefined;
      this.runNow();
    }, this.options.periodMs);
    // Housekeeping alone must not keep the process alive (Node's timers, and fake ones, have unref).
    (handle as { unref?: () => void } | undefined)?.unref?.();
    this.handle = handle;
  }

  private async runTasks(): Promise<void> {
    for (const [name, task] of Object.entries(this.options.tasks)) {
      if (!this.running) return;
      try {
        await task(this.options.now());
      } catch (error) {
        // A failure after stop() is the store closing under the task, not news.
        if (this.running) this.options.onError(name, error);
      }
    }
  }
}
