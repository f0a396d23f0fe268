import { z } from "zod";
import type { A2AErrorInfo, AnnounceSkipReason, DiscordFailure } from "../policies/index.js";
import type { AgentStepError } from "./gatewayActors.js";
import type { PingPongTerminationReason } from "./pingPongContext.js";
import {
  epochMs,
  type FlowTrace,
  LanguageSchema,
  nonEmpty,
  positiveMs,
  RetryPolicySchema,
} from "./schemas.js";

export const A2AFlowInputSchema = z.object({
  conversationId: nonEmpty,
  routeKey: z.string().optional(),
  requesterSessionKey: z.string().optional(),
  targetSessionKey: nonEmpty,
  message: z.string().min(1),
  skipPingPong: z.boolean().default(false),
  announceTarget: z.object({ channel: nonEmpty, to: z.string().optional() }).nullable().default(null),
  /** The target agent's maxPingPongTurns (resolveAgentA2ASettings). */
  configuredMaxTurns: z.int().min(0).max(10),
  autoTerminate: z.boolean(),
  retry: RetryPolicySchema,
  maxWaitMs: positiveMs,
  chunkMs: positiveMs,
  idempotencyKey: nonEmpty,
  seed: z.int().default(0),
  mode: z.enum(["sync", "async"]),
  fromAgent: nonEmpty,
  toAgent: nonEmpty,
  startedAt: epochMs,
  /** An announcement is posted only in a channel listed here (absent: none); its text is reported anyway. */
  allowedChannels: z.array(z.string()).optional(),
  language: LanguageSchema.optional(),
});
/** What `a2aFlowMachine` starts from: one `sessionsSend`, with the config it runs under. */
export type A2AFlowInput = z.input<typeof A2AFlowInputSchema>;

export interface A2AFlowContext extends z.output<typeof A2AFlowInputSchema> {
  trace: FlowTrace;
  effectiveTurns: number;
  lastAt: number;
  retryAttempts: number;
  /** The target's first reply (the announce's "round one"). */
  primaryReply?: string;
  /** The latest reply: the primary one, then the ping-pong's latest. */
  reply?: string;
  error?: A2AErrorInfo;
  outcomeMessage?: string;
  actualTurns: number;
  terminationReason?: PingPongTerminationReason;
  earlyTermination: boolean;
  announced: boolean;
  announceSkipReason?: A2AAnnounceSkipReason;
  announceText?: string;
  // Optional: absent in a flow stored before step errors were retried.
  /** A ping-pong or announce step that failed for good after the reply arrived; the flow stays "ok". */
  stepError?: A2AErrorInfo;
  /** Retries of the announce step, and of its post to Discord. */
  announceRetries?: number;
  postRetries?: number;
  announceFailure?: AgentStepError;
  lastStepError?: A2AErrorInfo;
  postFailure?: DiscordFailure & { message: string };
  /** Why the announcement was not made (the step's or the post's error message). */
  announceError?: string;
  /** The announce step's backoff under way; the flow waits it out with `after: { backoffDelay }`. */
  backoffMs?: number;
}

/** Why no announcement was made: decideAnnounce's reasons, or the step's, the post's or the channel's. */
export type A2AAnnounceSkipReason =
  AnnounceSkipReason | "announce_skip" | "announce_failed" | "post_failed" | "channel_not_allowed";

/** How a flow ended: `blocked`, no reply (`error` says why); `ok` with `error`: a later step failed. */
export interface A2AFlowOutput {
  status: "ok" | "blocked";
  conversationId: string;
  reply?: string;
  retryAttempts: number;
  actualTurns: number;
  terminationReason?: PingPongTerminationReason;
  announced: boolean;
  announceText?: string;
  error?: A2AErrorInfo;
}
