import { type InboundDiscordMessage, isDiscordSystemMessage } from "./InboundDiscordMessage.js";
import { resolveThreadSessionKey } from "./sessionKeys.js";
import { isReportThreadName } from "./threadNames.js";
import type { MessageCatalog } from "../messages/messageKeys.js";

export type PreflightDecision =
  | { action: "handle"; agentId: string; sessionKey: string; alsoAgentIds?: string[]; joinsThread: boolean }
  | { action: "observe" }
  | { action: "drop"; reason: string };

/** What preflight needs to know besides the message: config, the agents' bots, and thread state. */
export interface PreflightContext {
  threadCommunication: {
    enabled: boolean;
    allowSiblingMentionsInThreads: boolean;
    allowHumanMentionsInThreads: boolean;
  };
  allowedChannels: readonly string[];
  allowedGuilds?: readonly string[];
  /** Bot user id → agent id, for every configured agent. */
  agentOfBot: ReadonlyMap<string, string>;
  /** Agents taking part in a collaboration thread (the requester, the target, and who joined). */
  participantsOf: (threadId: string) => readonly string[];
  isSinkThread: (threadId: string) => boolean;
  /** The parent channel of a thread the runtime knows of. */
  parentOf: (threadId: string) => string | undefined;
  /** The configured texts: a thread named as their report threads are is a report thread too. */
  messages?: MessageCatalog;
}

/**
 * Who, if anyone, handles a Discord message. A sibling bot's message in a thread goes only to the agents
 * it mentions (the first joins the thread) and is observed otherwise; with several agents mentioned, the
 * first decides. How long a bot↔bot exchange goes on is the exchange's turn control's business.
 */
export function decidePreflight(m: InboundDiscordMessage, ctx: PreflightContext): PreflightDecision {
  // A message Discord posts itself (a thread created, a member added) is no one's to answer or observe.
  if (isDiscordSystemMessage(m)) return { action: "drop", reason: "system_message" };
  const threadId = m.threadId;
  // Before the allowlists: by id (the channel's, when the adapter did not say it is a thread) or by name.
  if (ctx.isSinkThread(threadId ?? m.channelId) || isReportThreadName(m.threadName, ctx.messages)) {
    return { action: "drop", reason: "sink_thread" };
  }
  // Allowlists fail closed: a DM belongs to no guild, and a thread whose parent is unknown cannot be checked.
  if (
    ctx.allowedGuilds !== undefined &&
    (m.guildId === undefined || !ctx.allowedGuilds.includes(m.guildId))
  ) {
    return { action: "drop", reason: m.guildId === undefined ? "dm_not_allowed" : "guild_not_allowed" };
  }
  const channel = threadId === undefined ? m.channelId : (m.parentChannelId ?? ctx.parentOf(threadId));
  // An empty allowlist restricts where collaborations are created, not what agents may hear.
  if (ctx.allowedChannels.length > 0 && channel === undefined)
    return { action: "drop", reason: "unknown_parent" };
  if (ctx.allowedChannels.length > 0 && channel !== undefined && !ctx.allowedChannels.includes(channel)) {
    return { action: "drop", reason: "channel_not_allowed" };
  }

  const authorAgent = ctx.agentOfBot.get(m.authorId);
  const mentionedAgents = m.mentionUserIds.map((id) => ctx.agentOfBot.get(id));
  const mentioned = [...new Set(mentionedAgents)].filter(
    (agentId): agentId is string => agentId !== undefined && agentId !== authorAgent,
  );

  if (m.authorIsBot) {
    if (authorAgent === undefined) return { action: "observe" };
    const { enabled, allowSiblingMentionsInThreads } = ctx.threadCommunication;
    if (threadId !== undefined && enabled && allowSiblingMentionsInThreads && mentioned.length > 0) {
      const participants = ctx.participantsOf(threadId);
      return handle(mentioned, threadId, !participants.includes(mentioned[0] as string));
    }
    // In a thread, handled only by whom it mentions: a bot answering every participant's message is how loops start.
    return mentioned.length === 0 && m.mentionUserIds.length > 0
      ? { action: "drop", reason: "own_message" }
      : { action: "observe" };
  }

  if (mentioned.length === 0) return { action: "observe" };
  if (threadId !== undefined) {
    const allowed = ctx.threadCommunication.enabled && ctx.threadCommunication.allowHumanMentionsInThreads;
    return allowed ? handle(mentioned, threadId, false) : { action: "observe" };
  }
  return handle(mentioned, m.channelId, false);
}

function handle(
  agentIds: readonly string[],
  channelOrThreadId: string,
  joinsThread: boolean,
): PreflightDecision {
  const [agentId, ...rest] = agentIds as [string, ...string[]];
  return {
    action: "handle",
    agentId,
    sessionKey: resolveThreadSessionKey(agentId, channelOrThreadId),
    ...(rest.length === 0 ? {} : { alsoAgentIds: rest }),
    joinsThread,
  };
}
