import type { A2AErrorInfo, A2AEventOf } from "../policies/index.js";
import { decideAnnounce } from "../policies/index.js";
import type { A2AFlowContext, A2AFlowOutput } from "./a2aFlowContext.js";
import { defined, envelopeOf } from "./schemas.js";

// What a2aFlowMachine reports: its first a2a.response, a2a.complete's data, its output, its announce choice.

/** `a2a.response` for turn 0: the target's reply, or why the flow was blocked without one. */
export function firstResponseEvent(context: A2AFlowContext): A2AEventOf<"a2a.response"> {
  return {
    type: "a2a.response",
    ...envelopeOf(context.trace, context.lastAt),
    data: {
      turn: 0,
      speakerSessionKey: context.targetSessionKey,
      ...(context.error === undefined
        ? { outcome: "ok" as const, ...defined({ reply: context.reply }) }
        : {
            outcome: "blocked" as const,
            ...(context.outcomeMessage ? { reply: context.outcomeMessage } : {}),
          }),
      messageIntent: context.trace.messageIntent,
      effectiveTurns: context.effectiveTurns,
    },
  };
}

/** The error that blocked the reply, else a later step's (the flow is then "ok": the reply came). */
function reportedError(context: A2AFlowContext): A2AErrorInfo | undefined {
  return context.error ?? context.stepError;
}

export function completeData(context: A2AFlowContext): A2AEventOf<"a2a.complete">["data"] {
  const error = reportedError(context);
  return {
    retryAttempts: context.retryAttempts,
    ...(error === undefined
      ? {}
      : { errorCode: error.code, errorCategory: error.category, errorMessage: error.message }),
    messageIntent: context.trace.messageIntent,
    configuredMaxTurns: context.configuredMaxTurns,
    effectiveTurns: context.effectiveTurns,
    actualTurns: context.actualTurns,
    earlyTermination: context.earlyTermination,
    ...defined({ terminationReason: context.terminationReason }),
    announced: context.announced,
    announceSkipped: !context.announced,
    ...defined({
      announceSkipReason: context.announceSkipReason,
      announceText: context.announceText,
      announceError: context.announceError,
    }),
  };
}

export function flowOutput(context: A2AFlowContext): A2AFlowOutput {
  const error = reportedError(context);
  return {
    status: context.error === undefined ? "ok" : "blocked",
    conversationId: context.conversationId,
    ...defined({ reply: context.reply }),
    retryAttempts: context.retryAttempts,
    actualTurns: context.actualTurns,
    ...defined({ terminationReason: context.terminationReason }),
    announced: context.announced,
    ...defined({ announceText: context.announceText, error }),
  };
}

export function announceDecision(context: A2AFlowContext) {
  return decideAnnounce({
    announceTarget: context.announceTarget,
    ...defined({ requesterSessionKey: context.requesterSessionKey }),
    targetSessionKey: context.targetSessionKey,
    ...defined({ latestReply: context.reply }),
  });
}
