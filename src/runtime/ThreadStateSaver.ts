import type { RuntimeTimers } from "./ports.js";

export interface ThreadStateSaverOptions {
  /** Writes the whole state as it is at the call; resolves once it is on disk. */
  write: () => Promise<void>;
  /** The least time between the end of one write and the start of the next, while changes keep coming. */
  spacingMs: number;
  now: () => number;
  timers: RuntimeTimers;
  /** Told when a write fails; the next change (or stop) writes again. */
  onError: (error: unknown) => void;
}

/**
 * Saves the runtime's thread state (threads.json) durably and cheaply: one write at a time, changes
 * coalesced (those made while a write is in flight or waits are saved together by the next one), and
 * under a burst at most one write per `spacingMs`, because each write stringifies the whole state. A
 * change after a quiet spell is written at once. No caller's answer waits on these writes; `stop()`
 * skips the spacing and writes what waits.
 */
export class ThreadStateSaver {
  private changed = false;
  private scheduled = false;
  private stopped = false;
  /** The write loop, while it runs (pauses included). */
  private writing: Promise<void> | undefined;
  /** The write in flight, if any. */
  private inFlight: Promise<void> | undefined;
  /** When the last write ended (on the injected clock), for the spacing. */
  private lastWriteEnd = Number.NEGATIVE_INFINITY;
  private pause: { handle: unknown; end: () => void } | undefined;
  /** Callers of flush(), told by the next write that starts. */
  private flushWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];

  constructor(private readonly options: ThreadStateSaverOptions) {}

  /** Notes a change; it is saved a microtask later, so changes made in the same tick share one write. */
  change(): void {
    if (this.stopped || this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      if (!this.stopped) void this.save();
    });
  }

  /**
   * Resolves once no write is in flight and none is due now. A change waiting out the spacing is
   * due later, on the timers: advance them (or call stop()) to have it written.
   */
  async idle(): Promise<void> {
    while (this.inFlight !== undefined) await this.inFlight;
  }

  /**
   * Writes the state as it is now without waiting out the spacing (a caller waits on it). Resolves once
   * that write is on disk; rejects with its error if it failed.
   */
  flush(): Promise<void> {
    const landed = new Promise<void>((resolve, reject) => this.flushWaiters.push({ resolve, reject }));
    this.endPause();
    void this.save();
    return landed;
  }

  /** Ends the spacing, writes the state as it is now, and ignores later changes. Resolves once written. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.endPause();
    await this.save();
  }

  /** Resolves once the state as it is now is on disk (or its write failed and was reported). */
  private save(): Promise<void> {
    this.changed = true;
    this.writing ??= this.writeWhileChanged();
    return this.writing;
  }

  private async writeWhileChanged(): Promise<void> {
    try {
      while (this.changed) {
        const wait = this.lastWriteEnd + this.options.spacingMs - this.options.now();
        if (wait > 0 && !this.stopped && this.flushWaiters.length === 0) await this.pauseFor(wait);
        this.changed = false;
        const waiters = this.flushWaiters.splice(0);
        const written = this.writeOnce();
        this.inFlight = written.then(() => undefined);
        const error = await written;
        this.inFlight = undefined;
        this.lastWriteEnd = this.options.now();
        for (const waiter of waiters) {
          if (error === undefined) waiter.resolve();
          else waiter.reject(error);
        }
      }
    } finally {
      // Cleared with the loop's last check, so a change cannot slip in between and go unwritten.
      this.writing = undefined;
    }
  }

  /** Resolves with the write's error, if it failed (reported to onError too). */
  private async writeOnce(): Promise<unknown> {
    try {
      await this.options.write();
      return undefined;
    } catch (error) {
      this.options.onError(error);
      return error ?? new Error("the thread state could not be written");
    }
  }

  private pauseFor(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const handle = this.options.timers.setTimeout(() => this.endPause(), ms);
      this.pause = { handle, end: resolve };
    });
  }

  private endPause(): void {
    const pause = this.pause;
    this.pause = undefined;
    if (pause === undefined) return;
    this.options.timers.clearTimeout(pause.handle);
    pause.end();
  }
}
