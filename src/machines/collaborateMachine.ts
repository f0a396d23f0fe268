import { and, assign, emit, sendTo, setup } from "xstate";
import {
  classifyDiscordFailure,
  discordError,
  discordRetryWaitMs,
  discordRetryAllowed,
  mentionContent,
} from "../policies/index.js";
import { errorMessage, errorOf, failureAt } from "./actorEvents.js";
import {
  type CollaborateContext,
  type CollaborateErrorCode,
  type CollaborateEvent,
  type CollaborateInput,
  CollaborateInputSchema,
  type CollaborateOutput,
  channelAllowed,
  failureNoticeInput,
  noticeChannel,
  targetChannel,
  threadNameParams,
} from "./collaborateContext.js";
import {
  type CollaborateEmitted,
  failedEvent,
  requestedEvent,
  respondedEvent,
  sentEvent,
} from "./collaborateEvents.js";
import {
  type CreateThreadOutput,
  createThreadActor,
  type PostMessageOutput,
  postMessageActor,
} from "./discordActors.js";
import { parseMachineInput } from "./MachineInputError.js";
import { type MentionOutput, mentionMachine } from "./mentionMachine.js";
import { defined } from "./schemas.js";

/** One `discord_send`: validate, resolve the thread, post the mention in it, then track the mention. */
export const collaborateMachine = setup({
  types: {
    input: {} as CollaborateInput,
    context: {} as CollaborateContext,
    events: {} as CollaborateEvent,
    output: {} as CollaborateOutput,
    emitted: {} as CollaborateEmitted,
  },
  actors: {
    postStarter: postMessageActor,
    createThread: createThreadActor,
    postMention: postMessageActor,
    postNotice: postMessageActor,
    mention: mentionMachine,
  },
  guards: {
    unknownTarget: ({ context }) => !context.targetBotId,
    emptyMessage: ({ context }) => context.message.trim() === "",
    messageTooLong: ({ context }) =>
      mentionContent(context.targetBotId ?? "", context.message).length > context.maxMessageLength,
    threadLookupFailed: ({ context }) => context.threadLookupFailure !== undefined,
    // Fails closed: an explicit thread whose parent the runtime could not learn is not allowed.
    channelNotAllowed: ({ context }) => !channelAllowed(context, targetChannel(context)),
    loopGuardTripped: ({ context }) => !context.loopGuard.allowed,
    replyInThread: ({ context }) => context.replyInThread,
    explicitThread: ({ context }) => Boolean(context.threadId),
    reusableThread: ({ context }) =>
      context.reusableThread !== undefined && channelAllowed(context, context.reusableThread.channelId),
    retryAllowed: ({ context }) => discordRetryAllowed(context.failure, context.retries),
    escalatingFailure: ({ context }) => context.failure?.escalate === true,
    // A 403/404 is told to a human in the escalation channel, unless notifyOnFailure is off.
    noticeWanted: ({ context }) => context.mention.notifyOnFailure && noticeChannel(context) !== undefined,
    threadKnown: ({ context }) => context.resolvedThreadId !== undefined,
    starterPosted: ({ context }) => context.starterMessageId !== undefined,
    mentionResponded: (_, output: MentionOutput) => output.status === "responded",
    mentionEscalated: (_, output: MentionOutput) => output.status === "escalated",
  },
  actions: {
    reject: assign((_, error: { code: CollaborateErrorCode; message: string }) => ({ error })),
    useExplicitThread: assign(({ context }) => ({
      mode: "explicit_thread" as const,
      resolvedThreadId: context.threadId,
      ...defined({ parentChannelId: context.threadParentId }),
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
    recordLookupFailure: assign(({ context }) => ({ failure: context.threadLookupFailure })),
    recordFailure: assign(({ context }, error: unknown) => ({
      failure: { ...classifyDiscordFailure(error), message: errorMessage(error) },
      lastAt: failureAt(error, context.lastAt),
    })),
    // The retry starts when its wait is over: lastAt is when the failure was seen.
    startRetry: assign(({ context }) => ({
      retries: context.retries + 1,
      lastAt: context.lastAt + discordRetryWaitMs(context.failure, context.retries),
      failure: undefined,
    })),
    // The failure is final; a failure notice that follows counts its own retries.
    failWithDiscordError: assign(({ context }) => ({
      error: discordError(context.failure),
      failedOn: { at: context.lastAt, attempt: context.retries + 1 },
      retries: 0,
      failure: undefined,
    })),
    recordNotice: assign(({ context }, output: PostMessageOutput) => ({
      noticeMessageId: output.messageId,
      lastAt: Math.max(context.lastAt, output.at),
    })),
    recordNoticeError: assign(({ context }) => ({ noticeError: discordError(context.failure) })),
    settle: assign((_, outcome: CollaborateOutput["status"]) => ({ outcome })),
    recordMentionEnd: assign((_, output: MentionOutput) => ({ mentionAttempts: output.attempts })),
    emitRequested: emit(({ context }) => requestedEvent(context)),
    emitSent: emit(({ context }) => sentEvent(context)),
    emitFailed: emit(({ context }) => failedEvent(context)),
    emitResponded: emit(({ context }, output: MentionOutput) => respondedEvent(context, output)),
  },
  delays: {
    // Entered when the failure was seen (lastAt): Retry-After, else 1 s, 2 s, 4 s from there.
    retryDelay: ({ context }) => discordRetryWaitMs(context.failure, context.retries),
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
        { guard: "threadLookupFailed", target: "failing", actions: "recordLookupFailure" },
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
          text: { kind: "threadStarter", params: threadNameParams(context) },
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
          text: { kind: "threadName", params: threadNameParams(context) },
        }),
        onDone: {
          target: "sending",
          actions: { type: "recordThread", params: ({ event }) => event.output },
        },
        onError: { target: "failing", actions: { type: "recordFailure", params: errorOf } },
      },
    },
    // Inside the thread in every mode: preflight hands on a sibling bot's mention in a thread only.
    sending: {
      invoke: {
        id: "postMention",
        src: "postMention",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.resolvedThreadId as string,
          text: {
            kind: "mention",
            params: { targetBotId: context.targetBotId as string, message: context.message },
          },
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
        {
          guard: and(["escalatingFailure", "noticeWanted"]),
          target: "postingNotice",
          actions: "failWithDiscordError",
        },
        { target: "failed", actions: "failWithDiscordError" },
      ],
    },
    // The retry resumes at the step that failed: each step is idempotent on a re-run.
    retrying: {
      after: {
        retryDelay: [
          { guard: "threadKnown", target: "sending", actions: "startRetry" },
          { guard: "starterPosted", target: "creatingThread", actions: "startRetry" },
          { target: "postingStarter", actions: "startRetry" },
        ],
      },
    },
    // The 403/404 notice to a human in the escalation channel, retried like every post.
    postingNotice: {
      invoke: {
        id: "postNotice",
        src: "postNotice",
        input: ({ context }) => failureNoticeInput(context),
        onDone: { target: "failed", actions: { type: "recordNotice", params: ({ event }) => event.output } },
        onError: { target: "noticeFailing", actions: { type: "recordFailure", params: errorOf } },
      },
    },
    noticeFailing: {
      always: [
        { guard: "retryAllowed", target: "noticeRetrying" },
        { target: "failed", actions: "recordNoticeError" },
      ],
    },
    noticeRetrying: {
      after: { retryDelay: { target: "postingNotice", actions: "startRetry" } },
    },
    awaitingResponse: {
      invoke: {
        id: "mention",
        src: "mention",
        input: ({ context }) => ({
          mentionId: context.collaborationId,
          threadId: context.resolvedThreadId as string,
          ...defined({ messageId: context.messageId }),
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
        RESPONSE_RECEIVED: { actions: sendTo("mention", ({ event }) => event) },
        CANCEL: { actions: sendTo("mention", ({ event }) => event) },
      },
    },
    // Every failure is an a2a.collaborate.failed event for the audit trail, a rejection included.
    rejected: { type: "final", entry: [{ type: "settle", params: "rejected" }, "emitFailed"] },
    failed: { type: "final", entry: [{ type: "settle", params: "failed" }, "emitFailed"] },
    responded: { type: "final", entry: { type: "settle", params: "responded" } },
    escalated: { type: "final", entry: { type: "settle", params: "escalated" } },
    cancelled: { type: "final", entry: { type: "settle", params: "cancelled" } },
  },
  output: ({ context }): CollaborateOutput => ({
    status: context.outcome ?? "failed",
    collaborationId: context.collaborationId,
    ...defined({
      threadId: context.resolvedThreadId,
      messageId: context.messageId,
      mentionAttempts: context.mentionAttempts,
      error: context.error,
    }),
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
