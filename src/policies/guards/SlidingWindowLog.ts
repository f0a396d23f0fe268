/**
 * Per-key timestamps of recent events in a sliding window: at most `limit` per key (older ones never
 * matter again) and idle keys swept now and then, so memory follows the keys active in the last window.
 */
export class SlidingWindowLog {
  private readonly entries = new Map<string, number[]>();
  private recordsSinceSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Events of `key` within the window ending at `now`, oldest first (a copy: recording does not change it). */
  recent(key: string, now: number): readonly number[] {
    const times = this.entries.get(key);
    if (times === undefined) return [];
    const live = times.filter((t) => now - t < this.windowMs);
    if (live.length === 0) this.entries.delete(key);
    else if (live.length !== times.length) this.entries.set(key, [...live]);
    return live;
  }

  record(key: string, at: number): void {
    const times = this.entries.get(key) ?? [];
    times.push(at);
    if (times.length > this.limit) times.splice(0, times.length - this.limit);
    this.entries.set(key, times);
    if (++this.recordsSinceSweep >= 1_000) this.sweep(at);
  }

  get size(): number {
    return this.entries.size;
  }

  sweep(now: number): void {
    this.recordsSinceSweep = 0;
    for (const key of [...this.entries.keys()]) this.recent(key, now);
  }
}
