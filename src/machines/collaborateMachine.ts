import { and, assign, emit, sendTo, setup } from "xstate";
import { z } from "zod";
import {
  type A2AEventOf,
  buildCollaborationThreadName,
  buildThreadStarterMessage,
  classifyDiscordFailure,
  DISCORD_TRANSIENT_MAX_RETRIES,
  type DiscordFailure,
  discordTransientBackoffMs,
} from "../services/index.js";
import { errorMessage, errorOf, failureAt } from "./actorEvents.js";
import {
  type CreateThreadOutput,
  createThreadActor,
  type PostMessageOutput,
  postMessageActor,
} from "./discordActors.js";
import type { Due, TimerEvent } from "./Due.js";
import { parseMachineInput } from "./MachineInputError.js";
import { type MentionEvent, type MentionOutput, mentionMachine } from "./mentionMachine.js";
import { epochMs, nonEmpty, positiveMs } from "./schemas.js";

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
  /** The sender is answering a message from the target in a collaboration thread (design 002 §6). */
  replyInThread: z.boolean().default(false),
  mention: z.object({
    responseTimeoutMs: positiveMs,
    urgentResponseTimeoutMs: positiveMs,
    maxAttempts: z.int().min(1),
    escalationMentionId: z.string().optional(),
    notifyOnFailure: z.boolean(),
    /** Remind and escalate (`discord.a2aRetry.enabled`); absent, as in a collaboration stored before: true. */
    reminders: z.boolean().default(true),
  }),
  startedAt: epochMs,
});
export type CollaborateInput = z.input<typeof CollaborateInputSchema>;

export type CollaborateErrorCode =
  | "unknown_agent"
  | "empty_message"
  | "message_too_long"
  | "channel_not_allowed"
  | "loop_guard"
  | "reply_in_thread"
  | "discord_permission"
  | "discord_not_found"
  | "discord_invalid"
  | "discord_unavailable";

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
  /** Retries of the current Discord call made so far (design 002 §5: up to 3). */
  retries: number;
  failure?: DiscordFailure & { message: string };
  error?: { code: CollaborateErrorCode; message: string };
  due?: Due<"RETRY_DUE">;
  outcome?: CollaborateOutput["status"];
  /** Deliveries of the mention when it ended (1 + reminders). */
  mentionAttempts?: number;
}

export type CollaborateEvent = TimerEvent<"RETRY_DUE"> | MentionEvent;

export interface CollaborateOutput {
  status: "rejected" | "failed" | "responded" | "escalated" | "cancelled";
  collaborationId: string;
  threadId?: string;
  messageId?: string;
  mentionAttempts?: number;
  error?: { code: CollaborateErrorCode; message: string };
}

type Emitted =
  | A2AEventOf<"a2a.collaborate.requested">
  | A2AEventOf<"a2a.collaborate.sent">
  | A2AEventOf<"a2a.collaborate.failed">
  | A2AEventOf<"a2a.collaborate.responded">;

/** What the target reads: the mention first, so Discord pings exactly that bot. */
export function collaborationContent(targetBotId: string, message: string): string {
  return `<@${targetBotId}> ${message.trim()}`;
}

/** `[협업] {from} → {to} · {topic}` (design 002 §4); the topic: thread name, topic id or message. */
function threadNameOf(context: CollaborateContext): string {
  const topic = context.threadName ?? context.topicId;
  return buildCollaborationThreadName({
    fromName: context.fromName,
    toName: context.toName ?? context.targetAgentId,
    ...(topic ? { topic } : {}),
    message: context.message,
  });
}

function targetChannel(context: CollaborateContext): string | undefined {
  if (context.threadId) return context.threadParentId;
  return context.channelId || context.defaultChannel;
}

/** The allowlist is strict (design 002 §6): the default channel, too, must be listed to be used. */
function channelAllowed(context: CollaborateContext, channelId: string | undefined): boolean {
  return channelId !== undefined && context.allowedChannels.includes(channelId);
}

/** The envelope every a2a.collaborate.* event shares. */
function collaborationEnvelope(context: CollaborateContext, ts: number) {
  return { ts, fromAgent: context.fromAgentId, toAgent: context.targetAgentId };
}

/** Who collaborates, and in which thread once it is known (design 002 §1's CollaborateEvent). */
function collaborationParties(context: CollaborateContext) {
  return {
    collaborationId: context.collaborationId,
    fromAgentId: context.fromAgentId,
    toAgentId: context.targetAgentId,
    ...(context.resolvedThreadId === undefined ? {} : { threadId: context.resolvedThreadId }),
  };
}

const FAILURE_CODES: Record<DiscordFailure["kind"], CollaborateErrorCode> = {
  permission: "discord_permission",
  not_found: "discord_not_found",
  invalid: "discord_invalid",
  rate_limit: "discord_unavailable",
  transient: "discord_unavailable",
};

/**
 * One `discord_send` (designs 002 and 004): validate, resolve the thread (explicit, reused within
 * the TTL, or new: a starter message is posted in the channel and the `[협업] from → to · topic`
 * thread is opened from it), post the mention in the thread, retry what Discord says may be retried,
 * then track the mention until the target answers or a human is called.
 */
export const collaborateMachine = setup({
  types: {
    input: {} as CollaborateInput,
    context: {} as CollaborateContext,
    events: {} as CollaborateEvent,
    output: {} as CollaborateOutput,
    emitted: {} as Emitted,
  },
  actors: {
    postStarter: postMessageActor,
    createThread: createThreadActor,
    postMention: postMessageActor,
    mention: mentionMachine,
  },
  guards: {
    unknownTarget: ({ context }) => !context.targetBotId,
    emptyMessage: ({ context }) => context.message.trim() === "",
    messageTooLong: ({ context }) =>
      collaborationContent(context.targetBotId ?? "", context.message).length > context.maxMessageLength,
    channelNotAllowed: ({ context }) => {
      const channel = targetChannel(context);
      // An explicit thread whose parent the runtime does not know cannot be checked; Discord will say.
      if (context.threadId && channel === undefined) return false;
      return !channelAllowed(context, channel);
    },
    loopGuardTripped: ({ context }) => !context.loopGuard.allowed,
    replyInThread: ({ context }) => context.replyInThread,
    explicitThread: ({ context }) => Boolean(context.threadId),
    reusableThread: ({ context }) =>
      context.reusableThread !== undefined && channelAllowed(context, context.reusableThread.channelId),
    retryAllowed: ({ context }) =>
      context.failure?.retryable === true && context.retries < DISCORD_TRANSIENT_MAX_RETRIES,
    escalatingFailure: ({ context }) => context.failure?.escalate === true,
    threadKnown: ({ context }) => context.resolvedThreadId !== undefined,
    starterPosted: ({ context }) => context.starterMessageId !== undefined,
    retryDue: ({ context, event }) => event.type === "RETRY_DUE" && event.at >= (context.due?.at ?? 0),
    mentionResponded: (_, output: MentionOutput) => output.status === "responded",
    mentionEscalated: (_, output: MentionOutput) => output.status === "escalated",
  },
  actions: {
    reject: assign((_, error: { code: CollaborateErrorCode; message: string }) => ({ error })),
    useExplicitThread: assign(({ context }) => ({
      mode: "explicit_thread" as const,
      resolvedThreadId: context.threadId,
      ...(context.threadParentId === undefined ? {} : { parentChannelId: context.threadParentId }),
    })),
    reuseThread: assign(({ context }) => ({
      mode: "reuse_thread" as const,
      resolvedThreadId: context.reusableThread?.threadId,
      parentChannelId: context.reusableThread?.channelId,
    })),
    openNewThread: assign(({ context }) => ({
      mode: "new_thread" as const,
      ...(targetChannel(context) === undefined ? {} : { parentChannelId: targetChannel(context) }),
    })),
    recordStarter: assign(({ context }, output: PostMessageOutput) => ({
      starterMessageId: output.messageId,
      lastAt: Math.max(context.lastAt, output.at),
      retries: 0,
    })),
    recordThread: assign(({ context }, output: CreateThreadOutput) => ({
      resolvedThreadId: output.threadId,
      lastAt: Math.max(context.lastAt, output.at),
      retries: 0,
    })),
    recordSent: assign(({ context }, output: PostMessageOutput) => ({
      messageId: output.messageId,
      sentAt: output.at,
      lastAt: Math.max(context.lastAt, output.at),
      retries: 0,
    })),
    recordFailure: assign(({ context }, error: unknown) => ({
      failure: { ...classifyDiscordFailure(error), message: errorMessage(error) },
      lastAt: failureAt(error, context.lastAt),
    })),
    scheduleRetry: assign(({ context }) => {
      const waitMs =
        context.failure?.kind === "rate_limit" && context.failure.retryAfterMs !== undefined
          ? context.failure.retryAfterMs
          : discordTransientBackoffMs(context.retries + 1);
      return { due: { event: "RETRY_DUE" as const, at: context.lastAt + waitMs } };
    }),
    startRetry: assign(({ context }, at: number) => ({
      retries: context.retries + 1,
      lastAt: Math.max(context.lastAt, at),
      due: undefined,
      failure: undefined,
    })),
    failWithDiscordError: assign(({ context }) => ({
      error: {
        code: FAILURE_CODES[context.failure?.kind ?? "transient"],
        message: context.failure?.message ?? "Discord call failed",
      },
    })),
    settle: assign((_, outcome: CollaborateOutput["status"]) => ({ outcome, due: undefined })),
    recordMentionEnd: assign((_, output: MentionOutput) => ({ mentionAttempts: output.attempts })),
    emitRequested: emit(({ context }): Emitted => ({
      type: "a2a.collaborate.requested",
      ...collaborationEnvelope(context, context.startedAt),
      data: {
        ...collaborationParties(context),
        ...(context.threadId ? { threadId: context.threadId } : {}),
      },
    })),
    emitSent: emit(({ context }): Emitted => ({
      type: "a2a.collaborate.sent",
      ...collaborationEnvelope(context, context.sentAt ?? context.lastAt),
      data: {
        ...collaborationParties(context),
        ...(context.parentChannelId === undefined ? {} : { parentChannelId: context.parentChannelId }),
        ...(context.mode === undefined ? {} : { mode: context.mode }),
        ...(context.messageId === undefined ? {} : { messageId: context.messageId }),
        mentionId: context.collaborationId,
      },
    })),
    emitFailed: emit(({ context }): Emitted => ({
      type: "a2a.collaborate.failed",
      ...collaborationEnvelope(context, context.lastAt),
      data: {
        ...collaborationParties(context),
        attempt: context.retries + 1,
        ...(context.error === undefined
          ? {}
          : { errorCode: context.error.code, errorMessage: context.error.message }),
        escalate: context.failure?.escalate === true,
      },
    })),
    emitResponded: emit(({ context }, output: MentionOutput): Emitted => ({
      type: "a2a.collaborate.responded",
      ...collaborationEnvelope(context, output.respondedAt ?? context.lastAt),
      data: {
        ...collaborationParties(context),
        mentionId: context.collaborationId,
        attempt: output.attempts,
      },
    })),
  },
}).createMachine({
  id: "collaborate",
  context: ({ input }) => ({
    ...parseMachineInput("collaborateMachine", CollaborateInputSchema, input),
    lastAt: input.startedAt,
    retries: 0,
  }),
  initial: "validating",
  states: {
    validating: {
      entry: "emitRequested",
      always: [
        reject("unknownTarget", "unknown_agent", "the target is not a configured agent"),
        reject("emptyMessage", "empty_message", "the message is empty"),
        reject("messageTooLong", "message_too_long", "the message with its mention is over the length limit"),
        reject(
          "channelNotAllowed",
          "channel_not_allowed",
          "the channel is not in discord.collaboration.allowedChannels",
        ),
        reject(
          "loopGuardTripped",
          "loop_guard",
          "too many collaborations between these agents; wait for the window",
        ),
        reject(
          "replyInThread",
          "reply_in_thread",
          "answer in the thread instead of starting a new collaboration",
        ),
        { target: "resolvingThread" },
      ],
    },
    resolvingThread: {
      always: [
        { guard: "explicitThread", target: "sending", actions: "useExplicitThread" },
        { guard: "reusableThread", target: "sending", actions: "reuseThread" },
        { target: "postingStarter", actions: "openNewThread" },
      ],
    },
    // A new thread is opened from a starter message in the channel that pings nobody: Discord allows one
    // thread per message, so a creation re-run after a crash finds that thread instead of opening a second.
    postingStarter: {
      invoke: {
        id: "postStarter",
        src: "postStarter",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.parentChannelId as string,
          content: buildThreadStarterMessage(threadNameOf(context)),
          mentionUserIds: [],
          nonceKey: `${context.collaborationId}:starter`,
        }),
        onDone: {
          target: "creatingThread",
          actions: { type: "recordStarter", params: ({ event }) => event.output },
        },
        onError: { target: "failing", actions: { type: "recordFailure", params: errorOf } },
      },
    },
    creatingThread: {
      invoke: {
        id: "createThread",
        src: "createThread",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.parentChannelId as string,
          fromMessageId: context.starterMessageId as string,
          name: threadNameOf(context),
        }),
        onDone: {
          target: "sending",
          actions: { type: "recordThread", params: ({ event }) => event.output },
        },
        onError: { target: "failing", actions: { type: "recordFailure", params: errorOf } },
      },
    },
    // The mention goes inside the thread in every mode: a sibling bot's mention is handled there
    // (design 004 §5.2), not in a channel.
    sending: {
      invoke: {
        id: "postMention",
        src: "postMention",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.resolvedThreadId as string,
          content: collaborationContent(context.targetBotId as string, context.message),
          mentionUserIds: [context.targetBotId as string],
          nonceKey: `${context.collaborationId}:mention`,
        }),
        onDone: {
          target: "awaitingResponse",
          actions: [{ type: "recordSent", params: ({ event }) => event.output }, "emitSent"],
        },
        onError: { target: "failing", actions: { type: "recordFailure", params: errorOf } },
      },
    },
    failing: {
      always: [
        { guard: "retryAllowed", target: "retrying" },
        { target: "failed", actions: ["failWithDiscordError", "emitFailed"] },
      ],
    },
    retrying: {
      entry: "scheduleRetry",
      on: {
        // A timer event that comes before the due time (a stray or duplicated delivery) changes nothing.
        // The retry resumes at the step that failed: each step is idempotent on a re-run.
        RETRY_DUE: [
          {
            guard: and(["retryDue", "threadKnown"]),
            target: "sending",
            actions: { type: "startRetry", params: ({ event }) => event.at },
          },
          {
            guard: and(["retryDue", "starterPosted"]),
            target: "creatingThread",
            actions: { type: "startRetry", params: ({ event }) => event.at },
          },
          {
            guard: "retryDue",
            target: "postingStarter",
            actions: { type: "startRetry", params: ({ event }) => event.at },
          },
        ],
      },
    },
    awaitingResponse: {
      invoke: {
        id: "mention",
        src: "mention",
        input: ({ context }) => ({
          mentionId: context.collaborationId,
          threadId: context.resolvedThreadId as string,
          ...(context.messageId === undefined ? {} : { messageId: context.messageId }),
          fromAgentId: context.fromAgentId,
          targetAgentId: context.targetAgentId,
          targetBotId: context.targetBotId as string,
          originalText: context.message,
          urgent: context.urgent,
          ...context.mention,
          sentAt: context.sentAt ?? context.lastAt,
        }),
        onDone: [
          {
            guard: { type: "mentionResponded", params: ({ event }) => event.output },
            target: "responded",
            actions: [
              { type: "recordMentionEnd", params: ({ event }) => event.output },
              { type: "emitResponded", params: ({ event }) => event.output },
            ],
          },
          {
            guard: { type: "mentionEscalated", params: ({ event }) => event.output },
            target: "escalated",
            actions: { type: "recordMentionEnd", params: ({ event }) => event.output },
          },
          { target: "cancelled", actions: { type: "recordMentionEnd", params: ({ event }) => event.output } },
        ],
      },
      on: {
        RESPONSE_TIMEOUT: { actions: sendTo("mention", ({ event }) => event) },
        RESPONSE_RECEIVED: { actions: sendTo("mention", ({ event }) => event) },
        CANCEL: { actions: sendTo("mention", ({ event }) => event) },
      },
    },
    rejected: { type: "final", entry: { type: "settle", params: "rejected" } },
    failed: { type: "final", entry: { type: "settle", params: "failed" } },
    responded: { type: "final", entry: { type: "settle", params: "responded" } },
    escalated: { type: "final", entry: { type: "settle", params: "escalated" } },
    cancelled: { type: "final", entry: { type: "settle", params: "cancelled" } },
  },
  output: ({ context }): CollaborateOutput => ({
    status: context.outcome ?? "failed",
    collaborationId: context.collaborationId,
    ...(context.resolvedThreadId === undefined ? {} : { threadId: context.resolvedThreadId }),
    ...(context.messageId === undefined ? {} : { messageId: context.messageId }),
    ...(context.mentionAttempts === undefined ? {} : { mentionAttempts: context.mentionAttempts }),
    ...(context.error === undefined ? {} : { error: context.error }),
  }),
});

type ValidationGuard =
  | "unknownTarget"
  | "emptyMessage"
  | "messageTooLong"
  | "channelNotAllowed"
  | "loopGuardTripped"
  | "replyInThread";

/** A validation step: when `guard` holds, the collaboration ends `rejected` with `code`. */
function reject(guard: ValidationGuard, code: CollaborateErrorCode, message: string) {
  return {
    guard,
    target: "rejected" as const,
    actions: { type: "reject" as const, params: { code, message } },
  };
}
