import { assign, emit, sendTo, setup } from "xstate";
import { z } from "zod";
import {
  type A2AErrorInfo,
  type A2AEventOf,
  type AnnounceSkipReason,
  buildAgentToAgentAnnounceContext,
  classifyA2AError,
  classifyMessageIntent,
  decideAnnounce,
  isAnnounceSkip,
  resolveEffectivePingPongTurns,
} from "../services/index.js";
import { errorMessage, errorOf, failureAt } from "./actorEvents.js";
import type { TimerEvent } from "./Due.js";
import { type AgentStepOutput, agentStepActor, postAnnouncementActor } from "./gatewayActors.js";
import { parseMachineInput } from "./MachineInputError.js";
import { type PingPongOutput, type PingPongTerminationReason, pingPongMachine } from "./pingPongMachine.js";
import { type ReplyWaitOutput, replyWaitMachine } from "./replyWaitMachine.js";
import { envelopeOf, epochMs, type FlowTrace, nonEmpty, positiveMs, RetryPolicySchema } from "./schemas.js";

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
});
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
  announceSkipReason?: AnnounceSkipReason | "announce_skip" | "announce_failed";
  announceText?: string;
}

export type A2AFlowEvent = TimerEvent<"BACKOFF_ELAPSED">;

/** How a `sessions_send` flow ended (the runtime's A2AFlowResult adds the "accepted"/"timeout" statuses). */
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

type Emitted = A2AEventOf<"a2a.response"> | A2AEventOf<"a2a.complete">;

const ANNOUNCE_STEP_MESSAGE = "Agent-to-agent announce step.";

/**
 * One `sessions_send` from start to end (designs 000 and 001): wait for the reply (with retries),
 * steer the ping-pong, announce only when it is worth an LLM call, and always finish with
 * `a2a.complete`, whether the reply came, was blocked or timed out, in sync and async mode alike.
 */
export const a2aFlowMachine = setup({
  types: {
    input: {} as A2AFlowInput,
    context: {} as A2AFlowContext,
    events: {} as A2AFlowEvent,
    output: {} as A2AFlowOutput,
    emitted: {} as Emitted,
  },
  actors: {
    replyWait: replyWaitMachine,
    pingPong: pingPongMachine,
    announceStep: agentStepActor,
    postAnnouncement: postAnnouncementActor,
  },
  guards: {
    replyArrived: (_, output: ReplyWaitOutput) => output.outcome === "replied",
    announceWanted: ({ context }) => announceDecision(context).run,
    announceSilent: (_, output: AgentStepOutput) => !output.reply?.trim() || isAnnounceSkip(output.reply),
  },
  actions: {
    recordReply: assign(({ context }, output: ReplyWaitOutput) => ({
      ...(output.outcome === "replied" && output.reply !== undefined
        ? { primaryReply: output.reply, reply: output.reply }
        : {}),
      retryAttempts: output.retryAttempts,
      lastAt: Math.max(context.lastAt, output.at),
      ...(output.outcome === "blocked" ? { error: output.error, outcomeMessage: output.outcomeMessage } : {}),
    })),
    recordWaitCrash: assign(({ context }, error: unknown) => ({
      error: classifyA2AError({
        waitStatus: "error",
        waitError: errorMessage(error),
        attempt: context.retryAttempts,
      }),
    })),
    emitFirstResponse: emit(({ context }): Emitted => ({
      type: "a2a.response",
      ...envelopeOf(context.trace, context.lastAt),
      data: {
        turn: 0,
        speakerSessionKey: context.targetSessionKey,
        ...(context.error === undefined
          ? { outcome: "ok" as const, ...(context.reply === undefined ? {} : { reply: context.reply }) }
          : {
              outcome: "blocked" as const,
              ...(context.outcomeMessage ? { reply: context.outcomeMessage } : {}),
            }),
        messageIntent: context.trace.messageIntent,
        effectiveTurns: context.effectiveTurns,
      },
    })),
    recordPingPong: assign(({ context }, output: PingPongOutput) => ({
      actualTurns: output.actualTurns,
      terminationReason: output.terminationReason,
      earlyTermination: output.earlyTermination,
      ...(output.latestReply === undefined ? {} : { reply: output.latestReply }),
      lastAt: Math.max(context.lastAt, output.at),
    })),
    recordPingPongCrash: assign({ terminationReason: "no_reply" as const }),
    skipAnnounce: assign(({ context }) => ({ announceSkipReason: announceDecision(context).reason })),
    recordAnnounce: assign(({ context }, output: AgentStepOutput) => ({
      announced: true,
      announceText: output.reply as string,
      lastAt: Math.max(context.lastAt, output.at),
    })),
    announceSkipped: assign(({ context }, output: AgentStepOutput) => ({
      announceSkipReason: "announce_skip" as const,
      lastAt: Math.max(context.lastAt, output.at),
    })),
    announceFailed: assign({ announceSkipReason: "announce_failed" as const }),
    noteTime: assign(({ context }, at: number) => ({ lastAt: Math.max(context.lastAt, at) })),
    noteFailureTime: assign(({ context }, error: unknown) => ({ lastAt: failureAt(error, context.lastAt) })),
    emitComplete: emit(({ context }): Emitted => ({
      type: "a2a.complete",
      ...envelopeOf(context.trace, context.lastAt),
      data: {
        retryAttempts: context.retryAttempts,
        ...(context.error === undefined
          ? {}
          : { errorCode: context.error.code, errorCategory: context.error.category }),
        messageIntent: context.trace.messageIntent,
        configuredMaxTurns: context.configuredMaxTurns,
        effectiveTurns: context.effectiveTurns,
        actualTurns: context.actualTurns,
        earlyTermination: context.earlyTermination,
        ...(context.terminationReason === undefined ? {} : { terminationReason: context.terminationReason }),
        announced: context.announced,
        announceSkipped: !context.announced,
        ...(context.announceSkipReason === undefined
          ? {}
          : { announceSkipReason: context.announceSkipReason }),
        ...(context.announceText === undefined ? {} : { announceText: context.announceText }),
      },
    })),
  },
}).createMachine({
  id: "a2aFlow",
  context: ({ input }) => {
    const parsed = parseMachineInput("a2aFlowMachine", A2AFlowInputSchema, input);
    const classified = classifyMessageIntent(parsed.message);
    return {
      ...parsed,
      trace: {
        conversationId: parsed.conversationId,
        ...(parsed.routeKey === undefined ? {} : { routeKey: parsed.routeKey }),
        fromAgent: parsed.fromAgent,
        toAgent: parsed.toAgent,
        ...(parsed.requesterSessionKey === undefined
          ? {}
          : { requesterSessionKey: parsed.requesterSessionKey }),
        targetSessionKey: parsed.targetSessionKey,
        messageIntent: classified.intent,
        mode: parsed.mode,
      },
      effectiveTurns: resolveEffectivePingPongTurns({
        configMaxTurns: parsed.configuredMaxTurns,
        classifiedIntent: classified,
        explicitSkipPingPong: parsed.skipPingPong,
      }),
      lastAt: parsed.startedAt,
      retryAttempts: 0,
      actualTurns: 0,
      earlyTermination: false,
      announced: false,
    };
  },
  initial: "awaitingReply",
  states: {
    awaitingReply: {
      invoke: {
        id: "replyWait",
        src: "replyWait",
        input: ({ context }) => ({
          sessionKey: context.targetSessionKey,
          message: context.message,
          idempotencyKey: context.idempotencyKey,
          maxWaitMs: context.maxWaitMs,
          chunkMs: context.chunkMs,
          retry: context.retry,
          startedAt: context.startedAt,
          seed: context.seed,
          trace: context.trace,
        }),
        onDone: [
          {
            guard: { type: "replyArrived", params: ({ event }) => event.output },
            target: "pingPong",
            actions: [{ type: "recordReply", params: ({ event }) => event.output }, "emitFirstResponse"],
          },
          {
            target: "completed",
            actions: [{ type: "recordReply", params: ({ event }) => event.output }, "emitFirstResponse"],
          },
        ],
        onError: {
          target: "completed",
          actions: [{ type: "recordWaitCrash", params: errorOf }, "emitFirstResponse"],
        },
      },
      on: { BACKOFF_ELAPSED: { actions: sendTo("replyWait", ({ event }) => event) } },
    },
    pingPong: {
      invoke: {
        id: "pingPong",
        src: "pingPong",
        input: ({ context }) => ({
          ...(context.requesterSessionKey === undefined
            ? {}
            : { requesterSessionKey: context.requesterSessionKey }),
          targetSessionKey: context.targetSessionKey,
          originalMessage: context.message,
          messageIntent: context.trace.messageIntent,
          effectiveTurns: context.effectiveTurns,
          autoTerminate: context.autoTerminate,
          ...(context.reply === undefined ? {} : { primaryReply: context.reply }),
          idempotencyKey: context.idempotencyKey,
          startedAt: context.lastAt,
          trace: context.trace,
        }),
        onDone: {
          target: "deciding",
          actions: { type: "recordPingPong", params: ({ event }) => event.output },
        },
        onError: {
          target: "deciding",
          actions: ["recordPingPongCrash", { type: "noteFailureTime", params: errorOf }],
        },
      },
    },
    deciding: {
      always: [
        { guard: "announceWanted", target: "announcing" },
        { target: "completed", actions: "skipAnnounce" },
      ],
    },
    announcing: {
      invoke: {
        id: "announceStep",
        src: "announceStep",
        input: ({ context }) => ({
          sessionKey: context.targetSessionKey,
          message: ANNOUNCE_STEP_MESSAGE,
          extraSystemPrompt: buildAgentToAgentAnnounceContext({
            originalMessage: context.message,
            ...(context.primaryReply === undefined ? {} : { roundOneReply: context.primaryReply }),
            ...(context.reply === undefined ? {} : { latestReply: context.reply }),
          }),
          idempotencyKey: `${context.idempotencyKey}:announce`,
        }),
        onDone: [
          {
            guard: { type: "announceSilent", params: ({ event }) => event.output },
            target: "completed",
            actions: { type: "announceSkipped", params: ({ event }) => event.output },
          },
          { target: "posting", actions: { type: "recordAnnounce", params: ({ event }) => event.output } },
        ],
        onError: {
          target: "completed",
          actions: ["announceFailed", { type: "noteFailureTime", params: errorOf }],
        },
      },
    },
    posting: {
      invoke: {
        id: "postAnnouncement",
        src: "postAnnouncement",
        input: ({ context }) => ({
          targetSessionKey: context.targetSessionKey,
          announceTarget: context.announceTarget as { channel: string; to?: string },
          text: context.announceText as string,
          nonce: `${context.idempotencyKey}:announce`,
        }),
        // A failed post is logged by the runtime; the flow still completes and reports the text (design 000 §1.2).
        onDone: {
          target: "completed",
          actions: { type: "noteTime", params: ({ event }) => event.output.at },
        },
        onError: { target: "completed", actions: { type: "noteFailureTime", params: errorOf } },
      },
    },
    completed: { type: "final", entry: "emitComplete" },
  },
  output: ({ context }): A2AFlowOutput => ({
    status: context.error === undefined ? "ok" : "blocked",
    conversationId: context.conversationId,
    ...(context.reply === undefined ? {} : { reply: context.reply }),
    retryAttempts: context.retryAttempts,
    actualTurns: context.actualTurns,
    ...(context.terminationReason === undefined ? {} : { terminationReason: context.terminationReason }),
    announced: context.announced,
    ...(context.announceText === undefined ? {} : { announceText: context.announceText }),
    ...(context.error === undefined ? {} : { error: context.error }),
  }),
});

function announceDecision(context: A2AFlowContext) {
  return decideAnnounce({
    announceTarget: context.announceTarget,
    ...(context.requesterSessionKey === undefined
      ? {}
      : { requesterSessionKey: context.requesterSessionKey }),
    targetSessionKey: context.targetSessionKey,
    ...(context.reply === undefined ? {} : { latestReply: context.reply }),
  });
}
