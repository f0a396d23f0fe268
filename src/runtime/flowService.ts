import { randomUUID } from "node:crypto";
import type { AnyActorRef } from "xstate";
import type { A2AFlowInput, A2AFlowOutput } from "../machines/index.js";
import { type A2AConfig, resolveAgentA2ASettings } from "../policies/index.js";
import type { DurableHost } from "../durable/index.js";
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

/** The part of a flow's input that the config decides, for the target agent (its overrides first). */
export function flowSettings(
  config: A2AConfig,
  toAgent: string,
): Pick<
  A2AFlowInput,
  "configuredMaxTurns" | "autoTerminate" | "retry" | "maxWaitMs" | "chunkMs" | "allowedChannels" | "language"
> {
  const settings = resolveAgentA2ASettings(config, toAgent);
  const a2a = config.session.agentToAgent;
  return {
    configuredMaxTurns: settings.maxPingPongTurns,
    autoTerminate: a2a.autoTerminate,
    retry: { ...a2a.retry },
    maxWaitMs: settings.maxWaitMs,
    chunkMs: settings.chunkMs,
    // Announcements are posted only in the collaboration allowlist's channels.
    allowedChannels: [...config.discord.collaboration.allowedChannels],
    // Kept in the flow's snapshot only when it is not the default (Korean, no overrides).
    ...(config.locale === "ko" && Object.keys(config.messages).length === 0
      ? {}
      : { language: { locale: config.locale, messages: { ...config.messages } } }),
  };
}

/** What sessionsSend answers for a flow actor: its output once done, else `status` with nothing counted yet. */
function flowResult(
  actor: AnyActorRef,
  conversationId: string,
  status: A2AFlowResult["status"],
): A2AFlowResult {
  const out = (actor.getSnapshot() as { output?: A2AFlowOutput }).output;
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
function messageSent(actor: AnyActorRef): boolean {
  const snapshot = actor.getSnapshot() as {
    status: string;
    children: Record<string, AnyActorRef | undefined>;
  };
  if (snapshot.status !== "active") return true;
  const wait = snapshot.children.replyWait?.getSnapshot() as
    { value: string; context: { runId?: string } } | undefined;
  return wait === undefined || wait.context.runId !== undefined || wait.value !== "sending";
}
