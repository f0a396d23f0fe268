import {
  DISCORD_TRANSIENT_MAX_RETRIES,
  type DiscordFailure,
  type DiscordFailureKind,
  discordTransientBackoffMs,
} from "./classifyDiscordFailure.js";

// The retry rule of every Discord post of a collaboration: 403/404 fail at once; 429, 5xx and timeouts
// are retried up to 3 times.

/** How a Discord failure is reported (`discordSend`'s error codes, event `errorCode`s). */
export type DiscordErrorCode =
  "discord_permission" | "discord_not_found" | "discord_invalid" | "discord_unavailable";

const ERROR_CODES: Record<DiscordFailureKind, DiscordErrorCode> = {
  permission: "discord_permission",
  not_found: "discord_not_found",
  invalid: "discord_invalid",
  rate_limit: "discord_unavailable",
  transient: "discord_unavailable",
};

/** The error code of a failure kind: a 429 or 5xx that outlived its retries is `discord_unavailable`. */
export function discordErrorCode(kind: DiscordFailureKind): DiscordErrorCode {
  return ERROR_CODES[kind];
}

/** A failure as it is reported once its retries are over. */
export function discordError(failure: { kind: DiscordFailureKind; message: string } | undefined): {
  code: DiscordErrorCode;
  message: string;
} {
  return {
    code: ERROR_CODES[failure?.kind ?? "transient"],
    message: failure?.message ?? "Discord call failed",
  };
}

/** Whether a call that failed so may be tried again after `retries` retries: 429 and 5xx, up to 3 times. */
export function discordRetryAllowed(failure: DiscordFailure | undefined, retries: number): boolean {
  return failure?.retryable === true && retries < DISCORD_TRANSIENT_MAX_RETRIES;
}

/** The wait before the next retry: Discord's Retry-After on a 429, else 1 s, 2 s, 4 s (`retries` made so far). */
export function discordRetryWaitMs(failure: DiscordFailure | undefined, retries: number): number {
  return failure?.kind === "rate_limit" && failure.retryAfterMs !== undefined
    ? failure.retryAfterMs
    : discordTransientBackoffMs(retries + 1);
}
