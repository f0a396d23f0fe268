import type { z } from "zod";
import {
  type A2AErrorInfo,
  type A2AEventOf,
  calculateBackoffMs,
  capMaxAttempts,
  classifyA2AError,
  type DiscordFailure,
  discordTransientBackoffMs,
} from "../policies/index.js";
import type { MessageCatalog } from "../policies/messages/messageKeys.js";
import type { AgentStepError } from "./gatewayActors.js";
import { nextRandom } from "./jitter.js";
import { envelopeOf, type FlowTrace, type RetryPolicySchema } from "./schemas.js";

// The gateway retry policy (classify the failure, retry while its class allows, back off with jitter),
// shared by the flow's steps that retry: the reply wait, each ping-pong step and the announce step,
// and the wait before a failed announcement post is tried again. Pure helpers; each machine keeps its
// own states and delays.

export type RetryPolicy = z.output<typeof RetryPolicySchema>;

/** What the classifier needs of a failure, kept serialisable for snapshots. */
export interface FailureFacts {
  waitStatus?: string;
  waitError?: string;
  gatewayError?: string;
}

/** Classifies a failure after `attempt` retries, its class's limit capped by `retry.maxAttempts`. */
export function classifyFailure(
  facts: FailureFacts,
  attempt: number,
  retry: RetryPolicy | undefined,
  catalog?: MessageCatalog,
): A2AErrorInfo {
  const classified = classifyA2AError(
    {
      ...(facts.waitStatus === undefined ? {} : { waitStatus: facts.waitStatus }),
      ...(facts.waitError === undefined ? {} : { waitError: facts.waitError }),
      ...(facts.gatewayError === undefined ? {} : { gatewayError: new Error(facts.gatewayError) }),
      attempt,
    },
    catalog,
  );
  return capMaxAttempts(classified, retry?.maxAttempts);
}

/**
 * An agent step's failure as the classifier sees it: a run that ended badly is a wait failure (its
 * status and error decide the class); a failed call (starting the run, waiting on it, reading the
 * reply) is a gateway failure, retried like a dropped connection.
 */
export function stepFailureFacts(error: AgentStepError): FailureFacts {
  if (error.source === "wait" && error.status !== undefined) {
    return { waitStatus: error.status, ...(error.message === undefined ? {} : { waitError: error.message }) };
  }
  return { gatewayError: error.message ?? `agent step failed (${error.source})` };
}

/** The backoff before retry number `attempt + 1`, with the next seed of the jitter. */
export function retryBackoff(
  retry: RetryPolicy,
  attempt: number,
  error: A2AErrorInfo,
  seed: number,
): { backoffMs: number; seed: number } {
  const drawn = nextRandom(seed);
  const backoffMs = calculateBackoffMs(attempt, error, {
    baseMs: retry.baseBackoffMs,
    maxMs: retry.maxBackoffMs,
    random: () => drawn.value,
  });
  return { backoffMs, seed: drawn.seed };
}

/**
 * How long a failed post of the announcement waits before it is tried again: Discord's Retry-After
 * for a rate limit, else 1 s, 2 s, 4 s for the first, second, third retry.
 */
export function postRetryWaitMs(context: { postFailure?: DiscordFailure; postRetries?: number }): number {
  const failure = context.postFailure;
  return failure?.kind === "rate_limit" && failure.retryAfterMs !== undefined
    ? failure.retryAfterMs
    : discordTransientBackoffMs((context.postRetries ?? 0) + 1);
}

/** `a2a.retry` for retry number `attempt` (from 1), emitted before its backoff. */
export function retryEvent(p: {
  trace: FlowTrace;
  at: number;
  runId?: string;
  error: A2AErrorInfo;
  attempt: number;
  backoffMs: number;
}): A2AEventOf<"a2a.retry"> {
  return {
    type: "a2a.retry",
    ...envelopeOf(p.trace, p.at),
    ...(p.runId === undefined ? {} : { runId: p.runId }),
    data: {
      errorCode: p.error.code,
      errorCategory: p.error.category,
      errorMessage: p.error.message,
      attempt: p.attempt,
      maxAttempts: p.error.maxAttempts,
      backoffMs: p.backoffMs,
      conversationId: p.trace.conversationId,
      fromAgent: p.trace.fromAgent,
      toAgent: p.trace.toAgent,
    },
  };
}
