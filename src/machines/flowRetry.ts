import type { z } from "zod";
import {
  type A2AErrorInfo,
  type A2AEventOf,
  calculateBackoffMs,
  capMaxAttempts,
  classifyA2AError,
  type DiscordFailure,
  discordRetryWaitMs,
} from "../policies/index.js";
import type { AgentStepError } from "./gatewayActors.js";
import {
  catalogOf,
  defined,
  envelopeOf,
  type FlowTrace,
  type Language,
  type RetryPolicySchema,
} from "./schemas.js";

// The gateway retry policy the flow's retrying steps share (reply wait, ping-pong step, announce step):
// classify, retry while the class allows, back off with jitter. Each machine keeps its own states.

export type RetryPolicy = z.output<typeof RetryPolicySchema>;

/** What the classifier needs of a failure, kept serialisable for snapshots. */
export interface FailureFacts {
  waitStatus?: string;
  waitError?: string;
  gatewayError?: string;
}

/** What the retry helpers read of a machine's context. */
interface RetryingContext {
  trace: FlowTrace;
  lastAt: number;
  seed: number;
  backoffMs?: number;
  retry?: RetryPolicy;
  language?: Language;
}

/** Classifies a failure after `attempt` retries, its class's limit capped by `retry.maxAttempts`. */
export function classifyFailure(
  context: RetryingContext,
  facts: FailureFacts,
  attempt: number,
): A2AErrorInfo {
  const classified = classifyA2AError(
    {
      ...defined({ waitStatus: facts.waitStatus, waitError: facts.waitError }),
      ...(facts.gatewayError === undefined ? {} : { gatewayError: new Error(facts.gatewayError) }),
      attempt,
    },
    catalogOf(context.language),
  );
  return capMaxAttempts(classified, context.retry?.maxAttempts);
}

/**
 * An agent step's failure for the classifier: a run that ended badly by its status and error; a failed
 * call as a gateway failure, retried like a dropped connection.
 */
export function stepFailureFacts(error: AgentStepError): FailureFacts {
  if (error.source === "wait" && error.status !== undefined) {
    return { waitStatus: error.status, ...defined({ waitError: error.message }) };
  }
  return { gatewayError: error.message ?? `agent step failed (${error.source})` };
}

/** The backoff before retry number `attempt + 1`, with the next seed of the jitter. */
export function retryBackoff(context: RetryingContext, attempt: number, error?: A2AErrorInfo) {
  const drawn = nextRandom(context.seed);
  const backoffMs = calculateBackoffMs(attempt, error as A2AErrorInfo, {
    ...(context.retry && { baseMs: context.retry.baseBackoffMs, maxMs: context.retry.maxBackoffMs }),
    random: () => drawn.value,
  });
  return { backoffMs, seed: drawn.seed };
}

/** How long a failed post of the announcement waits before it is tried again. */
export function postRetryWaitMs(context: { postFailure?: DiscordFailure; postRetries?: number }): number {
  return discordRetryWaitMs(context.postFailure, context.postRetries ?? 0);
}

/** `a2a.retry` for retry number `attempt` (from 1), emitted before its backoff. */
export function retryEvent(
  context: RetryingContext & { runId?: string },
  error: A2AErrorInfo | undefined,
  attempt: number,
): A2AEventOf<"a2a.retry"> {
  const { code, category, message, maxAttempts } = error as A2AErrorInfo;
  const { trace } = context;
  return {
    type: "a2a.retry",
    ...envelopeOf(trace, context.lastAt),
    ...defined({ runId: context.runId }),
    data: {
      errorCode: code,
      errorCategory: category,
      errorMessage: message,
      attempt,
      maxAttempts,
      backoffMs: context.backoffMs ?? 0,
      conversationId: trace.conversationId,
      fromAgent: trace.fromAgent,
      toAgent: trace.toAgent,
    },
  };
}

/**
 * Jitter for machines, which may not call Math.random: a seed in context survives a snapshot. mulberry32,
 * written out because no maintained package offers a pure `(seed) => [value, nextSeed]` step.
 */
export function nextRandom(seed: number): { value: number; seed: number } {
  const next = (seed + 0x6d2b79f5) | 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return { value: ((t ^ (t >>> 14)) >>> 0) / 4294967296, seed: next };
}
