import { assign, emit, setup } from "xstate";
import {
  type A2AEventOf,
  announceChannelAllowed,
  announceChannelId,
  buildAgentToAgentAnnounceContext,
  canRetry,
  classifyA2AError,
  classifyDiscordFailure,
  classifyMessageIntent,
  discordRetryAllowed,
  isAnnounceSkip,
  resolveEffectivePingPongTurns,
} from "../policies/index.js";
import {
  type A2AFlowContext,
  type A2AFlowInput,
  A2AFlowInputSchema,
  type A2AFlowOutput,
} from "./a2aFlowContext.js";
import { announceDecision, completeData, firstResponseEvent, flowOutput } from "./a2aFlowReport.js";
import { errorMessage, errorOf, failureAt } from "./actorEvents.js";
import { classifyFailure, postRetryWaitMs, retryBackoff, retryEvent, stepFailureFacts } from "./flowRetry.js";
import { type AgentStepOutput, agentStepActor, postAnnouncementActor } from "./gatewayActors.js";
import { parseMachineInput } from "./MachineInputError.js";
import type { PingPongOutput } from "./pingPongContext.js";
import { pingPongMachine } from "./pingPongMachine.js";
import { type ReplyWaitOutput, replyWaitMachine } from "./replyWaitMachine.js";
import { catalogOf, defined, envelopeOf, FlowTraceSchema } from "./schemas.js";

type Emitted = A2AEventOf<"a2a.response"> | A2AEventOf<"a2a.retry"> | A2AEventOf<"a2a.complete">;

/**
 * One `sessions_send`: wait for the reply, steer the ping-pong, announce, and always finish with
 * `a2a.complete`. A later step that fails for good is reported, but the reply stands (status "ok").
 */
export const a2aFlowMachine = setup({
  types: {
    input: {} as A2AFlowInput,
    context: {} as A2AFlowContext,
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
    stepFailed: (_, output: AgentStepOutput) => output.error !== undefined,
    channelNotAllowed: ({ context }) => {
      const channelId = announceChannelId(context.announceTarget);
      return channelId !== undefined && !announceChannelAllowed(channelId, context.allowedChannels ?? []);
    },
    announceRetryAllowed: ({ context }) =>
      context.lastStepError !== undefined && canRetry(context.lastStepError, context.retry.enabled),
    postRetryAllowed: ({ context }) => discordRetryAllowed(context.postFailure, context.postRetries ?? 0),
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
      error: classifyA2AError(
        { waitStatus: "error", waitError: errorMessage(error), attempt: context.retryAttempts },
        catalogOf(context.language),
      ),
    })),
    emitFirstResponse: emit(({ context }): Emitted => firstResponseEvent(context)),
    recordPingPong: assign(({ context }, output: PingPongOutput) => ({
      actualTurns: output.actualTurns,
      terminationReason: output.terminationReason,
      earlyTermination: output.earlyTermination,
      ...defined({ reply: output.latestReply }),
      retryAttempts: context.retryAttempts + (output.retryAttempts ?? 0),
      ...defined({ stepError: output.error }),
      lastAt: Math.max(context.lastAt, output.at),
    })),
    recordPingPongCrash: assign({ terminationReason: "no_reply" as const }),
    skipAnnounce: assign(({ context }) => ({ announceSkipReason: announceDecision(context).reason })),
    recordAnnounce: assign(({ context }, output: AgentStepOutput) => ({
      announceText: output.reply as string,
      lastAt: Math.max(context.lastAt, output.at),
    })),
    markAnnounced: assign({ announced: true }),
    refuseChannel: assign({ announceSkipReason: "channel_not_allowed" as const }),
    recordAnnounceFailure: assign(({ context }, output: AgentStepOutput) => ({
      announceFailure: output.error,
      lastAt: Math.max(context.lastAt, output.at),
    })),
    recordAnnounceCrash: assign(({ context }, error: unknown) => ({
      announceFailure: { source: "gateway" as const, message: errorMessage(error) },
      lastAt: failureAt(error, context.lastAt),
    })),
    classifyAnnounceFailure: assign(({ context }) => ({
      lastStepError: classifyFailure(
        context,
        stepFailureFacts(context.announceFailure ?? { source: "gateway" }),
        context.announceRetries ?? 0,
      ),
    })),
    scheduleAnnounceRetry: assign(({ context }) =>
      retryBackoff(context, context.announceRetries ?? 0, context.lastStepError),
    ),
    emitAnnounceRetry: emit(({ context }) =>
      retryEvent(context, context.lastStepError, (context.announceRetries ?? 0) + 1),
    ),
    // Each retry starts when its wait is over: lastAt is when the failure was seen.
    startAnnounceRetry: assign(({ context }) => ({
      announceRetries: (context.announceRetries ?? 0) + 1,
      retryAttempts: context.retryAttempts + 1,
      lastAt: context.lastAt + (context.backoffMs ?? 0),
      announceFailure: undefined,
    })),
    giveUpAnnounce: assign(({ context }) => ({
      announceSkipReason: "announce_failed" as const,
      ...(context.lastStepError === undefined
        ? {}
        : { stepError: context.lastStepError, announceError: context.lastStepError.message }),
    })),
    recordPostFailure: assign(({ context }, error: unknown) => ({
      postFailure: { ...classifyDiscordFailure(error), message: errorMessage(error) },
      lastAt: failureAt(error, context.lastAt),
    })),
    startPostRetry: assign(({ context }) => ({
      postRetries: (context.postRetries ?? 0) + 1,
      lastAt: context.lastAt + postRetryWaitMs(context),
    })),
    giveUpPost: assign(({ context }) => ({
      announceSkipReason: "post_failed" as const,
      announceError: context.postFailure?.message ?? "the announcement could not be posted",
    })),
    announceSkipped: assign(({ context }, output: AgentStepOutput) => ({
      announceSkipReason: "announce_skip" as const,
      lastAt: Math.max(context.lastAt, output.at),
    })),
    noteTime: assign(({ context }, at: number) => ({ lastAt: Math.max(context.lastAt, at) })),
    noteFailureTime: assign(({ context }, error: unknown) => ({ lastAt: failureAt(error, context.lastAt) })),
    emitComplete: emit(({ context }): Emitted => ({
      type: "a2a.complete",
      ...envelopeOf(context.trace, context.lastAt),
      data: completeData(context),
    })),
  },
  delays: {
    // Both are entered when the failure was seen (lastAt) and wait from there.
    backoffDelay: ({ context }) => context.backoffMs ?? 0,
    retryDelay: ({ context }) => postRetryWaitMs(context),
  },
}).createMachine({
  id: "a2aFlow",
  context: ({ input }) => {
    const parsed = parseMachineInput("a2aFlowMachine", A2AFlowInputSchema, input);
    const classified = classifyMessageIntent(parsed.message);
    return {
      ...parsed,
      // The input's trace fields (the schema drops the rest), with the message's intent.
      trace: FlowTraceSchema.parse(defined({ ...parsed, messageIntent: classified.intent })),
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
          ...defined({ language: context.language }),
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
    },
    pingPong: {
      invoke: {
        id: "pingPong",
        src: "pingPong",
        input: ({ context }) => ({
          ...defined({ requesterSessionKey: context.requesterSessionKey }),
          targetSessionKey: context.targetSessionKey,
          originalMessage: context.message,
          messageIntent: context.trace.messageIntent,
          effectiveTurns: context.effectiveTurns,
          autoTerminate: context.autoTerminate,
          ...defined({ primaryReply: context.reply }),
          idempotencyKey: context.idempotencyKey,
          startedAt: context.lastAt,
          trace: context.trace,
          retry: context.retry,
          // Its own jitter sequence: the reply wait drew from `seed`.
          seed: context.seed + 1,
          ...defined({ language: context.language }),
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
          message: catalogOf(context.language).announceStepMessage,
          extraSystemPrompt: buildAgentToAgentAnnounceContext(
            {
              originalMessage: context.message,
              ...defined({ roundOneReply: context.primaryReply, latestReply: context.reply }),
            },
            catalogOf(context.language),
          ),
          idempotencyKey: `${context.idempotencyKey}:announce`,
        }),
        onDone: [
          {
            guard: { type: "stepFailed", params: ({ event }) => event.output },
            target: "announceFailing",
            actions: { type: "recordAnnounceFailure", params: ({ event }) => event.output },
          },
          {
            guard: { type: "announceSilent", params: ({ event }) => event.output },
            target: "completed",
            actions: { type: "announceSkipped", params: ({ event }) => event.output },
          },
          {
            // The text still reaches the gateway (announceText); only the Discord post is refused.
            guard: "channelNotAllowed",
            target: "completed",
            actions: [{ type: "recordAnnounce", params: ({ event }) => event.output }, "refuseChannel"],
          },
          { target: "posting", actions: { type: "recordAnnounce", params: ({ event }) => event.output } },
        ],
        onError: { target: "announceFailing", actions: { type: "recordAnnounceCrash", params: errorOf } },
      },
    },
    announceFailing: {
      entry: "classifyAnnounceFailure",
      always: [
        { guard: "announceRetryAllowed", target: "announceRetrying" },
        { target: "completed", actions: "giveUpAnnounce" },
      ],
    },
    announceRetrying: {
      entry: ["scheduleAnnounceRetry", "emitAnnounceRetry"],
      after: { backoffDelay: { target: "announcing", actions: "startAnnounceRetry" } },
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
        onDone: {
          target: "completed",
          actions: [{ type: "noteTime", params: ({ event }) => event.output.at }, "markAnnounced"],
        },
        onError: { target: "postFailing", actions: { type: "recordPostFailure", params: errorOf } },
      },
    },
    // A failed post never blocked a flow: it still completes, reporting the text and why it was not posted.
    postFailing: {
      always: [
        { guard: "postRetryAllowed", target: "postRetrying" },
        { target: "completed", actions: "giveUpPost" },
      ],
    },
    postRetrying: {
      after: { retryDelay: { target: "posting", actions: "startPostRetry" } },
    },
    completed: { type: "final", entry: "emitComplete" },
  },
  output: ({ context }): A2AFlowOutput => flowOutput(context),
});
