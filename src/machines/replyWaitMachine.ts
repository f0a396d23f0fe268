import { assign, emit, setup } from "xstate";
import { z } from "zod";
import {
  type A2AErrorInfo,
  type A2AEventOf,
  buildNoReplyOutcomeMessage,
  canRetry,
  retryResends,
} from "../policies/index.js";
import { errorMessage, errorOf, failureAt } from "./actorEvents.js";
import { classifyFailure, type FailureFacts, retryBackoff, retryEvent } from "./flowRetry.js";
import {
  type AgentWaitOutput,
  agentWaitActor,
  type ReadReplyOutput,
  readReplyActor,
  type SendMessageOutput,
  sendMessageActor,
} from "./gatewayActors.js";
import { parseMachineInput } from "./MachineInputError.js";
import {
  catalogOf,
  defined,
  envelopeOf,
  epochMs,
  FlowTraceSchema,
  LanguageSchema,
  nonEmpty,
  positiveMs,
  RetryPolicySchema,
} from "./schemas.js";

export const ReplyWaitInputSchema = z.object({
  sessionKey: nonEmpty,
  message: z.string(),
  extraSystemPrompt: z.string().optional(),
  idempotencyKey: nonEmpty,
  maxWaitMs: positiveMs,
  chunkMs: positiveMs,
  retry: RetryPolicySchema,
  /** When the flow started; the first chunk's clock starts here. */
  startedAt: epochMs,
  /** Seeds the backoff jitter (the runtime draws it from its injected `random`). */
  seed: z.int().default(0),
  trace: FlowTraceSchema,
  language: LanguageSchema.optional(),
});
/** What `replyWaitMachine` starts from: the run to wait for, the retry settings, the clock's time. */
export type ReplyWaitInput = z.input<typeof ReplyWaitInputSchema>;

/** Why the last wait failed, as classifyA2AError wants it (kept serialisable for snapshots). */
interface WaitFailure extends FailureFacts {
  maxWaitExceeded?: boolean;
}

export interface ReplyWaitContext extends z.output<typeof ReplyWaitInputSchema> {
  runId?: string;
  /** Retries made so far; `a2a.retry` reports the next one as `retryAttempts + 1`. */
  retryAttempts: number;
  /** Time spent in agentWait on the current run; backoffs never count. */
  waitedMs: number;
  /** The latest wall-clock time the machine was told of. */
  lastAt: number;
  failure?: WaitFailure;
  lastError?: A2AErrorInfo;
  /** The backoff of the retry under way; the machine waits it out with `after: { backoffDelay }`. */
  backoffMs?: number;
  reply?: string;
}

/** `at` is the latest wall-clock time the machine knew when it ended. */
export type ReplyWaitOutput =
  | { outcome: "replied"; reply?: string; retryAttempts: number; at: number }
  | { outcome: "blocked"; error: A2AErrorInfo; retryAttempts: number; outcomeMessage: string; at: number };

type Emitted = A2AEventOf<"a2a.send"> | A2AEventOf<"a2a.retry">;

/**
 * Waits for the target agent's reply to one message, in chunks up to `maxWaitMs`; a failure backs off,
 * then waits on the same run again or resends with the same idempotency key. Ends `replied` or `blocked`.
 */
export const replyWaitMachine = setup({
  types: {
    input: {} as ReplyWaitInput,
    context: {} as ReplyWaitContext,
    output: {} as ReplyWaitOutput,
    emitted: {} as Emitted,
  },
  actors: {
    sendMessage: sendMessageActor,
    agentWait: agentWaitActor,
    readReply: readReplyActor,
  },
  guards: {
    isFirstSend: ({ context }) => context.runId === undefined,
    replyReady: (_, output: AgentWaitOutput) => output.status === "ok",
    waitTimeLeft: ({ context }, output: AgentWaitOutput) =>
      output.status === "timeout" && context.waitedMs + waitedIn(context, output) < context.maxWaitMs,
    retryAllowed: ({ context }) =>
      context.lastError !== undefined && canRetry(context.lastError, context.retry.enabled),
    // A failure before any run started (agent() itself failed) has no run to wait on again: it resends.
    resendsMessage: ({ context }) =>
      context.lastError !== undefined && (context.runId === undefined || retryResends(context.lastError)),
  },
  actions: {
    recordRun: assign((_, output: SendMessageOutput) => ({
      runId: output.runId,
      lastAt: output.at,
      waitedMs: 0,
    })),
    emitSent: emit(({ context }, output: SendMessageOutput): Emitted => ({
      type: "a2a.send",
      ...envelopeOf(context.trace, output.at),
      runId: output.runId,
      data: {
        targetSessionKey: context.trace.targetSessionKey,
        ...defined({ requesterSessionKey: context.trace.requesterSessionKey }),
        message: context.message,
        messageIntent: context.trace.messageIntent,
        idempotencyKey: context.idempotencyKey,
        ...defined({ mode: context.trace.mode }),
      },
    })),
    countWaited: assign(({ context }, output: AgentWaitOutput) => ({
      waitedMs: context.waitedMs + waitedIn(context, output),
      lastAt: output.at,
    })),
    recordWaitFailure: assign(({ context }, output: AgentWaitOutput) => {
      const waitedMs = context.waitedMs + waitedIn(context, output);
      const maxWaitExceeded = output.status === "timeout" && waitedMs >= context.maxWaitMs;
      return {
        waitedMs,
        lastAt: output.at,
        failure: {
          waitStatus: output.status,
          ...defined({ waitError: output.error }),
          maxWaitExceeded,
        },
      };
    }),
    recordGatewayFailure: assign(({ context }, error: unknown) => ({
      failure: { gatewayError: errorMessage(error) },
      lastAt: failureAt(error, context.lastAt),
    })),
    recordReply: assign((_, output: ReadReplyOutput) => ({ reply: output.reply, lastAt: output.at })),
    // The class's limit capped by retry.maxAttempts: retryAllowed, a2a.retry and the output all use it.
    classifyFailure: assign(({ context }) => ({
      lastError: classifyFailure(context, context.failure ?? {}, context.retryAttempts),
    })),
    scheduleBackoff: assign(({ context }) => retryBackoff(context, context.retryAttempts, context.lastError)),
    emitRetry: emit(({ context }) => retryEvent(context, context.lastError, context.retryAttempts + 1)),
    // The retry starts when the backoff is over: lastAt is when the failure was seen.
    startRetry: assign(({ context }) => ({
      retryAttempts: context.retryAttempts + 1,
      waitedMs: 0,
      lastAt: context.lastAt + (context.backoffMs ?? 0),
      failure: undefined,
    })),
  },
  delays: {
    backoffDelay: ({ context }) => context.backoffMs ?? 0,
  },
}).createMachine({
  id: "replyWait",
  context: ({ input }) => ({
    ...parseMachineInput("replyWaitMachine", ReplyWaitInputSchema, input),
    retryAttempts: 0,
    waitedMs: 0,
    lastAt: input.startedAt,
  }),
  initial: "sending",
  states: {
    sending: {
      invoke: {
        id: "sendMessage",
        src: "sendMessage",
        input: ({ context }) => ({
          sessionKey: context.sessionKey,
          message: context.message,
          ...defined({ extraSystemPrompt: context.extraSystemPrompt }),
          idempotencyKey: context.idempotencyKey,
        }),
        onDone: [
          {
            guard: "isFirstSend",
            target: "waiting",
            actions: [
              { type: "emitSent", params: ({ event }) => event.output },
              { type: "recordRun", params: ({ event }) => event.output },
            ],
          },
          { target: "waiting", actions: { type: "recordRun", params: ({ event }) => event.output } },
        ],
        onError: {
          target: "classifying",
          actions: { type: "recordGatewayFailure", params: errorOf },
        },
      },
    },
    waiting: {
      invoke: {
        id: "agentWait",
        src: "agentWait",
        input: ({ context }) => ({
          runId: context.runId as string,
          timeoutMs: chunkTimeoutMs(context),
        }),
        onDone: [
          { guard: { type: "replyReady", params: ({ event }) => event.output }, target: "reading" },
          {
            guard: { type: "waitTimeLeft", params: ({ event }) => event.output },
            target: "waiting",
            reenter: true,
            actions: { type: "countWaited", params: ({ event }) => event.output },
          },
          {
            target: "classifying",
            actions: { type: "recordWaitFailure", params: ({ event }) => event.output },
          },
        ],
        onError: {
          target: "classifying",
          actions: { type: "recordGatewayFailure", params: errorOf },
        },
      },
    },
    reading: {
      invoke: {
        id: "readReply",
        src: "readReply",
        input: ({ context }) => ({ sessionKey: context.sessionKey }),
        onDone: { target: "replied", actions: { type: "recordReply", params: ({ event }) => event.output } },
        onError: {
          target: "classifying",
          actions: { type: "recordGatewayFailure", params: errorOf },
        },
      },
    },
    classifying: {
      entry: "classifyFailure",
      always: [{ guard: "retryAllowed", target: "retrying" }, { target: "blocked" }],
    },
    retrying: {
      entry: ["scheduleBackoff", "emitRetry"],
      after: {
        backoffDelay: [
          { guard: "resendsMessage", target: "sending", actions: "startRetry" },
          { target: "waiting", actions: "startRetry" },
        ],
      },
    },
    replied: { type: "final" },
    blocked: { type: "final" },
  },
  output: ({ context }): ReplyWaitOutput => {
    if (context.lastError === undefined || context.failure === undefined) {
      return {
        outcome: "replied",
        ...defined({ reply: context.reply }),
        retryAttempts: context.retryAttempts,
        at: context.lastAt,
      };
    }
    const failure = context.failure;
    return {
      outcome: "blocked",
      error: context.lastError,
      retryAttempts: context.retryAttempts,
      at: context.lastAt,
      outcomeMessage: buildNoReplyOutcomeMessage(
        {
          ...defined({
            waitStatus: failure.waitStatus,
            waitError: failure.waitError ?? failure.gatewayError,
          }),
          maxWaitExceeded: failure.maxWaitExceeded === true,
          maxWaitMs: context.maxWaitMs,
        },
        catalogOf(context.language),
      ),
    };
  },
});

/** What one agentWait call counts for: at least its timeout, so an instant "timeout" cannot loop forever. */
function waitedIn(context: ReplyWaitContext, output: AgentWaitOutput): number {
  const requested = chunkTimeoutMs(context);
  return Math.max(output.waitedMs ?? requested, requested);
}

/** The timeout of the next chunk: a whole chunk, or the wait time left when that is less. */
function chunkTimeoutMs(context: ReplyWaitContext): number {
  return Math.min(context.chunkMs, context.maxWaitMs - context.waitedMs);
}
