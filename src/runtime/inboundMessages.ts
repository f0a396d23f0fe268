import {
  type A2AConfig,
  decidePreflight,
  type InboundDiscordMessage,
  type LoopGuard,
  toObserverRecord,
} from "../services/index.js";
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
  now: () => number;
  warn: (message: string) => void;
  /** Ends the mentions an agent's bot message answers in its thread; resolves once that is on disk. */
  recordAnswer: (threadId: string, message: InboundDiscordMessage) => Promise<void>;
}

/**
 * `handleDiscordMessage` (design 004 §5.2, §12): the message checked and completed (its thread and
 * parent), the answers it gives recorded, then preflight decides who handles it, if anyone; the thread
 * state learns what the message shows (participants, activity, observer history, who answers whom).
 */
export function createInboundHandler(
  deps: InboundDeps,
): (input: InboundDiscordMessage) => Promise<PreflightResult> {
  const { config, agentOfBot, threads, now } = deps;
  const collaboration = config.discord.collaboration;

  /**
   * The parent of an inbound thread message: as the message says (then remembered, when allowed, so a
   * later discordSend into the thread can be checked), as the runtime knows, or, when an allowlist
   * needs it, as Discord says. Undefined: unknown (preflight then drops the message).
   */
  async function parentOf(m: InboundDiscordMessage, threadId: string | undefined) {
    if (threadId === undefined) return undefined;
    const allowed = collaboration.allowedChannels;
    if (m.parentChannelId !== undefined) {
      if (allowed.includes(m.parentChannelId) && !threads.parents.has(threadId)) {
        threads.setParent(threadId, m.parentChannelId);
      }
      return m.parentChannelId;
    }
    if (threads.parents.has(threadId) || allowed.length === 0) return threads.parents.get(threadId);
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
    deps.guilds.note(m.channelId, m.guildId);
    deps.guilds.note(m.parentChannelId, m.guildId);
    const threadId = m.threadId ?? (threads.isKnownThread(m.channelId) ? m.channelId : undefined);
    const parentChannelId = await parentOf(m, threadId);
    const message: InboundDiscordMessage = {
      ...m,
      ...(threadId === undefined ? {} : { threadId }),
      ...(parentChannelId === undefined ? {} : { parentChannelId }),
    };
    // Response tracking comes first: an answer ends its mentions even when the loop guard drops it.
    // Only an agent's bot can answer a mention; a human's message never ends one.
    if (threadId !== undefined && agentOfBot.has(message.authorId))
      await deps.recordAnswer(threadId, message);

    const decision = decidePreflight(message, {
      threadCommunication: config.discord.threadCommunication,
      allowedChannels: collaboration.allowedChannels,
      ...(collaboration.allowedGuilds === undefined ? {} : { allowedGuilds: collaboration.allowedGuilds }),
      agentOfBot,
      participantsOf: (id) => threads.participantsOf(id),
      isSinkThread: deps.isSinkThread,
      parentOf: (id) => threads.parents.get(id),
    });
    const authorAgent = agentOfBot.get(message.authorId);
    const system = threads.isSystemMessage(message.messageId);
    if (decision.action !== "drop" && threadId !== undefined && message.authorIsBot && !system) {
      const guard = deps.loopGuard.checkThreadMessage(threadId);
      if (!guard.allowed) return { action: "drop", reason: "loop_guard" };
    }
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
