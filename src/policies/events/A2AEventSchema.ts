import { z } from "zod";
import { EXCHANGE_END_REASONS } from "../collaboration/botExchange.js";
import { EARLY_TERMINATION_REASONS } from "../pingPong/shouldTerminatePingPong.js";

const count = z.int().min(0);
const text = z.string();
// String literals (not the enum) so callers may write "question"; A2AMessageIntent members are assignable.
export const intentSchema = z.enum([
  "notification",
  "question",
  "collaboration",
  "escalation",
  "result_report",
]);
const errorCategory = z.enum(["transient", "permanent", "conditional"]);

export const TERMINATION_REASONS = [
  ...EARLY_TERMINATION_REASONS,
  "max_turns",
  "no_reply",
  "skipped",
] as const;
export const terminationReasonSchema = z.enum(TERMINATION_REASONS);

// Data objects are loose: documented fields are checked, and fields a newer writer adds survive a
// round trip through an older reader of coordination-events.ndjson.
const SendData = z.looseObject({
  targetSessionKey: text,
  requesterSessionKey: text.optional(),
  message: text,
  messageIntent: intentSchema,
  idempotencyKey: text.optional(),
  mode: z.enum(["sync", "async"]).optional(),
});

const ResponseData = z.looseObject({
  /** 0 for the target's first reply, then the ping-pong turn. */
  turn: count,
  speakerSessionKey: text.optional(),
  reply: text.optional(),
  outcome: z.enum(["ok", "blocked"]).optional(),
  messageIntent: intentSchema,
  effectiveTurns: count,
  terminationReason: terminationReasonSchema.optional(),
});

const RetryData = z.looseObject({
  errorCode: text,
  errorCategory,
  errorMessage: text,
  /** The retry's number, from 1. */
  attempt: z.int().min(1),
  maxAttempts: z.int().min(1),
  backoffMs: count,
  conversationId: text,
  fromAgent: text,
  toAgent: text,
});

const CompleteData = z.looseObject({
  retryAttempts: count,
  errorCode: text.optional(),
  errorCategory: errorCategory.optional(),
  /** With errorCode: the error's message. */
  errorMessage: text.optional(),
  messageIntent: intentSchema,
  configuredMaxTurns: count,
  effectiveTurns: count,
  actualTurns: count,
  earlyTermination: z.boolean(),
  terminationReason: terminationReasonSchema.optional(),
  announced: z.boolean(),
  announceSkipped: z.boolean(),
  announceSkipReason: text.optional(),
  announceText: text.optional(),
  /** Why the announcement was not made when the step or its post failed (announce_failed, post_failed). */
  announceError: text.optional(),
});

// The data of every a2a.collaborate.* event; the thread is unknown until it is resolved.
const CollaborateData = z.looseObject({
  collaborationId: text.optional(),
  threadId: text.optional(),
  parentChannelId: text.optional(),
  fromAgentId: text,
  toAgentId: text,
  mode: z.enum(["new_thread", "reuse_thread", "explicit_thread"]).optional(),
  attempt: count.optional(),
  messageId: text.optional(),
  mentionId: text.optional(),
  errorCode: text.optional(),
  errorMessage: text.optional(),
  escalate: z.boolean().optional(),
  /** An escalating failure (403/404): whether its notice reached the escalation channel. */
  notified: z.boolean().optional(),
  /** Why that notice could not be posted, when it failed for good. */
  noticeErrorCode: text.optional(),
  noticeErrorMessage: text.optional(),
});

const MentionData = z.looseObject({
  mentionId: text,
  threadId: text,
  targetAgentId: text,
  attempts: z.int().min(1),
  maxAttempts: z.int().min(1),
  elapsedMinutes: count,
});

// A bot↔bot exchange in a thread ended: the message that would have been handled next was dropped.
const ExchangeData = z.looseObject({
  threadId: text,
  reason: z.enum(EXCHANGE_END_REASONS),
  /** Messages the exchange handled, its opening included. */
  handled: count,
  /** The most it could handle: 1 + maxPingPongTurns. */
  limit: z.int().min(1),
  /** The dropped message and the agent it would have gone to. */
  messageId: text,
  agentId: text,
});

const envelope = <T extends string, D extends z.ZodType>(type: T, data: D) =>
  z.strictObject({
    type: z.literal(type),
    ts: z.number().finite().nonnegative(),
    conversationId: text.optional(),
    routeKey: text.optional(),
    runId: text.optional(),
    fromAgent: text.optional(),
    toAgent: text.optional(),
    data,
  });

const SCHEMAS = [
  envelope("a2a.send", SendData),
  envelope("a2a.response", ResponseData),
  envelope("a2a.retry", RetryData),
  envelope("a2a.complete", CompleteData),
  envelope("a2a.collaborate.requested", CollaborateData),
  envelope("a2a.collaborate.sent", CollaborateData),
  envelope("a2a.collaborate.failed", CollaborateData),
  envelope("a2a.collaborate.responded", CollaborateData),
  envelope("a2a.mention.reminded", MentionData),
  envelope(
    "a2a.mention.escalated",
    MentionData.extend({
      escalationMentionId: text.optional(),
      notified: z.boolean(),
      // A post that failed for good: a reminder (ending the reminders) or the escalation (not notified).
      failedPost: z.enum(["reminder", "escalation"]).optional(),
      errorCode: text.optional(),
      errorMessage: text.optional(),
    }),
  ),
  envelope("a2a.exchange.ended", ExchangeData),
] as const;

/** Every control-plane event, discriminated by `type`. */
export const A2AEventSchema = z.discriminatedUnion("type", SCHEMAS);

type EventSchema = (typeof SCHEMAS)[number];
/** The schema of each event type. */
export const A2AEventSchemas = Object.fromEntries(
  SCHEMAS.map((schema) => [schema.shape.type.value, schema]),
) as {
  [S in EventSchema as z.output<S>["type"]]: S;
};

/** One event of the control plane, as `onEvent` delivers it and the event log stores it. */
export type A2AEvent = z.output<typeof A2AEventSchema>;
/** The `type` of an event: `a2a.send`, `a2a.retry`, `a2a.mention.reminded`, … */
export type A2AEventType = A2AEvent["type"];
export type A2AEventOf<T extends A2AEventType> = Extract<A2AEvent, { type: T }>;
export const A2A_EVENT_TYPES = Object.keys(A2AEventSchemas) as A2AEventType[];
