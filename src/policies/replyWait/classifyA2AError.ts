import { displayText } from "../../errors/displayText.js";
import { asText, cutText, requireWholeNumber } from "../InvalidInputError.js";
import { A2AErrorCategory, type A2AErrorCode, type A2AErrorInfo } from "./A2AErrorInfo.js";
import { extractRetryAfterMs } from "./extractRetryAfterMs.js";
import { ko } from "../messages/ko.js";
import { renderMessage } from "../messages/messageCatalog.js";
import type { MessageCatalog, PlainMessageKey } from "../messages/messageKeys.js";

// Numeric codes count only when no digit touches them: "HTTP_503" matches, "processed 1500 items" not.
const RATE_LIMIT = /rate[ _-]?limit|(?<!\d)429(?!\d)|too many/i;
const CONTEXT_EXCEEDED = /context[ _-]?length|token[ _-]?limit|too[ _-]?long/i;
const SERVER_OVERLOAD = /overload|server[ _-]?error|(?<!\d)(?:529|500|502|503)(?!\d)/i;

const DEFAULT_RATE_LIMIT_WAIT_MS = 10_000;
const MAX_MESSAGE_LENGTH = 1_000;

export interface ClassifyA2AErrorParams {
  waitStatus?: string;
  waitError?: string;
  gatewayError?: Error;
  /** Retries already made (0 on the first failure). */
  attempt: number;
}

const { TRANSIENT, PERMANENT, CONDITIONAL } = A2AErrorCategory;

/** Each error code's class, whether it is retried, and its own limit of tries (the first included). */
const CLASSES: Record<A2AErrorCode, Pick<A2AErrorInfo, "category" | "retryable" | "maxAttempts">> = {
  gateway_connection: { category: TRANSIENT, retryable: true, maxAttempts: 3 },
  session_not_found: { category: CONDITIONAL, retryable: true, maxAttempts: 2 },
  session_gone: { category: PERMANENT, retryable: false, maxAttempts: 2 },
  rate_limit: { category: TRANSIENT, retryable: true, maxAttempts: 3 },
  context_exceeded: { category: PERMANENT, retryable: false, maxAttempts: 1 },
  server_overload: { category: TRANSIENT, retryable: true, maxAttempts: 3 },
  unknown_error: { category: PERMANENT, retryable: false, maxAttempts: 1 },
  wait_timeout: { category: TRANSIENT, retryable: true, maxAttempts: 2 },
};

/** Classifies a failed wait for a reply; the first rule that matches wins. Messages are in Korean by default. */
export function classifyA2AError(p: ClassifyA2AErrorParams, catalog: MessageCatalog = ko): A2AErrorInfo {
  const attempt = requireWholeNumber("classifyA2AError", "attempt", p?.attempt);
  const waitStatus = asText(p.waitStatus);
  const waitError = asText(p.waitError)?.trim() || undefined;
  const text = (key: PlainMessageKey) => renderMessage(catalog, key, {});
  const info = (code: A2AErrorCode, message: string, extra: { retryAfterMs?: number } = {}): A2AErrorInfo => {
    const { category, retryable, maxAttempts } = CLASSES[code];
    return { category, code, message, retryable, ...extra, maxAttempts, attempt };
  };

  if (p.gatewayError != null) {
    const message = renderMessage(catalog, "errorGatewayConnection", { reason: displayText(p.gatewayError) });
    return info("gateway_connection", cutText(message, MAX_MESSAGE_LENGTH));
  }
  if (waitStatus === "not_found") {
    return info(attempt <= 1 ? "session_not_found" : "session_gone", text("errorSessionNotFound"));
  }
  if (waitError !== undefined && RATE_LIMIT.test(waitError)) {
    const retryAfterMs = extractRetryAfterMs(waitError) ?? DEFAULT_RATE_LIMIT_WAIT_MS;
    return info("rate_limit", text("errorRateLimit"), { retryAfterMs });
  }
  if (waitError !== undefined && CONTEXT_EXCEEDED.test(waitError)) {
    return info("context_exceeded", text("errorContextExceeded"));
  }
  if (waitError !== undefined && SERVER_OVERLOAD.test(waitError)) {
    return info("server_overload", text("errorServerOverload"));
  }
  if (waitStatus === "error") {
    return info("unknown_error", cutText(waitError ?? text("errorUnknown"), MAX_MESSAGE_LENGTH));
  }
  return info("wait_timeout", text("errorWaitTimeout"));
}

/** Error codes whose retry resends the message (a new run, same idempotency key); the rest wait again. */
export function retryResends(info: Pick<A2AErrorInfo, "code">): boolean {
  return info?.code === "wait_timeout" || info?.code === "session_not_found";
}

/** Whether another retry is allowed after this failure. */
export function canRetry(info: A2AErrorInfo, retryEnabled: boolean): boolean {
  if (retryEnabled !== true || typeof info !== "object" || info === null || info.retryable !== true)
    return false;
  return (
    typeof info.attempt === "number" &&
    typeof info.maxAttempts === "number" &&
    info.attempt < info.maxAttempts - 1
  );
}

/** The error with its class's `maxAttempts` capped by `retry.maxAttempts`, when one is configured. */
export function capMaxAttempts(info: A2AErrorInfo, maxAttempts: number | undefined): A2AErrorInfo {
  return maxAttempts === undefined || info.maxAttempts <= maxAttempts ? info : { ...info, maxAttempts };
}
