export interface ThreadStateSaverOptions {
  /** Saves the changes made up to the call; resolves once they are on disk. */
  write: () => Promise<void>;
  /** Told when a write fails; the next change (or stop) writes again. */
  onError: (error: unknown) => void;
}

/**
 * Saves the runtime's thread state in the background: one write at a time, changes coalesced (those
 * made while a write is in flight are saved together by the next one, a microtask after the change
 * otherwise). No caller waits on these writes but one that asks to with flush(); nothing waits on a
 * timer.
 */
export class ThreadStateSaver {
  private changed = false;
  private scheduled = false;
  private stopped = false;
  /** The write loop, while it runs. */
  private writing: Promise<void> | undefined;
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

  /** Resolves once no write is in flight or queued (a change noted this tick included). */
  async idle(): Promise<void> {
    while (this.scheduled || this.writing !== undefined) {
      if (this.writing !== undefined) await this.writing;
      else await Promise.resolve();
    }
  }

  /** Saves the changes made so far; resolves once a write started after the call lands, rejects if it failed. */
  flush(): Promise<void> {
    const landed = new Promise<void>((resolve, reject) => this.flushWaiters.push({ resolve, reject }));
    void this.save();
    return landed;
  }

  /** Writes what waits, and ignores later changes. Resolves once written. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.save();
  }

  /** Resolves once the changes made so far are on disk (or their write failed and was reported). */
  private save(): Promise<void> {
    this.changed = true;
    this.writing ??= this.writeWhileChanged();
    return this.writing;
  }

  private async writeWhileChanged(): Promise<void> {
    try {
      while (this.changed) {
        this.changed = false;
        const waiters = this.flushWaiters.splice(0);
        const error = await this.writeOnce();
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
}
