// The emulator's objects as Discord API v10 sends them: users, members, channels, threads, messages,
// guilds, and a bot's application.
import { createHash } from "node:crypto";
import { reactionsJson } from "./reactions.js";
import type { EmulatorChannel, EmulatorMessage, EmulatorState, Json } from "./state.js";

/** What @everyone may do in the emulated guild (Discord's default for a new guild). */
export const EVERYONE_PERMISSIONS = "2248473465835073";

/** The three privileged intents as "limited" (under 100 guilds), so a client finds Message Content allowed. */
export const APPLICATION_FLAGS = (1 << 13) | (1 << 15) | (1 << 19);

/** Fields a client expects present though empty here (null, 0, false, []), named space-separated. */
export function empty(value: unknown, names: string): Json {
  return Object.fromEntries(names.split(" ").map((name) => [name, value]));
}

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
    bot: user.bot,
    system: false,
    ...empty(0, "public_flags flags"),
    // primary_guild: no server tag, which Discord sends as null, not an absent field.
    ...empty(null, "avatar banner accent_color avatar_decoration_data collectibles primary_guild"),
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
    roles: [],
    joined_at: new Date(state.joinedAt).toISOString(),
    flags: 0,
    ...empty(null, "nick avatar banner premium_since communication_disabled_until"),
    ...empty(false, "deaf mute pending"),
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
    ...empty(false, "tts pinned"),
    ...empty([], "mention_roles attachments embeds components"),
    mention_everyone: message.mentionEveryone,
    mentions: message.mentionIds.map((id) => ({
      ...userJson(state, id),
      member: memberJson(state, id, false),
    })),
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
  const everyone = {
    id: state.guildId,
    name: "@everyone",
    permissions: EVERYONE_PERMISSIONS,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    ...empty(0, "color position flags"),
    ...empty(false, "hoist managed mentionable"),
    ...empty(null, "icon unicode_emoji"),
  };
  return {
    id: state.guildId,
    name: state.guildName,
    owner_id: guildOwnerId(state, selfId),
    region: "deprecated",
    afk_timeout: 300,
    max_members: 25_000_000,
    max_stage_video_channel_users: 50,
    max_video_channel_users: 25,
    preferred_locale: "en-US",
    roles: [everyone],
    joined_at: new Date(state.joinedAt).toISOString(),
    member_count: state.users.size,
    members: [memberJson(state, selfId, true)],
    channels: state.textChannels().map((c) => channelJson(state, c)),
    threads: state.threads().map((t) => channelJson(state, t)),
    ...empty(
      null,
      "icon home_header splash discovery_splash application_id afk_channel_id widget_channel_id max_presences " +
        "safety_alerts_channel_id incidents_data system_channel_id rules_channel_id vanity_url_code " +
        "description banner public_updates_channel_id",
    ),
    ...empty(
      0,
      "verification_level default_message_notifications explicit_content_filter premium_subscription_count " +
        "mfa_level system_channel_flags premium_tier nsfw_level",
    ),
    ...empty(false, "widget_enabled nsfw premium_progress_bar_enabled large unavailable"),
    ...empty(
      [],
      "emojis stickers features voice_states presences stage_instances guild_scheduled_events soundboard_sounds",
    ),
  };
}

/** The application of the bot `userId` (GET /oauth2/applications/@me): its id is the bot's. */
export function applicationJson(state: EmulatorState, userId: string): Json {
  const bot = state.user(userId);
  return {
    id: bot.id,
    name: bot.name,
    description: "",
    bot: userJson(state, bot.id),
    bot_public: true,
    bot_require_code_grant: false,
    verify_key: createHash("sha256").update(bot.id).digest("hex"),
    flags: APPLICATION_FLAGS,
    flags_new: String(APPLICATION_FLAGS),
    owner: userJson(state, guildOwnerId(state, bot.id)),
    approximate_guild_count: 1,
    ...empty(null, "icon type interactions_endpoint_url role_connections_verification_url team"),
    ...empty(
      0,
      "approximate_user_install_count approximate_user_authorization_count explicit_content_filter",
    ),
    ...empty([], "redirect_uris tags"),
    install_params: { scopes: ["applications.commands", "bot"], permissions: "0" },
    eligible_oauth2_scopes: ["applications.commands", "bot"],
  };
}
