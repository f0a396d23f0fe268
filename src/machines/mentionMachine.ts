import { assign, emit, setup } from "xstate";
import { z } from "zod";
import {
  A2ARetrySchema,
  type A2AEventOf,
  classifyDiscordFailure,
  cutText,
  type DiscordErrorCode,
  type DiscordFailure,
  discordError,
  discordRetryAllowed,
  discordRetryWaitMs,
  elapsedMinutes,
  MENTION_QUOTE_LENGTH,
} from "../policies/index.js";
import { errorMessage, errorOf, failureAt } from "./actorEvents.js";
import { type PostMessageOutput, postMessageActor } from "./discordActors.js";
import { cameAfter } from "./cameAfter.js";
import { parseMachineInput } from "./MachineInputError.js";
import { defined, epochMs, nonEmpty } from "./schemas.js";

/** What a mention is reminded and escalated by: the config's `discord.a2aRetry`, handed over as it is. */
export const MentionSettingsSchema = z.object(
  A2ARetrySchema.pick({
    enabled: true,
    responseTimeoutMs: true,
    urgentResponseTimeoutMs: true,
    maxAttempts: true,
    escalationMentionId: true,
    notifyOnFailure: true,
  }).shape,
);

export const MentionInputSchema = z.object({
  mentionId: nonEmpty,
  threadId: nonEmpty,
  messageId: z.string().optional(),
  /** The requester: its bot posts the reminders and the escalation. */
  fromAgentId: nonEmpty,
  targetAgentId: nonEmpty,
  targetBotId: nonEmpty,
  originalText: z.string().transform((text) => cutText(text, MENTION_QUOTE_LENGTH)),
  urgent: z.boolean().default(false),
  /** When the original mention was actually sent: attempt 1, and the clock of the first timeout. */
  sentAt: epochMs,
  ...MentionSettingsSchema.shape,
});
/** What `mentionMachine` starts from: the posted mention, whom it asks, and the reminder settings. */
export type MentionInput = z.input<typeof MentionInputSchema>;

export interface MentionContext extends z.output<typeof MentionInputSchema> {
  /** Deliveries so far: the mention is 1, each reminder adds 1. */
  attempts: number;
  /** When the latest delivery (mention or reminder) was sent; the next timeout counts from here. */
  lastDeliveredAt: number;
  /** When the timeout being handled was due (the latest delivery + the timeout), whenever it fired. */
  firedAt?: number;
  respondedAt?: number;
  outcome?: MentionOutput["status"];
  /** Retries of the reminder or escalation post under way (up to 3); absent is 0. */
  retries?: number;
  /** That post's latest failure, and when it happened. */
  failure?: DiscordFailure & { message: string; at: number };
  /** A post that failed for good: reported with the escalation. */
  postError?: { post: "reminder" | "escalation"; code: DiscordErrorCode; message: string };
}

export type MentionEvent =
  /** A message in the mention's thread from `authorId` (the runtime routes thread messages here). */
  | { type: "RESPONSE_RECEIVED"; authorId: string; at: number; messageId?: string }
  | { type: "CANCEL"; at?: number };

/** How the mention ended (`responded` or `escalated`) and after how many attempts. */
export interface MentionOutput {
  status: "responded" | "escalated" | "cancelled";
  attempts: number;
  respondedAt?: number;
}

type Emitted = A2AEventOf<"a2a.mention.reminded"> | A2AEventOf<"a2a.mention.escalated">;

function timeoutOf(
  context: Pick<MentionContext, "urgent" | "responseTimeoutMs" | "urgentResponseTimeoutMs">,
) {
  return context.urgent ? context.urgentResponseTimeoutMs : context.responseTimeoutMs;
}

/** When the current timeout is due: a full timeout after the latest delivery. */
function timeoutDueAt(context: MentionContext): number {
  return context.lastDeliveredAt + timeoutOf(context);
}

function messageParams(context: MentionContext) {
  return {
    targetBotId: context.targetBotId,
    originalText: context.originalText,
    attempts: context.attempts,
    maxAttempts: context.maxAttempts,
    elapsedMinutes: elapsedMinutes(context.sentAt, context.firedAt ?? context.lastDeliveredAt),
  };
}

/** What every a2a.mention.* event says of the mention, as of `at`, with the event's own `data`. */
function mentionEvent<D extends object = object>(context: MentionContext, at: number, data?: D) {
  return {
    ts: at,
    fromAgent: context.fromAgentId,
    toAgent: context.targetAgentId,
    data: {
      mentionId: context.mentionId,
      threadId: context.threadId,
      targetAgentId: context.targetAgentId,
      attempts: context.attempts,
      maxAttempts: context.maxAttempts,
      elapsedMinutes: elapsedMinutes(context.sentAt, at),
      ...(data as D),
    },
  };
}

/**
 * Tracks one mention until the target answers: a reminder per timeout, then the escalation to a human.
 * Minutes count up to when the timeout was due, so a post re-run after a crash says the same.
 */
export const mentionMachine = setup({
  types: {
    input: {} as MentionInput,
    context: {} as MentionContext,
    events: {} as MentionEvent,
    output: {} as MentionOutput,
    emitted: {} as Emitted,
  },
  actors: { postReminder: postMessageActor, postEscalation: postMessageActor },
  guards: {
    remindersOff: ({ context }) => !context.enabled,
    attemptsLeft: ({ context }) => context.attempts < context.maxAttempts,
    notifiesOnFailure: ({ context }) => context.notifyOnFailure,
    targetAnswered: ({ context, event }) =>
      event.type === "RESPONSE_RECEIVED" &&
      event.authorId === context.targetBotId &&
      cameAfter(event, context),
    retryAllowed: ({ context }) => discordRetryAllowed(context.failure, context.retries ?? 0),
  },
  actions: {
    noteFired: assign(({ context }) => ({ firedAt: timeoutDueAt(context) })),
    noteResponse: assign(({ event }) => ({ respondedAt: (event as { at: number }).at })),
    settle: assign((_, outcome: MentionOutput["status"]) => ({ outcome })),
    recordReminder: assign(({ context }, output: PostMessageOutput) => ({
      attempts: context.attempts + 1,
      lastDeliveredAt: output.at,
      retries: 0,
      failure: undefined,
    })),
    recordFailure: assign(({ context }, error: unknown) => ({
      failure: {
        ...classifyDiscordFailure(error),
        message: errorMessage(error),
        at: failureAt(error, context.firedAt ?? context.lastDeliveredAt),
      },
    })),
    startRetry: assign(({ context }) => ({
      retries: (context.retries ?? 0) + 1,
      failure: undefined,
    })),
    // The next post starts its own retries.
    recordPostError: assign(({ context }, post: "reminder" | "escalation") => ({
      postError: { post, ...discordError(context.failure) },
      retries: 0,
    })),
    emitReminded: emit(({ context }, output: PostMessageOutput): Emitted => ({
      type: "a2a.mention.reminded",
      ...mentionEvent(context, output.at),
    })),
    emitEscalated: emit(({ context }, p: { notified: boolean; at: number }): Emitted => ({
      type: "a2a.mention.escalated",
      ...mentionEvent(context, p.at, {
        ...defined({ escalationMentionId: context.escalationMentionId }),
        notified: p.notified,
        ...(context.postError === undefined
          ? {}
          : {
              failedPost: context.postError.post,
              errorCode: context.postError.code,
              errorMessage: context.postError.message,
            }),
      }),
    })),
  },
  delays: {
    // Entered when the latest post landed: a full timeout from there.
    responseTimeout: ({ context }) => timeoutOf(context),
    // The same post again (same content, same nonce key), after Retry-After or 1 s, 2 s, 4 s.
    retryDelay: ({ context }) => discordRetryWaitMs(context.failure, context.retries ?? 0),
  },
}).createMachine({
  id: "mention",
  context: ({ input }) => {
    const parsed = parseMachineInput("mentionMachine", MentionInputSchema, input);
    return { ...parsed, attempts: 1, lastDeliveredAt: parsed.sentAt };
  },
  initial: "arming",
  // Any live state: the target's answer ends the mention, and so does a cancel.
  on: {
    RESPONSE_RECEIVED: { guard: "targetAnswered", target: ".responded", actions: "noteResponse" },
    CANCEL: { target: ".cancelled" },
  },
  states: {
    // The first timeout is due a full timeout after the mention; with reminders off none ever is.
    arming: { always: [{ guard: "remindersOff", target: "untimed" }, { target: "pending" }] },
    // No due time: only the target's answer or a cancel (on the root) ends the mention.
    untimed: {},
    pending: awaitingTimeout(),
    // The timeout is due: remind while attempts are left, else escalate (silently without notifyOnFailure).
    timedOut: {
      entry: "noteFired",
      always: [
        { guard: "attemptsLeft", target: "reminding" },
        { guard: "notifiesOnFailure", target: "escalating" },
        { target: "escalated", actions: escalatedUnnotified() },
      ],
    },
    reminding: {
      invoke: {
        id: "postReminder",
        src: "postReminder",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.threadId,
          text: { kind: "reminder", params: messageParams(context) },
          mentionUserIds: [context.targetBotId],
          nonceKey: `${context.mentionId}:reminder:${context.attempts}`,
        }),
        onDone: {
          target: "reminded",
          actions: [
            { type: "emitReminded", params: ({ event }) => event.output },
            { type: "recordReminder", params: ({ event }) => event.output },
          ],
        },
        onError: { target: "reminderFailing", actions: { type: "recordFailure", params: errorOf } },
      },
    },
    // A reminder that cannot be posted leaves the target unreachable: the human is called now, told why.
    reminderFailing: {
      always: [
        { guard: "retryAllowed", target: "reminderRetrying" },
        {
          guard: "notifiesOnFailure",
          target: "escalating",
          actions: { type: "recordPostError", params: "reminder" },
        },
        {
          target: "escalated",
          actions: [{ type: "recordPostError", params: "reminder" }, escalatedUnnotified()],
        },
      ],
    },
    reminderRetrying: retryingThen("reminding"),
    reminded: awaitingTimeout(),
    escalating: {
      invoke: {
        id: "postEscalation",
        src: "postEscalation",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.threadId,
          text: {
            kind: "escalation",
            params: {
              ...messageParams(context),
              ...defined({ escalationMentionId: context.escalationMentionId }),
            },
          },
          // The human is pinged; the target is named without a ping.
          mentionUserIds: context.escalationMentionId === undefined ? [] : [context.escalationMentionId],
          nonceKey: `${context.mentionId}:escalation`,
        }),
        onDone: {
          target: "escalated",
          actions: {
            type: "emitEscalated",
            params: ({ event }) => ({ notified: true, at: event.output.at }),
          },
        },
        onError: { target: "escalationFailing", actions: { type: "recordFailure", params: errorOf } },
      },
    },
    // An escalation that fails for good ends the mention escalated, notified false, with the error.
    escalationFailing: {
      always: [
        { guard: "retryAllowed", target: "escalationRetrying" },
        {
          target: "escalated",
          actions: [{ type: "recordPostError", params: "escalation" }, escalatedUnnotified()],
        },
      ],
    },
    escalationRetrying: retryingThen("escalating"),
    escalated: { type: "final", entry: [{ type: "settle", params: "escalated" }] },
    responded: { type: "final", entry: [{ type: "settle", params: "responded" }] },
    cancelled: { type: "final", entry: [{ type: "settle", params: "cancelled" }] },
  },
  output: ({ context }): MentionOutput => ({
    status: context.outcome ?? "cancelled",
    attempts: context.attempts,
    ...defined({ respondedAt: context.respondedAt }),
  }),
});

/** Waits a full timeout for the target's answer. */
function awaitingTimeout() {
  return { after: { responseTimeout: { target: "timedOut" } } } as const;
}

/** Waits out a failed post's retry delay, then posts again. */
function retryingThen(post: "reminding" | "escalating") {
  return { after: { retryDelay: { target: post, actions: "startRetry" } } } as const;
}

/** The escalation event when nobody was notified: as of a post's failure, else of the timeout. */
function escalatedUnnotified() {
  return {
    type: "emitEscalated" as const,
    params: ({ context }: { context: MentionContext }) => ({
      notified: false,
      at: context.failure?.at ?? context.firedAt ?? context.lastDeliveredAt,
    }),
  };
}
