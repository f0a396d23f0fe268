import type { CollaborateInput } from "../machines/index.js";
import { type A2AConfig, isReplyInThread, type LoopGuardDecision } from "../policies/index.js";
import type { DiscordSendParams } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

type AgentConfig = A2AConfig["agents"][string];

/** What the runtime learnt before a collaboration starts; the machine decides the rest itself. */
export interface CollaborationFacts {
  id: string;
  at: number;
  from: AgentConfig;
  /** Undefined for an unknown target: the machine refuses it (unknown_agent). */
  target: AgentConfig | undefined;
  /** The explicit thread's parent channel, or why it could not be learnt (a 403/404). */
  threadParentId?: string;
  threadLookupFailure?: CollaborateInput["threadLookupFailure"];
  /** The pair's thread, reusable within threadReuseTTL. */
  reusable?: { threadId: string; channelId: string };
  loopGuard: LoopGuardDecision;
  /** Whether the sender is answering the target's thread message now (the reply_in_thread rule). */
  handling: ReturnType<ThreadState["handlingOf"]>;
}

/** The collaborate machine's input for a discordSend: the call, the config, and what the runtime learnt. */
export function collaborationInput(
  p: DiscordSendParams,
  facts: CollaborationFacts,
  config: A2AConfig,
): CollaborateInput {
  const collaboration = config.discord.collaboration;
  const retry = config.discord.a2aRetry;
  const { target, reusable, loopGuard: verdict, handling } = facts;
  return {
    collaborationId: facts.id,
    fromAgentId: p.fromAgentId,
    targetAgentId: p.targetAgentId,
    fromName: facts.from.name ?? p.fromAgentId,
    ...(target === undefined
      ? {}
      : { toName: target.name ?? p.targetAgentId, targetBotId: target.discordBotId }),
    message: p.message,
    ...(p.threadId ? { threadId: p.threadId } : {}),
    ...(facts.threadParentId === undefined ? {} : { threadParentId: facts.threadParentId }),
    ...(facts.threadLookupFailure === undefined ? {} : { threadLookupFailure: facts.threadLookupFailure }),
    ...(p.channelId ? { channelId: p.channelId } : {}),
    ...(p.threadName ? { threadName: p.threadName } : {}),
    ...(p.topicId ? { topicId: p.topicId } : {}),
    urgent: p.urgent === true,
    allowedChannels: [...collaboration.allowedChannels],
    ...(collaboration.defaultChannel === undefined ? {} : { defaultChannel: collaboration.defaultChannel }),
    maxMessageLength: collaboration.maxMessageLength,
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
    mention: retry,
    startedAt: facts.at,
  };
}
