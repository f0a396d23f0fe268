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
  private scheduled = false;
  private stopped = false;
  /** The latest write queued: it settles after every write queued before it. */
  private last: Promise<void> = Promise.resolve();
  /** A write queued that has not started yet: changes and flushes meanwhile join it. */
  private next: Promise<void> | undefined;

  constructor(private readonly options: ThreadStateSaverOptions) {}

  /** Notes a change; it is saved a microtask later, so changes made in the same tick share one write. */
  change(): void {
    if (this.stopped || this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      if (!this.stopped) this.save().catch(() => undefined);
    });
  }

  /** Resolves once no write is in flight or queued (a change noted this tick included). */
  async idle(): Promise<void> {
    for (let seen: Promise<void> | undefined; this.scheduled || seen !== this.last;) {
      seen = this.last;
      await (this.scheduled ? Promise.resolve() : seen);
    }
  }

  /** Saves the changes made so far; resolves once a write started after the call lands, rejects if it failed. */
  flush(): Promise<void> {
    return this.save();
  }

  /** Writes what waits, and ignores later changes. Resolves once written (or its failure reported). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.save().catch(() => undefined);
  }

  /** The next write to start: one after the write in flight, shared by every caller until it starts. */
  private save(): Promise<void> {
    if (this.next !== undefined) return this.next;
    const write = this.last.then(async () => {
      this.next = undefined;
      try {
        await this.options.write();
      } catch (error) {
        this.options.onError(error);
        throw error ?? new Error("the thread state could not be written");
      }
    });
    this.next = write;
    this.last = write.catch(() => undefined);
    return write;
  }
}
