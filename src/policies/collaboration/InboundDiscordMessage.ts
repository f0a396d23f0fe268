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
   * Discord's message type (`message.type`); omitted means 0, an ordinary message. Any type but 0 (a
   * message), 19 (a reply), 20 and 23 (an application command's answer) is a message Discord posts
   * itself, such as "X started a thread" (18) or "X added Y to the thread" (1): it is dropped
   * (`system_message`) before anything else, so it is never handled, observed, counted, nor taken
   * for an answer.
   */
  type?: number;
}

/** The message types people and bots post (discord.js's `NonSystemMessageTypes`); every other is a system message. */
const POSTED_MESSAGE_TYPES: ReadonlySet<number> = new Set([0, 19, 20, 23]);

/** True for a message Discord posts itself (a thread created, a member added, a pin…), not a person or bot. */
export function isDiscordSystemMessage(m: Pick<InboundDiscordMessage, "type">): boolean {
  return m.type !== undefined && !POSTED_MESSAGE_TYPES.has(m.type);
}
