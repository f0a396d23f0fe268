import { fromPromise } from "xstate";
import { displayText } from "../policies/index.js";
import type { AgentStepInput, AgentStepOutput } from "../machines/index.js";
import type { GatewayPort } from "./ports.js";

/** How long one ping-pong or announce step waits for its run, in its one agentWait call. */
export const AGENT_STEP_WAIT_MS = 60_000;

/** One agent turn (run, wait once, read); a failure is its answer, for the machine to retry. */
export function agentStepActor(deps: { gateway: () => GatewayPort; now: () => number }) {
  const { now } = deps;
  return fromPromise<AgentStepOutput, AgentStepInput>(async ({ input }) => {
    const gateway = deps.gateway();
    let source: "gateway" | "read" = "gateway";
    try {
      const { runId } = await gateway.agent(input);
      const wait = await gateway.agentWait({ runId, timeoutMs: AGENT_STEP_WAIT_MS });
      if (wait.status !== "ok") {
        const message = wait.error ? { message: wait.error } : {};
        return { error: { source: "wait", status: wait.status, ...message }, at: now() };
      }
      source = "read";
      const reply = await gateway.readLatestAssistantReply({ sessionKey: input.sessionKey });
      return { ...(reply === undefined ? {} : { reply }), at: now() };
    } catch (error) {
      return { error: { source, message: displayText(error) }, at: now() };
    }
  });
}
