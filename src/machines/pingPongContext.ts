import { z } from "zod";
import { type A2AErrorInfo, type EarlyTerminationReason, intentSchema } from "../policies/index.js";
import type { AgentStepError } from "./gatewayActors.js";
import { epochMs, FlowTraceSchema, LanguageSchema, nonEmpty, RetryPolicySchema } from "./schemas.js";

export const PingPongInputSchema = z.object({
  requesterSessionKey: z.string().optional(),
  targetSessionKey: nonEmpty,
  originalMessage: z.string(),
  messageIntent: intentSchema,
  /** Turns this conversation may take (resolveEffectivePingPongTurns); 0 skips the ping-pong. */
  effectiveTurns: z.int().min(0).max(10),
  autoTerminate: z.boolean(),
  /** The target's first reply, which turn 1 answers. */
  primaryReply: z.string().optional(),
  /** Each step's idempotency key is this plus the turn, so a step re-run after a restart runs once. */
  idempotencyKey: nonEmpty,
  /** When the ping-pong starts (the time of the primary reply). */
  startedAt: epochMs,
  trace: FlowTraceSchema,
  /** How a failed step is retried; absent, as in a ping-pong stored before: never. */
  retry: RetryPolicySchema.optional(),
  /** Seeds the backoff jitter. */
  seed: z.int().default(0),
  language: LanguageSchema.optional(),
});
/** What `pingPongMachine` starts from: the two sessions, the original message, the turns allowed. */
export type PingPongInput = z.input<typeof PingPongInputSchema>;

export type PingPongTerminationReason = EarlyTerminationReason | "max_turns" | "no_reply" | "skipped";

export interface PingPongContext extends z.output<typeof PingPongInputSchema> {
  /** The turn being (or next to be) run, from 1. */
  turn: number;
  /** Agent steps run, the terminating one included. */
  actualTurns: number;
  /** Replies that continued the conversation, oldest first (the repetition guard compares with the last). */
  replies: string[];
  latestReply?: string;
  terminationReason?: PingPongTerminationReason;
  /** The latest wall-clock time the machine was told of. */
  lastAt: number;
  /** Retries of the current turn's step (optional: absent in a ping-pong stored before retries). */
  stepRetries?: number;
  /** Retries of every step so far. */
  retryAttempts?: number;
  stepFailure?: AgentStepError;
  lastError?: A2AErrorInfo;
  /** The backoff of the retry under way; the machine waits it out with `after: { backoffDelay }`. */
  backoffMs?: number;
  /** The failure that ended the conversation, once the retries ran out. */
  error?: A2AErrorInfo;
}

/** How the ping-pong ended: turns taken, why it stopped, the latest reply. */
export interface PingPongOutput {
  actualTurns: number;
  /** `no_reply` also when a step failed for good; `error` then says why. */
  terminationReason: PingPongTerminationReason;
  earlyTermination: boolean;
  latestReply?: string;
  replies: string[];
  /** Retries of failed steps. */
  retryAttempts: number;
  /** Why the step that ended the conversation failed, after its retries. */
  error?: A2AErrorInfo;
  at: number;
}
