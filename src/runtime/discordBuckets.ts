import { classifyDiscordFailure, type RateLimiter } from "../policies/index.js";
import type { DiscordRateLimit } from "./ports.js";

/**
 * A Discord request through the limiter on `key`; an emptied bucket or a 429 holds `key` until the
 * reset (Discord's buckets can be stricter than the configured limits).
 */
export function throughDiscordBucket<T extends { rateLimit?: DiscordRateLimit | undefined }>(
  limiter: RateLimiter,
  key: string,
  request: () => Promise<T>,
): Promise<T> {
  return limiter.schedule(key, async () => {
    try {
      const answer = await request();
      const bucket = answer.rateLimit;
      if (bucket !== undefined && bucket.remaining <= 0) limiter.holdFor(key, bucket.resetAfterMs);
      return answer;
    } catch (error) {
      const failure = classifyDiscordFailure(error);
      if (failure.kind === "rate_limit" && failure.retryAfterMs !== undefined) {
        limiter.holdFor(key, failure.retryAfterMs);
      }
      throw error;
    }
  });
}
