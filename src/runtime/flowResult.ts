import type { AnyActorRef } from "xstate";
import type { A2AFlowOutput } from "../machines/index.js";
import type { A2AFlowResult } from "./ports.js";

/** What sessionsSend answers for a flow actor: its output once done, else `status` with nothing counted yet. */
export function flowResult(
  actor: AnyActorRef,
  conversationId: string,
  status: A2AFlowResult["status"],
): A2AFlowResult {
  const snapshot = actor.getSnapshot() as {
    status: string;
    output?: A2AFlowOutput;
    context: Record<string, unknown>;
  };
  const out = snapshot.output;
  if (out !== undefined) {
    return {
      status: status === "ok" ? out.status : status,
      conversationId,
      ...(out.reply === undefined ? {} : { reply: out.reply }),
      retryAttempts: out.retryAttempts,
      actualTurns: out.actualTurns,
      ...(out.terminationReason === undefined ? {} : { terminationReason: out.terminationReason }),
      announced: out.announced,
      ...(out.error === undefined ? {} : { error: out.error }),
    };
  }
  return { status, conversationId, retryAttempts: 0, actualTurns: 0, announced: false };
}

/** Whether a flow's message has left (its reply wait got a run id or moved on), or the flow ended before it could. */
export function messageSent(actor: AnyActorRef): boolean {
  const snapshot = actor.getSnapshot() as {
    status: string;
    children: Record<string, AnyActorRef | undefined>;
  };
  if (snapshot.status !== "active") return true;
  const wait = snapshot.children.replyWait?.getSnapshot() as
    { value: string; context: { runId?: string } } | undefined;
  return wait === undefined || wait.context.runId !== undefined || wait.value !== "sending";
}
