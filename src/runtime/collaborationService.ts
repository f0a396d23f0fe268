import { randomUUID } from "node:crypto";
import { type CollaborateInput, type CollaborateOutput, MachineInputError } from "../machines/index.js";
import {
  type A2AConfig,
  discordErrorCode,
  displayText,
  IdempotencyCache,
  isReplyInThread,
  type LoopGuard,
} from "../policies/index.js";
import type { DurableHost } from "../durable/index.js";
import type { ChannelDirectory } from "./channelDirectory.js";
import { DiscordSendParamsSchema, parsePublicInput } from "./inputSchemas.js";
import { MissingPortError } from "./MissingPortError.js";
import type { DiscordSendParams, DiscordSendResult } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

/** How long an agent counts as answering a sender's thread message, for the reply_in_thread rule. */
const HANDLING_WINDOW_MS = 10 * 60_000;

export interface CollaborationServiceDeps {
  config: A2AConfig;
  /** Whether a DiscordPort was given: without one, discordSend throws at the call. */
  hasDiscord: boolean;
  actors: DurableHost;
  threads: ThreadState;
  directory: ChannelDirectory;
  loopGuard: LoopGuard;
  isSinkThread: (threadId: string) => boolean;
  /** A configured agent by id (own keys only: "constructor" is no agent). */
  agentConfig: (agentId: string) => A2AConfig["agents"][string] | undefined;
  requireStarted: (method: string) => unknown;
  emitEvent: (event: { type: string }) => void;
  now: () => number;
  warn: (message: string) => void;
}

/** `discordSend`: the request checked, then one collaborate actor; answered once sent or failed. */
export function createCollaborationService(
  deps: CollaborationServiceDeps,
): (params: DiscordSendParams) => Promise<DiscordSendResult> {
  const { config, actors, threads, isSinkThread, agentConfig, now } = deps;
  const idempotency = new IdempotencyCache<DiscordSendResult>({ now });

  async function discordSend(params: DiscordSendParams): Promise<DiscordSendResult> {
    deps.requireStarted("discordSend");
    if (!deps.hasDiscord) throw new MissingPortError("discordSend", "discord");
    const parsed = parsePublicInput("discordSend", DiscordSendParamsSchema, params);
    if (!parsed.ok) {
      return rejectCollaboration(params, "invalid_input", `${parsed.error.param}: ${parsed.error.reason}`);
    }
    const p = parsed.value;
    const run = () => startCollaboration(p);
    return p.idempotencyKey ? idempotency.run(p.idempotencyKey, run) : run();
  }

  /** A discordSend refused before any actor exists: answered, and reported as a2a.collaborate.failed. */
  function rejectCollaboration(
    p: Partial<Record<keyof DiscordSendParams, unknown>> | undefined,
    code: string,
    message: string,
  ): DiscordSendResult {
    const fromAgentId = typeof p?.fromAgentId === "string" ? p.fromAgentId : "";
    const toAgentId = typeof p?.targetAgentId === "string" ? p.targetAgentId : "";
    deps.emitEvent({
      type: "a2a.collaborate.failed",
      ts: now(),
      ...(fromAgentId === "" ? {} : { fromAgent: fromAgentId }),
      ...(toAgentId === "" ? {} : { toAgent: toAgentId }),
      data: { fromAgentId, toAgentId, errorCode: code, errorMessage: message, escalate: false },
    } as { type: string });
    return { status: "rejected", error: { code, message } };
  }

  async function startCollaboration(p: DiscordSendParams): Promise<DiscordSendResult> {
    const from = agentConfig(p.fromAgentId);
    if (from === undefined) {
      return rejectCollaboration(
        p,
        "unknown_agent",
        `fromAgentId ${JSON.stringify(p.fromAgentId)} is not a configured agent`,
      );
    }
    if (p.threadId && isSinkThread(p.threadId)) {
      return rejectCollaboration(
        p,
        "sink_thread",
        `thread ${p.threadId} is a report (sink) thread; collaborations stay out of it`,
      );
    }
    // An explicit thread is checked against the allowlist by its parent: one the runtime cannot learn is refused.
    let threadParentId: string | undefined;
    let threadLookupFailure: CollaborateInput["threadLookupFailure"];
    if (p.threadId) {
      const parent = await deps.directory.parentOf(p.threadId);
      if ("failure" in parent && !parent.failure.retryable) {
        // A 403/404 is the collaboration's own failure: it fails with it, unretried, and tells a human.
        const { kind, escalate } = parent.failure;
        threadLookupFailure = { kind, retryable: false, escalate, message: displayText(parent.error) };
      } else if ("failure" in parent) {
        return rejectCollaboration(
          p,
          discordErrorCode(parent.failure.kind),
          `could not look up thread ${p.threadId}: ${displayText(parent.error)}`,
        );
      } else if ("unknown" in parent) {
        return rejectCollaboration(
          p,
          "channel_not_allowed",
          `${parent.unknown}, so it cannot be checked against discord.collaboration.allowedChannels`,
        );
      } else threadParentId = parent.parentChannelId;
    }
    const at = now();
    const target = agentConfig(p.targetAgentId);
    const verdict = deps.loopGuard.checkCollaboration(p.fromAgentId, p.targetAgentId);
    if (verdict.allowed && verdict.warning) deps.warn(`loop guard: ${verdict.warning}`);
    const handling = threads.handlingOf(p.fromAgentId, at, HANDLING_WINDOW_MS);
    const route = p.threadId
      ? undefined
      : threads.reusableRoute(p.fromAgentId, p.targetAgentId, p.topicId, at);
    const reusable = route !== undefined && isSinkThread(route.threadId) ? undefined : route;
    const id = `collab-${randomUUID()}`;
    const settings = config.discord.collaboration;
    // What the runtime learnt before the collaboration starts; the machine decides the rest itself.
    const input: CollaborateInput = {
      collaborationId: id,
      fromAgentId: p.fromAgentId,
      targetAgentId: p.targetAgentId,
      fromName: from.name ?? p.fromAgentId,
      // An unknown target is the machine's to refuse (unknown_agent).
      ...(target === undefined
        ? {}
        : { toName: target.name ?? p.targetAgentId, targetBotId: target.discordBotId }),
      message: p.message,
      ...(p.threadId ? { threadId: p.threadId } : {}),
      ...(threadParentId === undefined ? {} : { threadParentId }),
      ...(threadLookupFailure === undefined ? {} : { threadLookupFailure }),
      ...(p.channelId ? { channelId: p.channelId } : {}),
      ...(p.threadName ? { threadName: p.threadName } : {}),
      ...(p.topicId ? { topicId: p.topicId } : {}),
      urgent: p.urgent === true,
      allowedChannels: [...settings.allowedChannels],
      ...(settings.defaultChannel === undefined ? {} : { defaultChannel: settings.defaultChannel }),
      maxMessageLength: settings.maxMessageLength,
      ...(reusable === undefined
        ? {}
        : { reusableThread: { threadId: reusable.threadId, channelId: reusable.channelId } }),
      loopGuard: {
        allowed: verdict.allowed,
        ...(verdict.allowed && verdict.warning ? { warning: verdict.warning } : {}),
      },
      replyInThread: isReplyInThread({
        targetAgentId: p.targetAgentId,
        ...(handling === undefined ? {} : { handling }),
      }),
      // As the config has it: the mention takes what it needs.
      mention: config.discord.a2aRetry,
      startedAt: at,
    };
    const collaboration = actors.create("collaborate", id, input);
    return collaboration.when<DiscordSendResult>(
      () => {
        const snapshot = collaboration.actor.getSnapshot() as {
          status: string;
          context: {
            resolvedThreadId?: string;
            messageId?: string;
            parentChannelId?: string;
            error?: CollaborateOutput["error"];
          };
          output?: CollaborateOutput;
        };
        const c = snapshot.context;
        if (c.messageId !== undefined && c.resolvedThreadId !== undefined) {
          threads.useRoute({
            fromAgentId: p.fromAgentId,
            targetAgentId: p.targetAgentId,
            ...(p.topicId ? { topicId: p.topicId } : {}),
            threadId: c.resolvedThreadId,
            channelId: c.parentChannelId ?? threads.parentOf(c.resolvedThreadId) ?? "",
            lastUsedAt: now(),
          });
          return {
            status: "sent" as const,
            threadId: c.resolvedThreadId,
            messageId: c.messageId,
            mentionId: id,
          };
        }
        // A failure is the answer once known, while its notice to a human may still be under way.
        if (snapshot.status === "active" && c.error === undefined) return undefined;
        const error = snapshot.output?.error ??
          c.error ?? { code: "discord_unavailable", message: "the collaboration ended" };
        return { status: "rejected" as const, error };
      },
      (error) => ({
        status: "rejected" as const,
        error: {
          code: error instanceof MachineInputError ? "invalid_input" : "discord_unavailable",
          message: displayText(error),
        },
      }),
    );
  }

  return discordSend;
}
