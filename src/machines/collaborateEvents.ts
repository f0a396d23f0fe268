import type { A2AEventOf } from "../policies/index.js";
import type { CollaborateContext } from "./collaborateContext.js";
import type { MentionOutput } from "./mentionMachine.js";
import { defined } from "./schemas.js";

// The a2a.collaborate.* events (requested, sent, failed, responded) a collaboration emits, from its context.

export type CollaborateEmitted =
  | A2AEventOf<"a2a.collaborate.requested">
  | A2AEventOf<"a2a.collaborate.sent">
  | A2AEventOf<"a2a.collaborate.failed">
  | A2AEventOf<"a2a.collaborate.responded">;

/** The failures that call a human (403 and 404). */
const ESCALATING_CODES: ReadonlySet<string> = new Set(["discord_permission", "discord_not_found"]);

/** The envelope every a2a.collaborate.* event shares. */
function envelope(context: CollaborateContext, ts: number) {
  return { ts, fromAgent: context.fromAgentId, toAgent: context.targetAgentId };
}

/** Who collaborates, and in which thread once it is known. */
function parties(context: CollaborateContext) {
  return {
    collaborationId: context.collaborationId,
    fromAgentId: context.fromAgentId,
    toAgentId: context.targetAgentId,
    ...defined({ threadId: context.resolvedThreadId }),
  };
}

export function requestedEvent(context: CollaborateContext): CollaborateEmitted {
  return {
    type: "a2a.collaborate.requested",
    ...envelope(context, context.startedAt),
    data: { ...parties(context), ...(context.threadId ? { threadId: context.threadId } : {}) },
  };
}

export function sentEvent(context: CollaborateContext): CollaborateEmitted {
  return {
    type: "a2a.collaborate.sent",
    ...envelope(context, context.sentAt ?? context.lastAt),
    data: {
      ...parties(context),
      ...defined({
        parentChannelId: context.parentChannelId,
        mode: context.mode,
        messageId: context.messageId,
      }),
      mentionId: context.collaborationId,
    },
  };
}

/**
 * A rejection or a failure, at the time it happened. A 403/404 escalates: `notified` says whether its
 * failure notice was posted, and `noticeErrorCode`/`noticeErrorMessage` why not when the post failed.
 */
export function failedEvent(context: CollaborateContext): CollaborateEmitted {
  const escalate = context.error !== undefined && ESCALATING_CODES.has(context.error.code);
  return {
    type: "a2a.collaborate.failed",
    ...envelope(context, context.failedOn?.at ?? context.lastAt),
    data: {
      ...parties(context),
      attempt: context.failedOn?.attempt ?? context.retries + 1,
      ...defined({ errorCode: context.error?.code, errorMessage: context.error?.message }),
      escalate,
      ...(escalate ? { notified: context.noticeMessageId !== undefined } : {}),
      ...(context.noticeError === undefined
        ? {}
        : { noticeErrorCode: context.noticeError.code, noticeErrorMessage: context.noticeError.message }),
    },
  };
}

export function respondedEvent(context: CollaborateContext, output: MentionOutput): CollaborateEmitted {
  return {
    type: "a2a.collaborate.responded",
    ...envelope(context, output.respondedAt ?? context.lastAt),
    data: { ...parties(context), mentionId: context.collaborationId, attempt: output.attempts },
  };
}
