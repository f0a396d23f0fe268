import { z } from "zod";
import {
  type CollaborationThreadNameParams,
  type DiscordErrorCode,
  type DiscordFailure,
} from "../policies/index.js";
import { type MentionEvent, MentionSettingsSchema } from "./mentionMachine.js";
import type { PostMessageInput } from "./discordActors.js";
import { defined, epochMs, nonEmpty } from "./schemas.js";

export const CollaborateInputSchema = z.object({
  collaborationId: nonEmpty,
  fromAgentId: nonEmpty,
  targetAgentId: nonEmpty,
  fromName: nonEmpty,
  toName: z.string().optional(),
  /** The target's bot; absent when the target is not a configured agent. */
  targetBotId: z.string().optional(),
  message: z.string(),
  threadId: z.string().optional(),
  /** The parent channel of `threadId`, when the runtime knows it. */
  threadParentId: z.string().optional(),
  /** Discord refused to say what `threadId` is (403/404): the collaboration fails with it at once. */
  threadLookupFailure: z
    .object({
      kind: z.enum(["permission", "not_found", "rate_limit", "transient", "invalid"]),
      retryable: z.literal(false),
      escalate: z.boolean(),
      message: z.string(),
    })
    .optional(),
  channelId: z.string().optional(),
  threadName: z.string().optional(),
  topicId: z.string().optional(),
  urgent: z.boolean().default(false),
  allowedChannels: z.array(z.string()),
  defaultChannel: z.string().optional(),
  maxMessageLength: z.int().positive(),
  /** A thread of this route used within `threadReuseTTL` (the runtime's thread-route cache). */
  reusableThread: z.object({ threadId: nonEmpty, channelId: nonEmpty }).optional(),
  /** The loop guard's verdict on this call, taken by the runtime when it counted the call. */
  loopGuard: z.object({ allowed: z.boolean(), warning: z.string().optional() }).default({ allowed: true }),
  /** The sender is answering a message from the target in a collaboration thread. */
  replyInThread: z.boolean().default(false),
  /** The mention's reminder settings: the config's `discord.a2aRetry`, as it is there. */
  mention: MentionSettingsSchema,
  startedAt: epochMs,
});
/** What `collaborateMachine` starts from: one `discordSend`, checked, with its thread and settings. */
export type CollaborateInput = z.input<typeof CollaborateInputSchema>;

export type CollaborateErrorCode =
  | "unknown_agent"
  | "empty_message"
  | "message_too_long"
  | "channel_not_allowed"
  | "loop_guard"
  | "reply_in_thread"
  | DiscordErrorCode;

export interface CollaborateContext extends z.output<typeof CollaborateInputSchema> {
  lastAt: number;
  mode?: "new_thread" | "reuse_thread" | "explicit_thread";
  resolvedThreadId?: string;
  parentChannelId?: string;
  /** A new thread's starter message, in the parent channel: the thread is opened from it. */
  starterMessageId?: string;
  /** The mention, once posted (in the thread, whatever the mode). */
  messageId?: string;
  /** When the mention was posted: the mention's attempt 1, and the clock of its first timeout. */
  sentAt?: number;
  /** Retries of the current Discord call made so far (up to 3). */
  retries: number;
  failure?: DiscordFailure & { message: string };
  error?: { code: CollaborateErrorCode; message: string };
  outcome?: CollaborateOutput["status"];
  /** Deliveries of the mention when it ended (1 + reminders). */
  mentionAttempts?: number;
  /** When the collaboration failed, and on which try: a failure notice's own retries follow. */
  failedOn?: { at: number; attempt: number };
  /** The failure notice, once posted in the escalation channel. */
  noticeMessageId?: string;
  /** Why the failure notice could not be posted, after its retries. */
  noticeError?: { code: CollaborateErrorCode; message: string };
}

/** The mention's events: passed on to the mention while the collaboration awaits the answer. */
export type CollaborateEvent = MentionEvent;

/** How the collaboration ended: `responded`, `escalated`, `failed` or `rejected`, with its thread and mention. */
export interface CollaborateOutput {
  status: "rejected" | "failed" | "responded" | "escalated" | "cancelled";
  collaborationId: string;
  threadId?: string;
  messageId?: string;
  mentionAttempts?: number;
  error?: { code: CollaborateErrorCode; message: string };
}

/** What the new thread's name says: the agents' names and the topic (thread name, topic id or message). */
export function threadNameParams(context: CollaborateContext): CollaborationThreadNameParams {
  const topic = context.threadName ?? context.topicId;
  return {
    fromName: context.fromName,
    toName: context.toName ?? context.targetAgentId,
    ...(topic ? { topic } : {}),
    message: context.message,
  };
}

/** The channel the collaboration posts in: the explicit thread's parent, the given channel or the default. */
export function targetChannel(context: CollaborateContext): string | undefined {
  if (context.threadId) return context.threadParentId;
  return context.channelId || context.defaultChannel;
}

/** The allowlist is strict: the default channel, too, must be listed to be used. */
export function channelAllowed(context: CollaborateContext, channelId: string | undefined): boolean {
  return channelId !== undefined && context.allowedChannels.includes(channelId);
}

/** Where a 403/404 is reported: the default channel when the allowlist holds it, else nowhere. */
export function noticeChannel(context: CollaborateContext): string | undefined {
  return channelAllowed(context, context.defaultChannel) ? context.defaultChannel : undefined;
}

/** The post telling a human of a 403/404, pinging only them; a fixed nonce key, so a re-run posts once. */
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
