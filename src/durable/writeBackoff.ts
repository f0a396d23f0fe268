import { displayText } from "../errors/displayText.js";
import type { RuntimeTimers } from "./timers.js";

export interface WriteBackoffOptions {
  timers: RuntimeTimers;
  /** Told of each failed write round, with the wait before the next try. */
  warn: (message: string) => void;
  /** Runs once when a wait ends, before its waiters go on: writes everything that failed again. */
  retry: () => void;
}

/**
 * The wait between a failed snapshot write (disk full, a directory gone) and its retry. Every write
 * that fails while a wait is under way joins it, so a thousand failed actors make one retry round, not
 * a thousand: 100 ms, doubling up to 5 s, back to 100 ms after a write lands.
 */
export class WriteBackoff {
  /** Consecutive failed rounds, for the backoff. */
  private failures = 0;
  private wait: { waited: Promise<void>; end: () => void } | undefined;

  constructor(private readonly options: WriteBackoffOptions) {}

  /** Resolves once the round's wait is over and the retry round has been queued. */
  after(error: unknown): Promise<void> {
    if (this.wait !== undefined) return this.wait.waited;
    const delayMs = Math.min(5_000, 100 * 2 ** Math.min(this.failures, 6));
    this.failures += 1;
    this.options.warn(
      `snapshots could not be written (${displayText(error)}); retrying in ${delayMs} ms, answers wait`,
    );
    let resolveWait = (): void => {};
    const waited = new Promise<void>((resolve) => (resolveWait = resolve));
    const handle = this.options.timers.setTimeout(() => this.endNow(), delayMs);
    this.wait = {
      waited,
      end: () => {
        this.options.timers.clearTimeout(handle);
        this.options.retry();
        resolveWait();
      },
    };
    return waited;
  }

  /** A write landed: the next failure waits the shortest time again. */
  succeeded(): void {
    this.failures = 0;
  }

  /** Ends the wait at once (its time is up, or the host stops and the waiters must hear so). */
  endNow(): void {
    const wait = this.wait;
    this.wait = undefined;
    wait?.end();
  }
}
