import { asText } from "../InvalidInputError.js";

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

// One pass, no nested quantifiers: safe on megabyte-long error texts.
// Group 1: a unit glued to the key (`retry_after_ms`), 2: the number, 3: the unit after the number.
const RETRY_AFTER =
  /(?:retry[ _-]?after(?:[ _-]?(ms|millis(?:econds?)?|milliseconds?|s|secs?|seconds?))?|(?:try|retry)(?:\s+again)?\s+in)\s*[:=]?\s*(\d+(?:\.\d+)?)\s*(ms|msecs?|millis(?:econds?)?|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)?(?![a-z])/i;

/**
 * The wait a rate-limit message asks for, in milliseconds: `retry after 30s`, `Retry-After: 12`
 * (a bare number is seconds), `retry_after_ms=1500`, `try again in 20 seconds`, `retry after 2 minutes`…
 */
export function extractRetryAfterMs(text: string): number | undefined {
  const source = asText(text);
  if (source === undefined) return undefined;
  const match = RETRY_AFTER.exec(source);
  if (!match) return undefined;
  const value = Number(match[2]);
  const unit = unitOf(match[3] ?? match[1] ?? "s");
  return Math.round(value * UNIT_MS[unit]);
}

function unitOf(word: string): keyof typeof UNIT_MS {
  const w = word.toLowerCase();
  if (w.startsWith("ms") || w.startsWith("milli") || w.startsWith("msec")) return "ms";
  if (w.startsWith("m")) return "m";
  if (w.startsWith("h")) return "h";
  return "s";
}
