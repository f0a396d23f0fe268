import type { RuntimeTimers } from "../runtime/index.js";

/**
 * A clock and timers that move only when told: `advance` fires every timer due in the span in due order
 * (ties in the order they were set), awaiting `settle` before each one and once at the end, so each
 * timer's consequences land, and may set new timers, before the next one fires.
 */
export class VirtualClock implements RuntimeTimers {
  private time: number;
  private readonly queue = new Map<number, { at: number; fn: () => void }>();
  private nextHandle = 1;
  private advancing = false;

  constructor(start: number) {
    this.time = start;
  }

  readonly now = (): number => this.time;

  setTimeout(fn: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    this.queue.set(handle, { at: this.time + Math.max(0, ms), fn });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.queue.delete(handle as number);
  }

  /** Timers set and not fired yet. */
  get pending(): number {
    return this.queue.size;
  }

  /** Moves the clock `ms` forward, firing each timer due on the way at its due time. */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
      throw new TypeError(`advance: ms must be a finite number of milliseconds ≥ 0, got ${String(ms)}`);
    }
    if (this.advancing)
      throw new Error("advance: the clock is already advancing; await the earlier call first");
    this.advancing = true;
    try {
      const end = this.time + ms;
      for (;;) {
        await settle();
        const next = this.nextDue(end);
        if (next === undefined) break;
        this.queue.delete(next.handle);
        this.time = Math.max(this.time, next.at);
        next.fn();
      }
      this.time = end;
    } finally {
      this.advancing = false;
    }
  }

  private nextDue(end: number): { handle: number; at: number; fn: () => void } | undefined {
    let best: { handle: number; at: number; fn: () => void } | undefined;
    for (const [handle, t] of this.queue) {
      if (t.at <= end && (best === undefined || t.at < best.at)) best = { handle, ...t };
    }
    return best;
  }
}
