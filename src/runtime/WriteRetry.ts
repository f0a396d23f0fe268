import { displayText } from "../services/index.js";
import type { RuntimeTimers } from "./ports.js";

export interface WriteRetryOptions {
  timers: RuntimeTimers;
  /** Told of each failed write round, with the wait before the next try. */
  warn: (message: string) => void;
  /** A new write of everything put so far (the store's flush), or undefined when the store is gone. */
  retry: () => Promise<void> | undefined;
  /** True once the runtime stops: waiting ends and the last failure is the caller's answer. */
  stopped: () => boolean;
}

/**
 * Makes the runtime's answers wait until what they report is on disk. A failed write (disk full, a
 * directory gone) is retried with backoff until one lands, so answers and side effects wait rather than
 * act on state a crash would lose. All waiters share one retry wait: 100 ms, doubling up to 5 s.
 */
export class WriteRetry {
  /** Consecutive failed rounds, for the backoff. */
  private failures = 0;
  private wait: { waited: Promise<void>; end: () => void } | undefined;

  constructor(private readonly options: WriteRetryOptions) {}

  /** Resolves once `write` (a put or flush) or a retry of it is on disk; rejects only if the runtime stops meanwhile. */
  async landed(write: Promise<void>): Promise<void> {
    for (;;) {
      try {
        await write;
        this.failures = 0;
        return;
      } catch (error) {
        if (this.options.stopped()) throw error;
        await this.delay(error);
        const again = this.options.stopped() ? undefined : this.options.retry();
        if (again === undefined) throw error;
        write = again;
      }
    }
  }

  /** Ends the retry wait at once (its time is up, or the runtime stops and the waiters must hear so). */
  retryNow(): void {
    const wait = this.wait;
    this.wait = undefined;
    wait?.end();
  }

  private delay(error: unknown): Promise<void> {
    if (this.wait !== undefined) return this.wait.waited;
    const delayMs = Math.min(5_000, 100 * 2 ** Math.min(this.failures, 6));
    this.failures += 1;
    this.options.warn(
      `snapshots could not be written (${displayText(error)}); retrying in ${delayMs} ms, answers wait`,
    );
    let end = (): void => {};
    const waited = new Promise<void>((resolveDelay) => (end = resolveDelay));
    const handle = this.options.timers.setTimeout(() => this.retryNow(), delayMs);
    this.wait = { waited, end: () => (this.options.timers.clearTimeout(handle), end()) };
    return waited;
  }
}
