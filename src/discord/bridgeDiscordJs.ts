import { Events } from "discord.js";
import type { A2ARuntime, PreflightResult } from "../runtime/ports.js";
import type { InboundDiscordMessage } from "../policies/index.js";

/** A message an agent must answer: where the gateway starts that agent's run. */
export interface HandleDecision {
  agentId: string;
  /** The session the run belongs in (`agent:{agentId}:discord:channel:{channelId}` …). */
  sessionKey: string;
  message: InboundDiscordMessage;
  /** The other agents the message names (mention order), decided for the first. */
  alsoAgentIds?: string[];
}

/** Callbacks of `bridgeDiscordJs`: where the gateway learns what to run, and what went wrong. */
export interface BridgeDiscordJsOptions {
  /**
   * Called once per message an agent handles: start its run in `sessionKey` here (its reply comes back
   * through the bridge like any message). A throw or rejection goes to onError.
   */
  onHandle?: (handle: HandleDecision) => unknown;
  /** Every decision (handle, observe, drop with its reason), for logging. */
  onDecision?: (decision: PreflightResult, message: InboundDiscordMessage) => void;
  /** Where errors of handleDiscordMessage, onHandle and onDecision go. Default: console.warn. */
  onError?: (error: unknown, message: InboundDiscordMessage) => void;
  /** How many recent message ids are remembered to forward each message once. Default 10 000. */
  maxRecentIds?: number;
}

/** What the bridge reads of a discord.js `Message`; typed by shape, so the `import` and `require` typings both fit. */
export interface DiscordJsMessage {
  id: string;
  channelId: string;
  guildId: string | null;
  content: string;
  createdTimestamp: number;
  /** Discord's message type (`MessageType`); `system` is true for every type but 0, 19, 20 and 23. */
  type?: number;
  system: boolean;
  author: { id: string; bot: boolean };
  mentions: { users: { keys(): Iterable<string> } };
  channel: { id: string; isThread(): this is { name: string; parentId: string | null } };
}

/** What the bridge uses of a discord.js `Client`: its messageCreate events. */
export interface DiscordJsEventClient {
  on(event: "messageCreate", listener: (message: DiscordJsMessage) => void): unknown;
  off(event: "messageCreate", listener: (message: DiscordJsMessage) => void): unknown;
}

/** A discord.js Message as the control plane sees it (its `type` too, so the runtime drops Discord's system messages). */
export function toInboundDiscordMessage(message: DiscordJsMessage): InboundDiscordMessage {
  const inbound: InboundDiscordMessage = {
    messageId: message.id,
    channelId: message.channelId,
    authorId: message.author.id,
    authorIsBot: message.author.bot,
    content: message.content,
    mentionUserIds: [...message.mentions.users.keys()],
    ts: message.createdTimestamp,
  };
  if (typeof message.type === "number") inbound.type = message.type;
  if (message.guildId !== null) inbound.guildId = message.guildId;
  const channel = message.channel;
  if (channel.isThread()) {
    inbound.threadId = channel.id;
    inbound.threadName = channel.name;
    if (channel.parentId !== null) inbound.parentChannelId = channel.parentId;
  }
  return inbound;
}

/**
 * Forwards each message (once, whichever clients see it; no system messages) to handleDiscordMessage,
 * "handle" decisions to onHandle, errors to onError. Returns a function that detaches every listener.
 */
export function bridgeDiscordJs(
  runtime: Pick<A2ARuntime, "handleDiscordMessage">,
  clients: Record<string, DiscordJsEventClient>,
  options: BridgeDiscordJsOptions = {},
): () => void {
  const maxRecentIds = Math.max(1, options.maxRecentIds ?? 10_000);
  const onError =
    options.onError ??
    ((error: unknown, message: InboundDiscordMessage) =>
      console.warn(`bridgeDiscordJs: handling message ${message.messageId} failed:`, error));
  const recent = new Set<string>();

  const firstSighting = (id: string): boolean => {
    if (recent.has(id)) return false;
    recent.add(id);
    if (recent.size > maxRecentIds) {
      const oldest = recent.values().next().value;
      if (oldest !== undefined) recent.delete(oldest);
    }
    return true;
  };

  const decided = async (inbound: InboundDiscordMessage): Promise<void> => {
    const decision = await runtime.handleDiscordMessage(inbound);
    options.onDecision?.(decision, inbound);
    if (decision.action !== "handle" || options.onHandle === undefined) return;
    await options.onHandle({
      agentId: decision.agentId,
      sessionKey: decision.sessionKey,
      message: inbound,
      ...(decision.alsoAgentIds === undefined ? {} : { alsoAgentIds: decision.alsoAgentIds }),
    });
  };

  const listener = (message: DiscordJsMessage): void => {
    if (message.system || !firstSighting(message.id)) return;
    let inbound: InboundDiscordMessage;
    try {
      inbound = toInboundDiscordMessage(message);
    } catch (error) {
      console.warn(`bridgeDiscordJs: could not read message ${message.id}:`, error);
      return;
    }
    decided(inbound).catch((error: unknown) => {
      try {
        onError(error, inbound);
      } catch {
        // onError must not make the listener throw.
      }
    });
  };

  const attached = [...new Set(Object.values(clients))];
  for (const client of attached) client.on(Events.MessageCreate, listener);
  let detached = false;
  return () => {
    if (detached) return;
    detached = true;
    for (const client of attached) client.off(Events.MessageCreate, listener);
  };
}
