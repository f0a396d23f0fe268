// Snowflake ids for the Discord emulator: the same layout as Discord's (ms since 2015-01-01 << 22,
// worker, process, increment), so ids made now have 19 digits and sort by creation time.

export const DISCORD_EPOCH_MS = 1_420_070_400_000n;

const SNOWFLAKE_PATTERN = /^\d{17,19}$/;
const WORKER_ID = 1n;

/** True when `id` looks like a snowflake the emulator accepts for its guild and users (17–19 digits). */
export function isSnowflake(id: unknown): id is string {
  return typeof id === "string" && SNOWFLAKE_PATTERN.test(id);
}

/** Makes strictly increasing snowflakes; `now` is read for every id (vitest fake timers move it). */
export class SnowflakeGenerator {
  private increment = 0n;
  private lastMs = -1n;

  constructor(private readonly now: () => number = Date.now) {}

  next(): string {
    let ms = BigInt(this.now()) - DISCORD_EPOCH_MS;
    if (ms < this.lastMs) ms = this.lastMs;
    if (ms === this.lastMs) {
      this.increment += 1n;
      if (this.increment > 0xfffn) {
        ms += 1n;
        this.increment = 0n;
      }
    } else {
      this.increment = 0n;
    }
    this.lastMs = ms;
    return ((ms << 22n) | (WORKER_ID << 17n) | this.increment).toString();
  }
}

/** The creation time (ms since the Unix epoch) encoded in a snowflake. */
export function snowflakeTimestamp(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS);
}
