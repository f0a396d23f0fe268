import { and, assign, emit, setup } from "xstate";
import { z } from "zod";
import {
  type A2AEventOf,
  buildEscalationMessage,
  buildReminderMessage,
  cutText,
  elapsedMinutes,
  MENTION_QUOTE_LENGTH,
} from "../services/index.js";
import { type PostMessageOutput, postMessageActor } from "./discordActors.js";
import type { Due, TimerEvent } from "./Due.js";
import { parseMachineInput } from "./MachineInputError.js";
import { epochMs, nonEmpty, positiveMs } from "./schemas.js";

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
  responseTimeoutMs: positiveMs,
  urgentResponseTimeoutMs: positiveMs,
  maxAttempts: z.int().min(1),
  escalationMentionId: z.string().optional(),
  notifyOnFailure: z.boolean().default(true),
  /**
   * Remind and escalate at each timeout (`discord.a2aRetry.enabled`). With false no timeout is ever due:
   * the mention waits, `untimed`, until the target answers or it is cancelled.
   */
  reminders: z.boolean().default(true),
  /** When the original mention was actually sent: attempt 1, and the clock of the first timeout. */
  sentAt: epochMs,
});
export type MentionInput = z.input<typeof MentionInputSchema>;

/** A failed reminder post is tried again this much later, without counting an attempt. */
export const REMINDER_RETRY_MS = 60_000;

export interface MentionContext extends z.output<typeof MentionInputSchema> {
  /** Deliveries so far: the mention is 1, each reminder adds 1. */
  attempts: number;
  /** When the latest delivery (mention or reminder) was sent; the next timeout counts from here. */
  lastDeliveredAt: number;
  /** When the timeout being handled fired. */
  firedAt?: number;
  respondedAt?: number;
  due?: Due<"RESPONSE_TIMEOUT">;
  outcome?: MentionOutput["status"];
}

export type MentionEvent =
  | TimerEvent<"RESPONSE_TIMEOUT">
  /** A message in the mention's thread from `authorId` (the runtime routes thread messages here). */
  | { type: "RESPONSE_RECEIVED"; authorId: string; at: number; messageId?: string }
  | { type: "CANCEL"; at?: number };

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

function messageParams(context: MentionContext) {
  return {
    targetBotId: context.targetBotId,
    originalText: context.originalText,
    attempts: context.attempts,
    maxAttempts: context.maxAttempts,
    elapsedMinutes: elapsedMinutes(context.sentAt, context.firedAt ?? context.lastDeliveredAt),
  };
}

/**
 * Tracks one mention of an agent in a thread until it answers (design 004 §5.4–5.5, §8.2): at each
 * timeout the requester's bot reminds the target, and after the last reminder's timeout it escalates
 * to a human. Timeouts are durable due times the runtime delivers as `RESPONSE_TIMEOUT`. With
 * `reminders` off (`discord.a2aRetry.enabled: false`) no timeout is armed: the mention only waits.
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
    remindersOff: ({ context }) => !context.reminders,
    timeoutDue: ({ context, event }) =>
      event.type === "RESPONSE_TIMEOUT" && event.at >= (context.due?.at ?? 0),
    attemptsLeft: ({ context }) => context.attempts < context.maxAttempts,
    notifiesOnFailure: ({ context }) => context.notifyOnFailure,
    targetAnswered: ({ context, event }) =>
      event.type === "RESPONSE_RECEIVED" &&
      event.authorId === context.targetBotId &&
      event.at >= context.sentAt,
    neverReminded: ({ context }) => context.attempts === 1,
  },
  actions: {
    armFirstTimeout: assign(({ context }) => ({
      due: { event: "RESPONSE_TIMEOUT" as const, at: context.sentAt + timeoutOf(context) },
    })),
    // The timeout is taken: it is owed no more (a reminder being posted owes nothing until it is sent).
    noteFired: assign(({ event }) => ({
      firedAt: (event as TimerEvent<"RESPONSE_TIMEOUT">).at,
      due: undefined,
    })),
    noteResponse: assign(({ event }) => ({ respondedAt: (event as { at: number }).at })),
    settle: assign((_, outcome: MentionOutput["status"]) => ({ outcome, due: undefined })),
    recordReminder: assign(({ context }, output: PostMessageOutput) => ({
      attempts: context.attempts + 1,
      lastDeliveredAt: output.at,
      due: { event: "RESPONSE_TIMEOUT" as const, at: output.at + timeoutOf(context) },
    })),
    emitReminded: emit(({ context }, output: PostMessageOutput): Emitted => ({
      type: "a2a.mention.reminded",
      ts: output.at,
      fromAgent: context.fromAgentId,
      toAgent: context.targetAgentId,
      data: {
        mentionId: context.mentionId,
        threadId: context.threadId,
        targetAgentId: context.targetAgentId,
        attempts: context.attempts,
        maxAttempts: context.maxAttempts,
        elapsedMinutes: elapsedMinutes(context.sentAt, output.at),
      },
    })),
    retryReminderLater: assign(({ context }) => ({
      due: {
        event: "RESPONSE_TIMEOUT" as const,
        at: (context.firedAt ?? context.lastDeliveredAt) + REMINDER_RETRY_MS,
      },
    })),
    emitEscalated: emit(({ context }, p: { notified: boolean; at: number }): Emitted => ({
      type: "a2a.mention.escalated",
      ts: p.at,
      fromAgent: context.fromAgentId,
      toAgent: context.targetAgentId,
      data: {
        mentionId: context.mentionId,
        threadId: context.threadId,
        targetAgentId: context.targetAgentId,
        attempts: context.attempts,
        maxAttempts: context.maxAttempts,
        elapsedMinutes: elapsedMinutes(context.sentAt, p.at),
        ...(context.escalationMentionId === undefined
          ? {}
          : { escalationMentionId: context.escalationMentionId }),
        notified: p.notified,
      },
    })),
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
    arming: {
      always: [
        { guard: "remindersOff", target: "untimed" },
        { target: "pending", actions: "armFirstTimeout" },
      ],
    },
    // No due time: only the target's answer or a cancel (on the root) ends the mention.
    untimed: {},
    pending: { on: { RESPONSE_TIMEOUT: onResponseTimeout() } },
    reminding: {
      invoke: {
        id: "postReminder",
        src: "postReminder",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.threadId,
          content: buildReminderMessage(messageParams(context)),
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
        onError: [
          { guard: "neverReminded", target: "pending", actions: "retryReminderLater" },
          { target: "reminded", actions: "retryReminderLater" },
        ],
      },
    },
    reminded: { on: { RESPONSE_TIMEOUT: onResponseTimeout() } },
    escalating: {
      invoke: {
        id: "postEscalation",
        src: "postEscalation",
        input: ({ context }) => ({
          asAgentId: context.fromAgentId,
          channelId: context.threadId,
          content: buildEscalationMessage({
            ...messageParams(context),
            ...(context.escalationMentionId === undefined
              ? {}
              : { escalationMentionId: context.escalationMentionId }),
          }),
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
        onError: {
          target: "escalated",
          actions: {
            type: "emitEscalated",
            params: ({ context }) => ({ notified: false, at: context.firedAt ?? context.lastDeliveredAt }),
          },
        },
      },
    },
    escalated: { type: "final", entry: [{ type: "settle", params: "escalated" }] },
    responded: { type: "final", entry: [{ type: "settle", params: "responded" }] },
    cancelled: { type: "final", entry: [{ type: "settle", params: "cancelled" }] },
  },
  output: ({ context }): MentionOutput => ({
    status: context.outcome ?? "cancelled",
    attempts: context.attempts,
    ...(context.respondedAt === undefined ? {} : { respondedAt: context.respondedAt }),
  }),
});

/** At a due timeout: remind while attempts are left, else escalate (silently without notifyOnFailure). */
function onResponseTimeout() {
  return [
    { guard: and(["timeoutDue", "attemptsLeft"]), target: "reminding", actions: "noteFired" },
    { guard: and(["timeoutDue", "notifiesOnFailure"]), target: "escalating", actions: "noteFired" },
    {
      guard: "timeoutDue",
      target: "escalated",
      actions: [
        "noteFired",
        {
          type: "emitEscalated",
          params: ({ event }: { event: { at: number } }) => ({ notified: false, at: event.at }),
        },
      ],
    },
  ] as const;
}
