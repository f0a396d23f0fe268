import { requireWholeNumber } from "../InvalidInputError.js";

export type DiscordFailureKind = "permission" | "not_found" | "rate_limit" | "transient" | "invalid";

/** What a failed Discord call means for the collaboration: retry it, escalate it to a human, or reject it. */
export interface DiscordFailure {
  kind: DiscordFailureKind;
  retryable: boolean;
  escalate: boolean;
  retryAfterMs?: number;
}

/** Retries of a transient failure after the first one, waiting 1 s, 2 s, 4 s. */
export const DISCORD_TRANSIENT_MAX_RETRIES = 3;
/** The wait on a 429 that did not say how long: one second, Discord's usual bucket reset. */
export const DEFAULT_DISCORD_RETRY_AFTER_MS = 1_000;

/** The wait before transient retry number `retry` (1-based): 1 s, 2 s, 4 s. */
export function discordTransientBackoffMs(retry: number): number {
  requireWholeNumber("discordTransientBackoffMs", "retry", retry, 1);
  return 1_000 * 2 ** (Math.min(retry, DISCORD_TRANSIENT_MAX_RETRIES) - 1);
}

// Discord JSON error codes that mean the same as their status, for errors that lost the status.
const PERMISSION_CODES = new Set([50001, 50013]);
const NOT_FOUND_CODES = new Set([10003, 10008, 10004, 10013]);

/**
 * Classifies a failed Discord call (a discord.js error, or anything with a `status`). Only permission
 * and not_found escalate to a human; without a usable status (a timeout, junk) it is transient.
 */
export function classifyDiscordFailure(err: unknown): DiscordFailure {
  const e = (typeof err === "object" && err !== null ? err : {}) as Record<string, unknown>;
  const status = statusOf(e.status);
  const code = typeof e.code === "number" ? e.code : undefined;

  if (status === 429 || isRateLimitError(e)) {
    return { kind: "rate_limit", retryable: true, escalate: false, retryAfterMs: retryAfterMsOf(e) };
  }
  if (status === 403 || (status === undefined && code !== undefined && PERMISSION_CODES.has(code))) {
    return { kind: "permission", retryable: false, escalate: true };
  }
  if (status === 404 || (status === undefined && code !== undefined && NOT_FOUND_CODES.has(code))) {
    return { kind: "not_found", retryable: false, escalate: true };
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return { kind: "invalid", retryable: false, escalate: false };
  }
  return { kind: "transient", retryable: true, escalate: false };
}

/** A status is a whole number from 100 to 599 (a numeric string counts); anything else is none. */
function statusOf(value: unknown): number | undefined {
  const n = typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n >= 100 && n <= 599 ? n : undefined;
}

// discord.js's RateLimitError has no status: it is recognised by its name or its shape.
function isRateLimitError(e: Record<string, unknown>): boolean {
  return e.name === "RateLimitError" || (typeof e.retryAfter === "number" && "timeToReset" in e);
}

/** discord.js gives `retryAfter` in milliseconds; the raw API body gives `retry_after` in seconds. */
function retryAfterMsOf(e: Record<string, unknown>): number {
  const positive = (n: unknown) => (typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined);
  const raw = (e.rawError ?? e.body) as Record<string, unknown> | undefined;
  const ms =
    positive(e.retryAfter) ??
    secondsToMs(positive(e.retry_after)) ??
    secondsToMs(positive(typeof raw === "object" && raw !== null ? raw.retry_after : undefined)) ??
    secondsToMs(positive(Number(headerOf(e.headers, "retry-after"))));
  return ms === undefined ? DEFAULT_DISCORD_RETRY_AFTER_MS : Math.ceil(ms);
}

function secondsToMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1_000;
}

function headerOf(headers: unknown, name: string): unknown {
  if (typeof headers !== "object" || headers === null) return undefined;
  const get = (headers as { get?: unknown }).get;
  if (typeof get === "function") return get.call(headers, name);
  return (headers as Record<string, unknown>)[name];
}
