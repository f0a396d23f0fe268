// The emulator's Discord state: one guild, its text channels and threads, users, messages. The REST
// routes and the test API both go through here; every change is announced to the gateway.
import { ApplicationCommands } from "./commands.js";
import { DiscordError, invalidFormBody } from "./errors.js";
import { isSnowflake, SnowflakeGenerator, snowflakeTimestamp } from "./snowflake.js";

export type Json = Record<string, unknown>;

export interface EmulatorUser {
  id: string;
  name: string;
  bot: boolean;
}

export interface EmulatorChannel {
  id: string;
  name: string;
  /** 0 = guild text; 11 = public thread; 12 = private thread. */
  type: 0 | 11 | 12;
  parentId: string | null;
  ownerId: string | null;
  createdAt: number;
  lastMessageId: string | null;
  messageCount: number;
  /** Thread members (user ids), in join order. */
  members: Map<string, number>;
  /** Users who may not send messages or create threads here (403 / 50013). */
  denied: Set<string>;
}

export interface EmulatorMessage {
  id: string;
  /** Discord's message type: 0 a post, 19 a reply, or a system message (SYSTEM_MESSAGE; no nonce). */
  type: number;
  channelId: string;
  authorId: string;
  content: string;
  nonce?: string;
  createdAt: number;
  mentionIds: string[];
  mentionEveryone: boolean;
  /** Set when a thread was started from this message (the thread id equals the message id). */
  threadId?: string;
  /** Reply reference, when the message answers another. */
  referencedMessageId?: string;
  /** The thread a THREAD_CREATED message announces (its `message_reference.channel_id`). */
  createdThreadId?: string;
  /** Emoji → the users who reacted with it, both in the order first added. */
  reactions?: Map<string, Set<string>>;
}

/** Thread system messages: "X added / removed Y" (`mentionIds` [Y]), "X started a thread" (`content` its name). */
export const SYSTEM_MESSAGE = { recipientAdd: 1, recipientRemove: 2, threadCreated: 18 } as const;

export interface AllowedMentions {
  parse?: string[];
  users?: string[];
  roles?: string[];
  replied_user?: boolean;
}

export interface CreateMessageInput {
  channelId: string;
  authorId: string;
  content: string;
  nonce?: string;
  enforceNonce?: boolean;
  allowedMentions?: AllowedMentions;
  referencedMessageId?: string;
}

export interface StateListener {
  /** A message created, or a stored one changed (a thread was started from it). */
  message(t: "MESSAGE_CREATE" | "MESSAGE_UPDATE", message: EmulatorMessage): void;
  threadCreated(thread: EmulatorChannel): void;
  threadMembersChanged(thread: EmulatorChannel, added: string[], removed: string[]): void;
  reactionChanged(message: EmulatorMessage, emoji: string, userId: string, added: boolean): void;
}

export const MAX_CONTENT_LENGTH = 2000;
export const MAX_NONCE_LENGTH = 25;
/** How long an enforced nonce is remembered by default; Discord says "a few minutes". */
export const NONCE_WINDOW_MS = 5 * 60_000;
export const THREAD_ALREADY_CREATED = 160004;

const MENTION_PATTERN = /<@!?(\d{17,19})>/g;

export class EmulatorState {
  readonly ids: SnowflakeGenerator;
  readonly guildId: string;
  readonly guildName: string;
  readonly createdAt: number;
  /** When the guild's members joined it (GUILD_CREATE and member `joined_at`). */
  readonly joinedAt: number;
  readonly users = new Map<string, EmulatorUser>();
  readonly channels = new Map<string, EmulatorChannel>();
  readonly messages: EmulatorMessage[] = [];
  readonly messagesById = new Map<string, EmulatorMessage>();
  private readonly nonces = new Map<string, EmulatorMessage>();
  /** Application commands, per bot (its application) and scope. */
  readonly commands = new ApplicationCommands(() => this.ids.next());
  listener: StateListener | null = null;
  readonly now: () => number;
  /** How long an enforced nonce returns its first message. */
  readonly nonceWindowMs: number;

  constructor(o: {
    guildId?: string;
    guildName?: string;
    channels: Array<{ id: string; name: string; denied?: string[] }>;
    users: EmulatorUser[];
    now?: () => number;
    nonceWindowMs?: number;
    joinedAt?: number;
  }) {
    this.now = o.now ?? Date.now;
    const window = o.nonceWindowMs ?? NONCE_WINDOW_MS;
    if (typeof window !== "number" || !Number.isFinite(window) || window < 0) {
      throw new TypeError(`nonceWindowMs must be a finite number of milliseconds ≥ 0: ${String(window)}`);
    }
    this.nonceWindowMs = window;
    this.ids = new SnowflakeGenerator(this.now);
    this.guildId = o.guildId ?? this.ids.next();
    checkSnowflake("guildId", this.guildId);
    this.guildName = o.guildName ?? "Emulated Guild";
    this.createdAt = this.now();
    this.joinedAt = o.joinedAt ?? this.createdAt;
    if (!Number.isFinite(this.joinedAt))
      throw new TypeError(`joinedAt must be epoch ms: ${String(o.joinedAt)}`);
    for (const user of o.users) {
      checkSnowflake("user id", user.id);
      this.users.set(user.id, { id: user.id, name: user.name, bot: user.bot });
    }
    for (const { id, name, denied = [] } of o.channels) {
      checkSnowflake("channel id", id);
      this.channels.set(id, { ...newChannel(id, name, this.createdAt), denied: new Set(denied) });
    }
  }

  channel(id: string): EmulatorChannel {
    const channel = this.channels.get(id);
    if (!channel) throw new DiscordError(404, 10003, "Unknown Channel");
    return channel;
  }

  message(channelId: string, messageId: string): EmulatorMessage {
    this.channel(channelId);
    const message = this.messagesById.get(messageId);
    if (!message || message.channelId !== channelId) throw new DiscordError(404, 10008, "Unknown Message");
    return message;
  }

  user(id: string): EmulatorUser {
    const user = this.users.get(id);
    if (!user) throw new DiscordError(404, 10013, "Unknown User");
    return user;
  }

  /** Throws 403 / 50013 when `userId` may not post in `channel` (a thread inherits its parent's denials). */
  checkCanPost(channel: EmulatorChannel, userId: string): void {
    const parent = channel.parentId === null ? undefined : this.channel(channel.parentId);
    if (channel.denied.has(userId) || parent?.denied.has(userId))
      throw new DiscordError(403, 50013, "Missing Permissions");
  }

  threads(): EmulatorChannel[] {
    return [...this.channels.values()].filter((c) => c.type !== 0);
  }

  textChannels(): EmulatorChannel[] {
    return [...this.channels.values()].filter((c) => c.type === 0);
  }

  /** Creates a message, or returns the earlier one for the same author + nonce when `enforceNonce`. */
  createMessage(input: CreateMessageInput): { message: EmulatorMessage; created: boolean } {
    const channel = this.channel(input.channelId);
    this.checkCanPost(channel, input.authorId);
    checkMaxLength("content", input.content, MAX_CONTENT_LENGTH);
    if (input.content.length === 0) throw new DiscordError(400, 50006, "Cannot send an empty message");
    checkMaxLength("nonce", input.nonce ?? "", MAX_NONCE_LENGTH);
    const now = this.now();
    const nonceKey = input.nonce === undefined ? null : `${input.authorId}:${input.nonce}`;
    if (nonceKey && input.enforceNonce) {
      const earlier = this.nonces.get(nonceKey);
      if (earlier && now - earlier.createdAt < this.nonceWindowMs)
        return { message: earlier, created: false };
    }
    let referencedMessageId: string | undefined;
    if (input.referencedMessageId !== undefined) {
      referencedMessageId = this.message(input.channelId, input.referencedMessageId).id;
    }
    const { mentionIds, mentionEveryone } = this.resolveMentions(input, referencedMessageId);
    channel.messageCount += 1;
    const message = this.store(channel, {
      type: referencedMessageId === undefined ? 0 : 19,
      channelId: channel.id,
      authorId: input.authorId,
      content: input.content,
      mentionIds,
      mentionEveryone,
      ...(input.nonce === undefined ? {} : { nonce: input.nonce }),
      ...(referencedMessageId === undefined ? {} : { referencedMessageId }),
    });
    // Only a post that asked for enforcement is one a later enforced post with its nonce returns.
    if (nonceKey && input.enforceNonce) this.nonces.set(nonceKey, message);
    if (channel.type !== 0) {
      const joined = [input.authorId, ...mentionIds].filter((id) => !channel.members.has(id));
      for (const id of joined) channel.members.set(id, now);
      if (joined.length > 0) this.listener?.threadMembersChanged(channel, joined, []);
    }
    return { message, created: true };
  }

  private resolveMentions(
    input: CreateMessageInput,
    referencedMessageId: string | undefined,
  ): { mentionIds: string[]; mentionEveryone: boolean } {
    const inText = [...new Set([...input.content.matchAll(MENTION_PATTERN)].map((m) => m[1] ?? ""))].filter(
      (id) => this.users.has(id),
    );
    const everyoneInText = /@(everyone|here)\b/.test(input.content);
    // No allowed_mentions: Discord parses every kind.
    const allowed = input.allowedMentions ?? { parse: ["users", "everyone"] };
    const parse = allowed.parse ?? [];
    const users = new Set(allowed.users ?? []);
    const mentionIds = parse.includes("users") ? inText : inText.filter((id) => users.has(id));
    const mentionEveryone = everyoneInText && parse.includes("everyone");
    if (referencedMessageId !== undefined && (allowed.replied_user ?? true)) {
      const repliedTo = this.messagesById.get(referencedMessageId)?.authorId;
      if (repliedTo && !mentionIds.includes(repliedTo)) mentionIds.push(repliedTo);
    }
    return { mentionIds, mentionEveryone };
  }

  /** Creates a thread, from a message (thread id = message id, type 11) or standalone (type 11 or 12). */
  createThread(o: {
    parentId: string;
    ownerId: string;
    name: string;
    type?: number;
    messageId?: string;
  }): EmulatorChannel {
    const parent = this.channel(o.parentId);
    if (parent.type !== 0) throw new DiscordError(400, 50024, "Cannot execute action on this channel type");
    this.checkCanPost(parent, o.ownerId);
    if (o.name.length < 1 || o.name.length > 100) {
      throw invalidFormBody("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
    }
    const starter = o.messageId === undefined ? undefined : this.message(parent.id, o.messageId);
    if (starter && (starter.threadId !== undefined || this.channels.has(starter.id))) {
      throw new DiscordError(
        400,
        THREAD_ALREADY_CREATED,
        "A thread has already been created for this message",
      );
    }
    if (o.type !== undefined && o.type !== 11 && o.type !== 12) {
      throw invalidFormBody("type", "BASE_TYPE_CHOICES", "Value must be one of {11, 12}.");
    }
    const id = starter?.id ?? this.ids.next();
    const type = starter !== undefined || o.type === 11 ? 11 : 12;
    const now = this.now();
    const thread = newChannel(id, o.name, now, { type, parentId: parent.id, ownerId: o.ownerId });
    thread.members.set(o.ownerId, now);
    this.channels.set(id, thread);
    this.listener?.threadCreated(thread);
    // As Discord: the starter shows its thread (MESSAGE_UPDATE); a public thread opened without a
    // message is announced in its parent. A private thread is announced nowhere.
    if (starter) {
      starter.threadId = id;
      this.listener?.message("MESSAGE_UPDATE", starter);
    } else if (type === 11) {
      this.postSystemMessage(SYSTEM_MESSAGE.threadCreated, parent, o.ownerId, {
        content: thread.name,
        createdThreadId: thread.id,
      });
    }
    return thread;
  }

  /** Adds or removes a thread member: "X added / removed Y" when `byUserId` is someone else; joining or leaving posts nothing. */
  setThreadMember(threadId: string, userId: string, present: boolean, byUserId: string = userId): void {
    const thread = this.thread(threadId);
    if (present) this.user(userId);
    if (thread.members.has(userId) === present) return;
    if (present) thread.members.set(userId, this.now());
    else thread.members.delete(userId);
    this.listener?.threadMembersChanged(thread, present ? [userId] : [], present ? [] : [userId]);
    if (byUserId !== userId) {
      const type = present ? SYSTEM_MESSAGE.recipientAdd : SYSTEM_MESSAGE.recipientRemove;
      this.postSystemMessage(type, thread, byUserId, { mentionIds: [userId] });
    }
  }

  /** A message Discord posts itself: no nonce, no content checks, no member joins, not a thread's count. */
  private postSystemMessage(
    type: number,
    channel: EmulatorChannel,
    authorId: string,
    o: Partial<Pick<EmulatorMessage, "content" | "mentionIds" | "createdThreadId">>,
  ): void {
    this.store(channel, {
      type,
      channelId: channel.id,
      authorId,
      content: "",
      mentionIds: [],
      mentionEveryone: false,
      ...o,
    });
  }

  /** Stores and announces a new message; its timestamp is the time its snowflake id encodes. */
  private store(channel: EmulatorChannel, m: Omit<EmulatorMessage, "id" | "createdAt">): EmulatorMessage {
    const id = this.ids.next();
    const message: EmulatorMessage = { id, ...m, createdAt: snowflakeTimestamp(id) };
    this.messages.push(message);
    this.messagesById.set(message.id, message);
    channel.lastMessageId = message.id;
    this.listener?.message("MESSAGE_CREATE", message);
    return message;
  }

  thread(id: string): EmulatorChannel {
    const channel = this.channel(id);
    if (channel.type === 0) throw new DiscordError(400, 50024, "Cannot execute action on this channel type");
    return channel;
  }
}

function checkMaxLength(field: string, value: string, max: number): void {
  if (value.length > max)
    throw invalidFormBody(field, "BASE_TYPE_MAX_LENGTH", `Must be ${max} or fewer in length.`);
}

function checkSnowflake(what: string, id: string): void {
  if (!isSnowflake(id)) throw new TypeError(`${what} must be a 17–19 digit snowflake: ${id}`);
}

/** A text channel, or with `thread` a thread, with no messages, no members and no denials yet. */
function newChannel(
  id: string,
  name: string,
  createdAt: number,
  thread: Pick<EmulatorChannel, "type" | "parentId" | "ownerId"> = { type: 0, parentId: null, ownerId: null },
): EmulatorChannel {
  const empty = { lastMessageId: null, messageCount: 0, members: new Map(), denied: new Set<string>() };
  return { id, name, createdAt, ...thread, ...empty };
}
