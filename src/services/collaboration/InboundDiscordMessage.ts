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
}
