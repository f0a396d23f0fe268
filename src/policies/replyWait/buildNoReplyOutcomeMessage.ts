import { asText, cutText } from "../InvalidInputError.js";
import { ko } from "../messages/ko.js";
import { renderMessage } from "../messages/messageCatalog.js";
import type { MessageCatalog } from "../messages/messageKeys.js";

export interface NoReplyOutcomeParams {
  waitStatus?: string;
  waitError?: string;
  maxWaitExceeded?: boolean;
  maxWaitMs?: number;
}

/**
 * The message recorded when no reply came, most specific reason first:
 * `[outcome] blocked: 응답을 받지 못했습니다 (…)` in Korean by default.
 */
export function buildNoReplyOutcomeMessage(
  p: NoReplyOutcomeParams = {},
  catalog: MessageCatalog = ko,
): string {
  const reason = noReplyReason(p ?? {}, catalog);
  return reason === undefined
    ? renderMessage(catalog, "noReplyOutcome", {})
    : renderMessage(catalog, "noReplyOutcomeWithReason", { reason });
}

function noReplyReason(p: NoReplyOutcomeParams, catalog: MessageCatalog): string | undefined {
  const waitError = asText(p.waitError)?.trim();
  if (waitError) return cutText(waitError, 500);
  if (p.waitStatus === "not_found") return renderMessage(catalog, "noReplyNotFound", {});
  if (p.waitStatus === "error") return renderMessage(catalog, "noReplyRunError", {});
  if (p.maxWaitExceeded === true) {
    const maxWaitMs = typeof p.maxWaitMs === "number" && p.maxWaitMs > 0 ? p.maxWaitMs : 300_000;
    return renderMessage(catalog, "noReplyWaitExceeded", { seconds: maxWaitMs / 1000 });
  }
  return undefined;
}
