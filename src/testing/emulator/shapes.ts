// The emulator's objects as Discord API v10 sends them: users, members, channels, threads, messages,
// guilds, and a bot's application.
import { createHash } from "node:crypto";
import { reactionsJson } from "./reactions.js";
import type { EmulatorChannel, EmulatorMessage, EmulatorState, Json } from "./state.js";

/** What @everyone may do in the emulated guild (Discord's default for a new guild). */
export const EVERYONE_PERMISSIONS = "2248473465835073";

/**
 * A bot's application flags: the three privileged intents enabled, as "limited" (a bot in under 100
 * guilds), so a client reading them finds Message Content allowed. The emulator enforces none of them.
 */
export const APPLICATION_FLAGS = (1 << 13) | (1 << 15) | (1 << 19);

/** The guild's owner: its first human user, else `selfId`. */
export function guildOwnerId(state: EmulatorState, selfId: string): string {
  return [...state.users.values()].find((u) => !u.bot)?.id ?? selfId;
}

export function userJson(state: EmulatorState, id: string): Json {
  const user = state.users.get(id) ?? { id, name: `user-${id.slice(-4)}`, bot: false };
  return {
    id: user.id,
    username: user.name,
    discriminator: "0",
    global_name: user.name,
    avatar: null,
    bot: user.bot,
    system: false,
    public_flags: 0,
    flags: 0,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
    collectibles: null,
    // No server tag: Discord sends null, not an absent field.
    primary_guild: null,
  };
}

/** The user a bot's own token belongs to (GET /users/@me, the gateway's READY): with its account fields. */
export function selfUserJson(state: EmulatorState, id: string): Json {
  return {
    ...userJson(state, id),
    mfa_enabled: false,
    locale: "en-US",
    premium_type: 0,
    email: null,
    verified: true,
  };
}

export function memberJson(state: EmulatorState, userId: string, withUser: boolean): Json {
  return {
    ...(withUser ? { user: userJson(state, userId) } : {}),
    nick: null,
    avatar: null,
    banner: null,
    roles: [],
    joined_at: new Date(state.joinedAt).toISOString(),
    premium_since: null,
    communication_disabled_until: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
  };
}

export function threadMemberJson(thread: EmulatorChannel, userId: string, joinedAt: number): Json {
  return { id: thread.id, user_id: userId, join_timestamp: new Date(joinedAt).toISOString(), flags: 0 };
}

export function channelJson(state: EmulatorState, channel: EmulatorChannel): Json {
  const base: Json = {
    id: channel.id,
    type: channel.type,
    guild_id: state.guildId,
    name: channel.name,
    last_message_id: channel.lastMessageId,
    rate_limit_per_user: 0,
    flags: 0,
  };
  if (channel.type === 0) {
    const position = state.textChannels().indexOf(channel);
    return { ...base, position, permission_overwrites: [], parent_id: null, nsfw: false, topic: null };
  }
  return {
    ...base,
    parent_id: channel.parentId,
    owner_id: channel.ownerId,
    message_count: channel.messageCount,
    total_message_sent: channel.messageCount,
    member_count: Math.min(channel.members.size, 50),
    thread_metadata: {
      archived: false,
      auto_archive_duration: 1440,
      archive_timestamp: new Date(channel.createdAt).toISOString(),
      locked: false,
      invitable: channel.type === 12 ? true : undefined,
      create_timestamp: new Date(channel.createdAt).toISOString(),
    },
  };
}

/** A message; `viewerId` (REST) gets its reactions, with `me` said for that user. */
export function messageJson(
  state: EmulatorState,
  message: EmulatorMessage,
  forGateway: boolean,
  viewerId?: string,
): Json {
  const json: Json = {
    id: message.id,
    type: message.type,
    channel_id: message.channelId,
    author: userJson(state, message.authorId),
    content: message.content,
    timestamp: new Date(message.createdAt).toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: message.mentionEveryone,
    mentions: message.mentionIds.map((id) => ({
      ...userJson(state, id),
      member: memberJson(state, id, false),
    })),
    mention_roles: [],
    attachments: [],
    embeds: [],
    components: [],
    pinned: false,
    flags: message.threadId === undefined ? 0 : 32,
    ...(message.nonce === undefined ? {} : { nonce: message.nonce }),
    ...(viewerId === undefined || !message.reactions?.size
      ? {}
      : { reactions: reactionsJson(message, viewerId) }),
  };
  if (message.referencedMessageId !== undefined) {
    const referenced = state.messagesById.get(message.referencedMessageId);
    json.message_reference = {
      type: 0,
      message_id: message.referencedMessageId,
      channel_id: message.channelId,
      guild_id: state.guildId,
    };
    json.referenced_message = referenced ? messageJson(state, referenced, false, viewerId) : null;
  }
  if (message.createdThreadId !== undefined) {
    // A THREAD_CREATED message points at the thread it announces, not at a message.
    json.message_reference = { type: 0, channel_id: message.createdThreadId, guild_id: state.guildId };
  }
  if (message.threadId !== undefined) {
    const thread = state.channels.get(message.threadId);
    if (thread) json.thread = channelJson(state, thread);
  }
  if (forGateway) {
    json.guild_id = state.guildId;
    json.member = memberJson(state, message.authorId, false);
  }
  return json;
}

export function guildCreateJson(state: EmulatorState, selfId: string): Json {
  return {
    id: state.guildId,
    name: state.guildName,
    icon: null,
    home_header: null,
    splash: null,
    discovery_splash: null,
    owner_id: guildOwnerId(state, selfId),
    application_id: null,
    region: "deprecated",
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    widget_enabled: false,
    widget_channel_id: null,
    max_presences: null,
    max_members: 25_000_000,
    max_stage_video_channel_users: 50,
    max_video_channel_users: 25,
    premium_subscription_count: 0,
    safety_alerts_channel_id: null,
    incidents_data: null,
    roles: [
      {
        id: state.guildId,
        name: "@everyone",
        color: 0,
        colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
        hoist: false,
        position: 0,
        permissions: EVERYONE_PERMISSIONS,
        managed: false,
        mentionable: false,
        icon: null,
        unicode_emoji: null,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    preferred_locale: "en-US",
    public_updates_channel_id: null,
    nsfw: false,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    joined_at: new Date(state.joinedAt).toISOString(),
    large: false,
    unavailable: false,
    member_count: state.users.size,
    voice_states: [],
    members: [memberJson(state, selfId, true)],
    channels: state.textChannels().map((c) => channelJson(state, c)),
    threads: state.threads().map((t) => channelJson(state, t)),
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** The application of the bot `userId` (GET /oauth2/applications/@me): its id is the bot's. */
export function applicationJson(state: EmulatorState, userId: string): Json {
  const bot = state.user(userId);
  const flags = APPLICATION_FLAGS;
  return {
    id: bot.id,
    name: bot.name,
    icon: null,
    description: "",
    type: null,
    bot: userJson(state, bot.id),
    bot_public: true,
    bot_require_code_grant: false,
    verify_key: createHash("sha256").update(bot.id).digest("hex"),
    flags,
    flags_new: String(flags),
    redirect_uris: [],
    interactions_endpoint_url: null,
    role_connections_verification_url: null,
    owner: userJson(state, guildOwnerId(state, bot.id)),
    approximate_guild_count: 1,
    approximate_user_install_count: 0,
    approximate_user_authorization_count: 0,
    explicit_content_filter: 0,
    team: null,
    tags: [],
    install_params: { scopes: ["applications.commands", "bot"], permissions: "0" },
    eligible_oauth2_scopes: ["applications.commands", "bot"],
  };
}
