import { InvalidInputError, requireObject } from "../InvalidInputError.js";

export const IDEMPOTENCY_TTL_MS = 5 * 60_000;

interface Entry<T> {
  promise: Promise<T>;
  createdAt: number;
  settled: boolean;
}

/** One run per key: repeats within the TTL, or while it runs, share its promise; a failure is forgotten. */
export class IdempotencyCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private callsSinceSweep = 0;

  constructor(options: { ttlMs?: number; now?: () => number } = {}) {
    requireObject("IdempotencyCache", "options", options);
    this.ttlMs = options.ttlMs ?? IDEMPOTENCY_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  run(key: string, operation: () => T | Promise<T>): Promise<T> {
    if (typeof key !== "string" || key === "") {
      return Promise.reject(new InvalidInputError("IdempotencyCache.run", "key", "a non-empty string", key));
    }
    if (typeof operation !== "function") {
      return Promise.reject(
        new InvalidInputError("IdempotencyCache.run", "operation", "a function", operation),
      );
    }
    const now = this.now();
    if (++this.callsSinceSweep >= 1_000) this.sweep(now);
    const existing = this.entries.get(key);
    if (existing !== undefined && !this.expired(existing, now)) return existing.promise;

    const entry: Entry<T> = { promise: Promise.resolve().then(operation), createdAt: now, settled: false };
    this.entries.set(key, entry);
    entry.promise.then(
      () => {
        entry.settled = true;
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.promise;
  }

  /** Whether `key` would be answered from the cache now. */
  has(key: string): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && !this.expired(entry, this.now());
  }

  get size(): number {
    return this.entries.size;
  }

  private expired(entry: Entry<T>, now: number): boolean {
    // A call still running is never expired: its duplicates must share it, however long it takes.
    return entry.settled && now - entry.createdAt >= this.ttlMs;
  }

  private sweep(now: number): void {
    this.callsSinceSweep = 0;
    for (const [key, entry] of this.entries) if (this.expired(entry, now)) this.entries.delete(key);
  }
}
