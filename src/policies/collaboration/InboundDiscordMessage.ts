/** A Discord message as the control plane sees it. */
export interface InboundDiscordMessage {
  messageId: string;
  /** For a thread message, the thread's id (as in Discord). */
  channelId: string;
  threadId?: string;
  threadName?: string;
  parentChannelId?: string;
  guildId?: string;
  authorId: string;
  authorIsBot: boolean;
  content: string;
  /** The message's user mentions in mention order (`message.mentions.users`). */
  mentionUserIds: string[];
  ts: number;
  /**
   * Discord's `message.type`; omitted means 0. Any type but 0, 19, 20 and 23 is a message Discord posts
   * itself ("X started a thread"): dropped first (`system_message`), never handled, observed or counted.
   */
  type?: number;
}

/** The message types people and bots post (discord.js's `NonSystemMessageTypes`); every other is a system message. */
const POSTED_MESSAGE_TYPES: ReadonlySet<number> = new Set([0, 19, 20, 23]);

/** True for a message Discord posts itself (a thread created, a member added, a pin…), not a person or bot. */
export function isDiscordSystemMessage(m: Pick<InboundDiscordMessage, "type">): boolean {
  return m.type !== undefined && !POSTED_MESSAGE_TYPES.has(m.type);
}
