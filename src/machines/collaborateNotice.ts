import { type CollaborateContext, noticeChannel } from "./collaborateContext.js";
import type { PostMessageInput } from "./discordActors.js";
import { defined } from "./schemas.js";

/**
 * The post that tells a human about a 403/404: in the escalation channel, by the
 * requester's bot, pinging only `escalationMentionId`. Its nonce key is fixed, so a re-run posts once.
 */
export function failureNoticeInput(context: CollaborateContext): PostMessageInput {
  const human = context.mention.escalationMentionId;
  const channelId = context.resolvedThreadId ?? context.parentChannelId;
  return {
    asAgentId: context.fromAgentId,
    channelId: noticeChannel(context) as string,
    text: {
      kind: "failureNotice",
      params: {
        fromName: context.fromName,
        toName: context.toName ?? context.targetAgentId,
        errorCode: context.error?.code ?? "discord_unavailable",
        errorMessage: context.error?.message ?? "",
        ...defined({ channelId }),
        originalText: context.message,
        ...defined({ escalationMentionId: human }),
      },
    },
    mentionUserIds: human === undefined ? [] : [human],
    nonceKey: `${context.collaborationId}:failure-notice`,
  };
}
