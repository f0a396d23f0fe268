import { displayText } from "../../errors/displayText.js";
import { asText, cutText, requireWholeNumber } from "../InvalidInputError.js";
import { A2AErrorCategory, type A2AErrorInfo } from "./A2AErrorInfo.js";
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

/** Classifies a failed wait for a reply; the first rule that matches wins. Messages are in Korean by default. */
export function classifyA2AError(p: ClassifyA2AErrorParams, catalog: MessageCatalog = ko): A2AErrorInfo {
  const attempt = requireWholeNumber("classifyA2AError", "attempt", p?.attempt);
  const waitStatus = asText(p.waitStatus);
  const waitError = asText(p.waitError)?.trim() || undefined;
  const info = (rest: Omit<A2AErrorInfo, "attempt">): A2AErrorInfo => ({ ...rest, attempt });
  const text = (key: PlainMessageKey) => renderMessage(catalog, key, {});

  if (p.gatewayError != null) {
    const reason = displayText(p.gatewayError);
    return info({
      category: A2AErrorCategory.TRANSIENT,
      code: "gateway_connection",
      message: cutText(renderMessage(catalog, "errorGatewayConnection", { reason }), MAX_MESSAGE_LENGTH),
      retryable: true,
      maxAttempts: 3,
    });
  }
  if (waitStatus === "not_found") {
    const first = attempt <= 1;
    return info({
      category: first ? A2AErrorCategory.CONDITIONAL : A2AErrorCategory.PERMANENT,
      code: first ? "session_not_found" : "session_gone",
      message: text("errorSessionNotFound"),
      retryable: first,
      maxAttempts: 2,
    });
  }
  if (waitError !== undefined) {
    if (RATE_LIMIT.test(waitError)) {
      return info({
        category: A2AErrorCategory.TRANSIENT,
        code: "rate_limit",
        message: text("errorRateLimit"),
        retryable: true,
        retryAfterMs: extractRetryAfterMs(waitError) ?? DEFAULT_RATE_LIMIT_WAIT_MS,
        maxAttempts: 3,
      });
    }
    if (CONTEXT_EXCEEDED.test(waitError)) {
      return info({
        category: A2AErrorCategory.PERMANENT,
        code: "context_exceeded",
        message: text("errorContextExceeded"),
        retryable: false,
        maxAttempts: 1,
      });
    }
    if (SERVER_OVERLOAD.test(waitError)) {
      return info({
        category: A2AErrorCategory.TRANSIENT,
        code: "server_overload",
        message: text("errorServerOverload"),
        retryable: true,
        maxAttempts: 3,
      });
    }
  }
  if (waitStatus === "error") {
    return info({
      category: A2AErrorCategory.PERMANENT,
      code: "unknown_error",
      message: cutText(waitError ?? text("errorUnknown"), MAX_MESSAGE_LENGTH),
      retryable: false,
      maxAttempts: 1,
    });
  }
  return info({
    category: A2AErrorCategory.TRANSIENT,
    code: "wait_timeout",
    message: text("errorWaitTimeout"),
    retryable: true,
    maxAttempts: 2,
  });
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
