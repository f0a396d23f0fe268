import { assign, emit, setup } from "xstate";
import {
  type A2AEventOf,
  buildAgentToAgentReplyContext,
  canRetry,
  cutText,
  EARLY_TERMINATION_REASONS,
  shouldTerminatePingPong,
} from "../policies/index.js";
import { errorMessage, errorOf, failureAt } from "./actorEvents.js";
import { classifyFailure, retryBackoff, retryEvent, stepFailureFacts } from "./flowRetry.js";
import { type AgentStepOutput, agentStepActor } from "./gatewayActors.js";
import { parseMachineInput } from "./MachineInputError.js";
import {
  type PingPongContext,
  type PingPongInput,
  PingPongInputSchema,
  type PingPongOutput,
  type PingPongTerminationReason,
} from "./pingPongContext.js";
import { catalogOf, defined, envelopeOf } from "./schemas.js";

/** Who speaks at a turn: the requester answers the target's reply at turn 1, then they alternate. */
export function speakerAt(
  context: Pick<PingPongContext, "requesterSessionKey" | "targetSessionKey">,
  turn: number,
) {
  const requesterSpeaks = turn % 2 === 1;
  return {
    role: requesterSpeaks ? ("requester" as const) : ("target" as const),
    sessionKey: requesterSpeaks ? (context.requesterSessionKey ?? "") : context.targetSessionKey,
  };
}

/** The recent conversation, briefly, so an agent does not repeat what was said. */
function previousTurnSummary(context: PingPongContext): string | undefined {
  const transcript = [context.primaryReply ?? "", ...context.replies]
    .map((text, i) => ({ text, role: i % 2 === 0 ? "target" : "requester" }))
    .filter((entry) => entry.text.trim() !== "")
    .slice(-3);
  if (transcript.length === 0) return undefined;
  return transcript.map((entry) => `- ${entry.role}: ${cutText(entry.text.trim(), 200)}`).join("\n");
}

function decide(context: PingPongContext, output: AgentStepOutput) {
  return shouldTerminatePingPong({
    replyText: output.reply ?? "",
    turn: context.turn,
    maxTurns: context.effectiveTurns,
    previousReplies: context.replies,
  });
}

type Emitted = A2AEventOf<"a2a.response"> | A2AEventOf<"a2a.retry">;
type StepDone = { event: { output: AgentStepOutput } };

/** The transition that ends the conversation after a step, when `guard` holds, for `reason`. */
function endTurn(
  guard: "noReply" | "explicitSkip" | "repetitionDetected" | "minimalContent" | "conclusionDetected",
  reason: PingPongTerminationReason,
) {
  return {
    guard: { type: guard, params: ({ event }: StepDone) => event.output },
    target: "done" as const,
    actions: [
      "countStep" as const,
      { type: "terminate" as const, params: reason },
      {
        type: "emitResponse" as const,
        params: ({ event }: StepDone) => ({ output: event.output, reason, at: event.output.at }),
      },
    ],
  };
}

/**
 * Steers the follow-up conversation: alternating agent steps until a guard holds after a reply or the
 * turns run out. A step failing past its retries ends it `no_reply`, with the error in the output.
 */
export const pingPongMachine = setup({
  types: {
    input: {} as PingPongInput,
    context: {} as PingPongContext,
    output: {} as PingPongOutput,
    emitted: {} as Emitted,
  },
  actors: { agentStep: agentStepActor },
  guards: {
    pingPongSkipped: ({ context }) =>
      context.effectiveTurns === 0 ||
      !context.requesterSessionKey ||
      context.requesterSessionKey === context.targetSessionKey,
    noPrimaryReply: ({ context }) => !context.primaryReply?.trim(),
    stepFailed: (_, output: AgentStepOutput) => output.error !== undefined,
    noReply: (_, output: AgentStepOutput) => !output.reply?.trim(),
    explicitSkip: ({ context }, output: AgentStepOutput) =>
      decide(context, output).reason === "explicit_skip",
    repetitionDetected: ({ context }, output: AgentStepOutput) =>
      context.autoTerminate && decide(context, output).reason === "repetition_detected",
    minimalContent: ({ context }, output: AgentStepOutput) =>
      context.autoTerminate && decide(context, output).reason === "minimal_content",
    conclusionDetected: ({ context }, output: AgentStepOutput) =>
      context.autoTerminate && decide(context, output).reason === "conclusion_detected",
    lastTurn: ({ context }) => context.turn >= context.effectiveTurns,
    retryAllowed: ({ context }) =>
      context.lastError !== undefined && canRetry(context.lastError, context.retry?.enabled === true),
  },
  actions: {
    terminate: assign((_, reason: PingPongTerminationReason) => ({ terminationReason: reason })),
    countStep: assign(({ context, event }) => ({
      actualTurns: context.actualTurns + 1,
      lastAt: Math.max(context.lastAt, outputAt(event)),
    })),
    acceptReply: assign(({ context }, output: AgentStepOutput) => ({
      replies: [...context.replies, output.reply as string],
      latestReply: output.reply as string,
    })),
    nextTurn: assign(({ context }) => ({ turn: context.turn + 1, stepRetries: 0 })),
    recordStepFailure: assign(({ context }, output: AgentStepOutput) => ({
      stepFailure: output.error,
      lastAt: Math.max(context.lastAt, output.at),
    })),
    recordStepCrash: assign(({ context }, error: unknown) => ({
      stepFailure: { source: "gateway" as const, message: errorMessage(error) },
      lastAt: failureAt(error, context.lastAt),
    })),
    classifyStepFailure: assign(({ context }) => ({
      lastError: classifyFailure(
        context,
        stepFailureFacts(context.stepFailure ?? { source: "gateway" }),
        context.stepRetries ?? 0,
      ),
    })),
    scheduleBackoff: assign(({ context }) =>
      retryBackoff(context, context.stepRetries ?? 0, context.lastError),
    ),
    emitRetry: emit(({ context }) => retryEvent(context, context.lastError, (context.stepRetries ?? 0) + 1)),
    // The retry starts when the backoff is over: lastAt is when the failure was seen.
    startRetry: assign(({ context }) => ({
      stepRetries: (context.stepRetries ?? 0) + 1,
      retryAttempts: (context.retryAttempts ?? 0) + 1,
      lastAt: context.lastAt + (context.backoffMs ?? 0),
      stepFailure: undefined,
    })),
    giveUp: assign(({ context }) => ({ error: context.lastError, terminationReason: "no_reply" as const })),
    emitResponse: emit(
      (
        { context },
        p: { output?: AgentStepOutput; reason?: PingPongTerminationReason; at: number },
      ): Emitted => ({
        type: "a2a.response",
        ...envelopeOf(context.trace, p.at),
        data: {
          turn: context.turn,
          speakerSessionKey: speakerAt(context, context.turn).sessionKey,
          ...(p.output?.reply === undefined ? {} : { reply: p.output.reply }),
          messageIntent: context.messageIntent,
          effectiveTurns: context.effectiveTurns,
          ...defined({ terminationReason: p.reason }),
        },
      }),
    ),
  },
  delays: {
    // Entered when the failure was seen (lastAt): the retry starts a backoff later.
    backoffDelay: ({ context }) => context.backoffMs ?? 0,
  },
}).createMachine({
  id: "pingPong",
  context: ({ input }) => {
    const parsed = parseMachineInput("pingPongMachine", PingPongInputSchema, input);
    return {
      ...parsed,
      turn: 1,
      actualTurns: 0,
      lastAt: parsed.startedAt,
      replies: [],
      ...defined({ latestReply: parsed.primaryReply }),
    };
  },
  initial: "starting",
  states: {
    starting: {
      always: [
        { guard: "pingPongSkipped", target: "done", actions: { type: "terminate", params: "skipped" } },
        { guard: "noPrimaryReply", target: "done", actions: { type: "terminate", params: "no_reply" } },
        { target: "turn" },
      ],
    },
    turn: {
      invoke: {
        id: "agentStep",
        src: "agentStep",
        input: ({ context }) => {
          const speaker = speakerAt(context, context.turn);
          return {
            sessionKey: speaker.sessionKey,
            message: context.latestReply ?? "",
            extraSystemPrompt: buildAgentToAgentReplyContext(
              {
                requesterSessionKey: context.requesterSessionKey ?? "",
                targetSessionKey: context.targetSessionKey,
                currentRole: speaker.role,
                turn: context.turn,
                maxTurns: context.effectiveTurns,
                originalMessage: context.originalMessage,
                messageIntent: context.messageIntent,
                ...defined({ previousTurnSummary: previousTurnSummary(context) }),
              },
              catalogOf(context.language),
            ),
            idempotencyKey: `${context.idempotencyKey}:turn:${context.turn}`,
          };
        },
        onDone: [
          {
            guard: { type: "stepFailed", params: ({ event }) => event.output },
            target: "failing",
            actions: { type: "recordStepFailure", params: ({ event }) => event.output },
          },
          endTurn("noReply", "no_reply"),
          endTurn("explicitSkip", "explicit_skip"),
          endTurn("repetitionDetected", "repetition_detected"),
          endTurn("minimalContent", "minimal_content"),
          endTurn("conclusionDetected", "conclusion_detected"),
          {
            guard: "lastTurn",
            target: "done",
            actions: [
              "countStep",
              { type: "acceptReply", params: ({ event }) => event.output },
              { type: "terminate", params: "max_turns" },
              {
                type: "emitResponse",
                params: ({ event }) => ({ output: event.output, reason: "max_turns", at: event.output.at }),
              },
            ],
          },
          {
            target: "turn",
            reenter: true,
            actions: [
              "countStep",
              {
                type: "emitResponse",
                params: ({ event }) => ({ output: event.output, at: event.output.at }),
              },
              { type: "acceptReply", params: ({ event }) => event.output },
              "nextTurn",
            ],
          },
        ],
        onError: { target: "failing", actions: { type: "recordStepCrash", params: errorOf } },
      },
    },
    failing: {
      entry: "classifyStepFailure",
      always: [
        { guard: "retryAllowed", target: "retrying" },
        { target: "done", actions: ["countStep", "giveUp"] },
      ],
    },
    retrying: {
      entry: ["scheduleBackoff", "emitRetry"],
      after: { backoffDelay: { target: "turn", actions: "startRetry" } },
    },
    done: { type: "final" },
  },
  output: ({ context }): PingPongOutput => {
    const terminationReason = context.terminationReason ?? "max_turns";
    return {
      actualTurns: context.actualTurns,
      terminationReason,
      earlyTermination: (EARLY_TERMINATION_REASONS as readonly string[]).includes(terminationReason),
      ...defined({ latestReply: context.latestReply }),
      replies: context.replies,
      retryAttempts: context.retryAttempts ?? 0,
      ...defined({ error: context.error }),
      at: context.lastAt,
    };
  },
});

/** The completion time a step's done event carries (none for an error event). */
function outputAt(event: unknown): number {
  const at = (event as { output?: { at?: unknown } }).output?.at;
  return typeof at === "number" ? at : 0;
}
