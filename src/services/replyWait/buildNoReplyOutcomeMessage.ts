import { asText, cutText } from "../InvalidInputError.js";

export interface NoReplyOutcomeParams {
  waitStatus?: string;
  waitError?: string;
  maxWaitExceeded?: boolean;
  maxWaitMs?: number;
}

const PREFIX = "[outcome] blocked: 응답을 받지 못했습니다";

/** The message recorded when no reply came, most specific reason first. */
export function buildNoReplyOutcomeMessage(p: NoReplyOutcomeParams = {}): string {
  const reason = noReplyReason(p ?? {});
  return reason === undefined ? PREFIX : `${PREFIX} (${reason})`;
}

function noReplyReason(p: NoReplyOutcomeParams): string | undefined {
  const waitError = asText(p.waitError)?.trim();
  if (waitError) return cutText(waitError, 500);
  if (p.waitStatus === "not_found") return "실행 상태를 찾을 수 없음";
  if (p.waitStatus === "error") return "실행 오류";
  if (p.maxWaitExceeded === true) {
    const maxWaitMs = typeof p.maxWaitMs === "number" && p.maxWaitMs > 0 ? p.maxWaitMs : 300_000;
    return `대기 시간 ${maxWaitMs / 1000}초 초과`;
  }
  return undefined;
}
