import {
  type A2AConfig,
  type A2AEventOf,
  decidePreflight,
  type InboundDiscordMessage,
  isDiscordSystemMessage,
  type LoopGuard,
  toObserverRecord,
} from "../policies/index.js";
import type { MessageCatalog } from "../policies/messages/messageKeys.js";
import {
  admitToExchange,
  type BotExchange,
  type ExchangeRules,
} from "../policies/collaboration/botExchange.js";
import type { ChannelDirectory } from "./channelDirectory.js";
import type { GuildDirectory } from "./GuildDirectory.js";
import { InboundDiscordMessageSchema, parsePublicInput } from "./inputSchemas.js";
import type { PreflightResult } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

export interface InboundDeps {
  config: A2AConfig;
  /** Agent id by its bot's user id. */
  agentOfBot: ReadonlyMap<string, string>;
  threads: ThreadState;
  guilds: GuildDirectory;
  directory: ChannelDirectory;
  loopGuard: LoopGuard;
  isSinkThread: (threadId: string) => boolean;
  /** The configured texts: a report thread is also recognised by its name there. */
  messages: MessageCatalog;
  now: () => number;
  warn: (message: string) => void;
  /** Hands a thread's message to its live collaborations; resolves once what it changed is on disk. */
  routeThreadMessage: (threadId: string, message: InboundDiscordMessage) => Promise<void>;
  /** The turn control of an exchange opened by a message handed to `agentId`. */
  exchangeRules: (agentId: string) => ExchangeRules;
  /** Reports a bot↔bot exchange that ended (as `a2a.exchange.ended`). */
  emit: (event: A2AEventOf<"a2a.exchange.ended">) => void;
}

/**
 * `handleDiscordMessage`: the message checked and completed (thread, parent), the answers it gives
 * recorded, then preflight and the thread's bot↔bot exchange decide who handles it; the thread state
 * learns what it shows.
 */
export function createInboundHandler(
  deps: InboundDeps,
): (input: InboundDiscordMessage) => Promise<PreflightResult> {
  const { config, agentOfBot, threads, now } = deps;
  const collaboration = config.discord.collaboration;

  /** A thread's parent: as the message says (remembered when allowed), as known, or as Discord says. */
  async function parentOf(m: InboundDiscordMessage, threadId: string | undefined) {
    if (threadId === undefined) return undefined;
    const allowed = collaboration.allowedChannels;
    if (m.parentChannelId !== undefined) {
      if (allowed.includes(m.parentChannelId) && threads.parentOf(threadId) === undefined) {
        threads.setParent(threadId, m.parentChannelId);
      }
      return m.parentChannelId;
    }
    if (threads.parentOf(threadId) !== undefined || allowed.length === 0) return threads.parentOf(threadId);
    const lookup = await deps.directory.parentOf(threadId);
    return "parentChannelId" in lookup ? lookup.parentChannelId : undefined;
  }

  return async function handleDiscordMessage(input) {
    const parsed = parsePublicInput("handleDiscordMessage", InboundDiscordMessageSchema, input);
    if (!parsed.ok) {
      deps.warn(
        `handleDiscordMessage: skipped a malformed message: ${parsed.error.param} ${parsed.error.reason}`,
      );
      return { action: "drop", reason: "invalid_message" };
    }
    const m = parsed.value;
    // Discord's own messages are no one's words: they end no mention and count for no guard.
    if (isDiscordSystemMessage(m)) return { action: "drop", reason: "system_message" };
    deps.guilds.note(m.channelId, m.guildId);
    deps.guilds.note(m.parentChannelId, m.guildId);
    const threadId = m.threadId ?? (threads.isKnownThread(m.channelId) ? m.channelId : undefined);
    const parentChannelId = await parentOf(m, threadId);
    const message: InboundDiscordMessage = {
      ...m,
      ...(threadId === undefined ? {} : { threadId }),
      ...(parentChannelId === undefined ? {} : { parentChannelId }),
    };
    // First: an answer ends its mentions even when the loop guard drops it.
    if (threadId !== undefined) await deps.routeThreadMessage(threadId, message);

    const decision = decidePreflight(message, {
      threadCommunication: config.discord.threadCommunication,
      allowedChannels: collaboration.allowedChannels,
      ...(collaboration.allowedGuilds === undefined ? {} : { allowedGuilds: collaboration.allowedGuilds }),
      agentOfBot,
      participantsOf: (id) => threads.participantsOf(id),
      isSinkThread: deps.isSinkThread,
      parentOf: (id) => threads.parentOf(id),
      messages: deps.messages,
    });
    const authorAgent = agentOfBot.get(message.authorId);
    // Reminders and escalations the runtime posted count for neither the exchange nor the loop guard.
    const system = threads.isSystemMessage(message.messageId, {
      channelId: message.channelId,
      ...(authorAgent === undefined ? {} : { agentId: authorAgent }),
      content: message.content,
    });
    const exchangeThread = threadId !== undefined && !system ? threadId : undefined;
    // A human message starts a new exchange (the next handled message opens it).
    if (exchangeThread !== undefined && !message.authorIsBot) threads.setExchange(exchangeThread, undefined);
    let admitted: BotExchange | undefined;
    if (exchangeThread !== undefined && decision.action === "handle") {
      const verdict = admitToExchange(
        threads.exchangeOf(exchangeThread),
        { content: message.content, at: now() },
        deps.exchangeRules(decision.agentId),
      );
      if (!verdict.handle) {
        if (verdict.ended) {
          threads.setExchange(exchangeThread, verdict.next);
          deps.emit({
            type: "a2a.exchange.ended",
            ts: now(),
            ...(authorAgent === undefined ? {} : { fromAgent: authorAgent }),
            toAgent: decision.agentId,
            data: {
              threadId: exchangeThread,
              reason: verdict.reason,
              handled: verdict.next.handled,
              limit: verdict.next.limit,
              messageId: message.messageId,
              agentId: decision.agentId,
            },
          });
        }
        return { action: "drop", reason: verdict.reason };
      }
      admitted = verdict.next;
    }
    if (decision.action !== "drop" && threadId !== undefined && message.authorIsBot && !system) {
      const guard = deps.loopGuard.checkThreadMessage(threadId);
      if (!guard.allowed) return { action: "drop", reason: "loop_guard" };
    }
    // Counted only once handed on: a message the loop guard drops takes no turn.
    if (exchangeThread !== undefined && admitted !== undefined) threads.setExchange(exchangeThread, admitted);
    if (decision.action === "observe") {
      threads.observe(
        toObserverRecord(message, authorAgent ?? message.authorId, { botUserIds: agentOfBot.keys() }),
        now(),
      );
      return { action: "observe" };
    }
    if (decision.action === "drop") return decision;
    // Decided first: participants who expired are not brought back by the message that finds them gone.
    if (threadId !== undefined) threads.touch(threadId, message.ts);
    if (threadId !== undefined && decision.joinsThread) threads.addParticipants(threadId, [decision.agentId]);
    if (threadId !== undefined && authorAgent !== undefined && !system) {
      threads.noteHandling(decision.agentId, authorAgent, threadId, now());
    }
    return {
      action: "handle",
      agentId: decision.agentId,
      sessionKey: decision.sessionKey,
      ...(decision.alsoAgentIds === undefined ? {} : { alsoAgentIds: decision.alsoAgentIds }),
    };
  };
}
