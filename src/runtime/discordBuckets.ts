import { classifyDiscordFailure, type RateLimiter } from "../policies/index.js";
import type { DiscordRateLimit } from "./ports.js";

/**
 * Runs a Discord request through the runtime's limiter on `key`, and keeps that key to what Discord
 * said: when the answer leaves its bucket empty, or Discord refused the request with a 429, nothing
 * more starts on `key` until the reset. The configured limits are the most the runtime sends; Discord's
 * buckets, which it may change at any time, can be stricter (messages: 5 per 5 s per channel).
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
