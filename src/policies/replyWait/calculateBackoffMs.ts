import { InvalidInputError, requireWholeNumber } from "../InvalidInputError.js";
import type { A2AErrorInfo } from "./A2AErrorInfo.js";

export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
  /** A source of numbers in [0, 1); injected so tests and replays are deterministic. */
  random?: () => number;
}

/**
 * How long to wait before retry number `attempt + 1`: the server's `retryAfterMs` when it gave one,
 * else `min(base·2^attempt, max)` with ±25% jitter so many waiting flows do not retry in step.
 */
export function calculateBackoffMs(
  attempt: number,
  info: Pick<A2AErrorInfo, "retryAfterMs">,
  opts: BackoffOptions = {},
): number {
  requireWholeNumber("calculateBackoffMs", "attempt", attempt);
  const options = opts ?? {};
  const retryAfterMs = info?.retryAfterMs;
  if (typeof retryAfterMs === "number" && Number.isFinite(retryAfterMs) && retryAfterMs > 0)
    return retryAfterMs;
  const baseMs = requireWholeNumber("calculateBackoffMs", "baseMs", options.baseMs ?? 2_000, 1);
  const maxMs = requireWholeNumber("calculateBackoffMs", "maxMs", options.maxMs ?? 60_000, 1);
  const random = options.random ?? Math.random;
  if (typeof random !== "function")
    throw new InvalidInputError("calculateBackoffMs", "random", "a function", random);
  const r = random();
  if (typeof r !== "number" || !(r >= 0 && r <= 1)) {
    throw new InvalidInputError("calculateBackoffMs", "random()", "a number in [0, 1]", r);
  }
  return Math.floor(Math.min(baseMs * 2 ** attempt, maxMs) * (0.75 + r * 0.5));
}
