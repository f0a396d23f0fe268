import { randomUUID } from "node:crypto";
import type { A2AFlowInput } from "../machines/index.js";
import type { A2AConfig } from "../policies/index.js";
import type { DurableHost } from "../durable/index.js";
import { flowResult, messageSent } from "./flowResult.js";
import { flowSettings } from "./flowSettings.js";
import { parsePublicInput, SessionsSendParamsSchema } from "./inputSchemas.js";
import { MissingPortError } from "./MissingPortError.js";
import type { A2AFlowResult, RuntimeTimers, SessionsSendParams } from "./ports.js";
import { agentOfSession } from "./sessionAgents.js";

export interface FlowServiceDeps {
  config: A2AConfig;
  /** Whether a GatewayPort was given: without one, sessionsSend throws at the call. */
  hasGateway: boolean;
  actors: DurableHost;
  /** The route's latest conversation, if it had one. */
  conversationOf: (routeKey: string) => string | undefined;
  requireStarted: (method: string) => unknown;
  now: () => number;
  random: () => number;
  scheduler: RuntimeTimers;
}

/**
 * `sessionsSend`: one a2aFlow actor per call, in the conversation its routeKey names; answered once
 * the message is sent (no timeout) or with the flow's end (within timeoutSeconds).
 */
export function createFlowService(
  deps: FlowServiceDeps,
): (params: SessionsSendParams) => Promise<A2AFlowResult> {
  const { config, hasGateway, actors, conversationOf, requireStarted, now, random, scheduler } = deps;
  return async function sessionsSend(params: SessionsSendParams): Promise<A2AFlowResult> {
    requireStarted("sessionsSend");
    if (!hasGateway) throw new MissingPortError("sessionsSend", "gateway");
    const parsed = parsePublicInput("sessionsSend", SessionsSendParamsSchema, params);
    if (!parsed.ok) throw parsed.error;
    const p = parsed.value;
    const timeoutSeconds = p.timeoutSeconds ?? 0;
    const routeKey = p.routeKey ?? `${p.requesterSessionKey ?? "external"}:${p.targetSessionKey}`;
    const conversationId = conversationOf(routeKey) ?? randomUUID();
    const toAgent = agentOfSession(p.targetSessionKey);
    const id = `flow-${randomUUID()}`;
    const input: A2AFlowInput = {
      conversationId,
      routeKey,
      ...(p.requesterSessionKey === undefined ? {} : { requesterSessionKey: p.requesterSessionKey }),
      targetSessionKey: p.targetSessionKey,
      message: p.message,
      skipPingPong: p.skipPingPong === true,
      announceTarget: p.announceTarget ?? null,
      ...flowSettings(config, toAgent),
      // The actor id: stable across restarts, so a re-run send is deduplicated by the gateway.
      idempotencyKey: id,
      seed: Math.floor(random() * 2 ** 31),
      mode: timeoutSeconds > 0 ? "sync" : "async",
      fromAgent: p.requesterSessionKey === undefined ? "external" : agentOfSession(p.requesterSessionKey),
      toAgent,
      startedAt: now(),
    };
    const flow = actors.create("a2aFlow", id, input);
    const resultOf = (status: A2AFlowResult["status"]): A2AFlowResult =>
      flowResult(flow.actor, conversationId, status);
    const finished = flow.when(() => {
      const s = flow.actor.getSnapshot() as { status: string };
      // "ok" stands for the flow's own status (ok or blocked); an actor that failed outright rejects.
      return s.status === "done" ? resultOf("ok") : undefined;
    });

    // Not awaited when the caller only waits for "accepted": a stop meanwhile must not be an unhandled rejection.
    finished.catch(() => undefined);
    if (timeoutSeconds === 0) {
      // Accepted once the message left (or the flow ended before it could): the flow goes on as an actor.
      return flow.when(() => (messageSent(flow.actor) ? resultOf("accepted") : undefined));
    }
    let timer: unknown;
    const timedOut = new Promise<A2AFlowResult>((resolveTimeout) => {
      timer = scheduler.setTimeout(() => resolveTimeout(resultOf("timeout")), timeoutSeconds * 1_000);
    });
    return Promise.race([finished, timedOut]).finally(() => scheduler.clearTimeout(timer));
  };
}
