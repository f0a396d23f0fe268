import type { A2AEvent } from "../policies/index.js";

/** The warning for a reminder, escalation or failure notice Discord refused for good. */
export function deliveryWarning(event: A2AEvent): string | undefined {
  if (event.type === "a2a.mention.escalated" && event.data.failedPost !== undefined) {
    const { mentionId, threadId, failedPost, errorCode, errorMessage } = event.data;
    const outcome = event.data.notified ? "escalated early" : "nobody was notified";
    return `mention ${mentionId}: the ${failedPost} could not be posted in thread ${threadId} (${errorCode}: ${errorMessage}); ${outcome}`;
  }
  if (event.type === "a2a.collaborate.failed" && event.data.noticeErrorCode !== undefined) {
    const { collaborationId, errorCode, noticeErrorCode, noticeErrorMessage } = event.data;
    return `collaboration ${collaborationId} failed (${errorCode}) and its failure notice could not be posted (${noticeErrorCode}: ${noticeErrorMessage}); nobody was notified`;
  }
  return undefined;
}
