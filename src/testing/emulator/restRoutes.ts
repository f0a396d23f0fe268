// The REST routes (API v10) the Discord emulator answers, keyed by method and Discord's path template.
import { DiscordError, invalidFormBody } from "./errors.js";
import type { BucketRoute } from "./rateLimits.js";
import { react } from "./reactions.js";
import {
  compile,
  type Handler,
  noContent,
  ok,
  param,
  type Route,
  type RouteSpec,
  str,
  userParam,
} from "./routeKit.js";
import {
  applicationJson,
  channelJson,
  EVERYONE_PERMISSIONS,
  guildCreateJson,
  guildOwnerId,
  memberJson,
  messageJson,
  selfUserJson,
  threadMemberJson,
  userJson,
} from "./shapes.js";
import type { AllowedMentions, Json } from "./state.js";

/** A thread from a message (its id the message's) or standalone (`type` 11 or 12, default 12). */
const openThread: RouteSpec = {
  group: "threads",
  handler: (ctx) => {
    const messageId = ctx.params.message_id;
    const type = ctx.body.type;
    const thread = ctx.state.createThread({
      parentId: param(ctx, "channel_id"),
      ownerId: ctx.userId,
      name: str(ctx.body, "name") ?? "",
      ...(messageId !== undefined ? { messageId } : typeof type === "number" ? { type } : {}),
    });
    return { status: 201, body: channelJson(ctx.state, thread) };
  },
};

const reaction = (add: boolean): RouteSpec => ({
  group: "reactions",
  handler: ({ state, params, userId }) => {
    const { channel_id: channelId = "", message_id: messageId = "", emoji_name: emoji = "" } = params;
    react(state, { channelId, messageId, emoji, userId }, add);
    return noContent();
  },
});

const threadMember =
  (present: boolean): Handler =>
  (ctx) => {
    ctx.state.setThreadMember(param(ctx, "channel_id"), userParam(ctx), present, ctx.userId);
    return noContent();
  };

// A bot's application id is its user id; a global command's path names no guild (`guild_id` undefined).
const GLOBAL = "/applications/{application_id}/commands";
const GUILD = "/applications/{application_id}/guilds/{guild_id}/commands";
const commandRoutes = (path: string): Record<string, RouteSpec | Handler> => ({
  [`GET ${path}`]: (ctx) => ok(ctx.state.commands.list(ctx.userId, ctx.params.guild_id)),
  // Created: 201; an existing command of the same name updated: 200 (as Discord answers a POST).
  [`POST ${path}`]: {
    group: "commands",
    handler: (ctx) => {
      const { command, created } = ctx.state.commands.upsert(ctx.userId, ctx.params.guild_id, ctx.body);
      return { status: created ? 201 : 200, body: command };
    },
  },
  [`PUT ${path}`]: {
    listBody: true,
    handler: (ctx) => ok(ctx.state.commands.overwrite(ctx.userId, ctx.params.guild_id, ctx.list)),
  },
});

const table: Record<string, RouteSpec | Handler> = {
  "GET /oauth2/applications/@me": (ctx) => ok(applicationJson(ctx.state, ctx.userId)),
  ...commandRoutes(GLOBAL),
  ...commandRoutes(GUILD),
  [`PATCH ${GLOBAL}/{command_id}`]: (ctx) =>
    ok(ctx.state.commands.edit(ctx.userId, undefined, param(ctx, "command_id"), ctx.body)),
  [`DELETE ${GLOBAL}/{command_id}`]: (ctx) => {
    ctx.state.commands.remove(ctx.userId, undefined, param(ctx, "command_id"));
    return noContent();
  },
  "GET /gateway/bot": (ctx) =>
    ok({
      url: ctx.gatewayUrl,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 },
    }),
  "GET /gateway": (ctx) => ok({ url: ctx.gatewayUrl }),
  "GET /users/@me": (ctx) => ok(selfUserJson(ctx.state, ctx.userId)),
  "GET /users/@me/guilds": ({ state, userId }) =>
    ok([
      {
        id: state.guildId,
        name: state.guildName,
        icon: null,
        banner: null,
        owner: guildOwnerId(state, userId) === userId,
        permissions: EVERYONE_PERMISSIONS,
        features: [],
      },
    ]),
  "GET /users/{user_id}": (ctx) => ok(userJson(ctx.state, ctx.state.user(param(ctx, "user_id")).id)),
  "GET /guilds/{guild_id}": (ctx) => {
    const { channels: _c, threads: _t, members: _m, ...rest } = guildCreateJson(ctx.state, ctx.userId);
    return ok(rest);
  },
  "GET /guilds/{guild_id}/channels": (ctx) =>
    ok(ctx.state.textChannels().map((c) => channelJson(ctx.state, c))),
  "GET /guilds/{guild_id}/threads/active": ({ state, userId }) => {
    const threads = state.threads().filter((t) => t.type === 11 || t.members.has(userId));
    const members = threads
      .filter((t) => t.members.has(userId))
      .map((t) => threadMemberJson(t, userId, t.members.get(userId) ?? 0));
    return ok({ threads: threads.map((t) => channelJson(state, t)), members, has_more: false });
  },
  // As Discord: members whose username (or nickname; the emulator sets none) starts with `query`.
  "GET /guilds/{guild_id}/members/search": (ctx) => {
    const query = (ctx.query.get("query") ?? "").toLowerCase();
    if (query === "") throw invalidFormBody("query", "BASE_TYPE_REQUIRED", "This field is required");
    const limit = Math.min(1000, Math.max(1, Number(ctx.query.get("limit") ?? 1) || 1));
    const found = [...ctx.state.users.values()].filter((u) => u.name.toLowerCase().startsWith(query));
    return ok(found.slice(0, limit).map((u) => memberJson(ctx.state, u.id, true)));
  },
  "GET /guilds/{guild_id}/members/{user_id}": (ctx) =>
    ok(memberJson(ctx.state, ctx.state.user(param(ctx, "user_id")).id, true)),
  "GET /channels/{channel_id}": (ctx) =>
    ok(channelJson(ctx.state, ctx.state.channel(param(ctx, "channel_id")))),
  "GET /channels/{channel_id}/messages": (ctx) => {
    const channel = ctx.state.channel(param(ctx, "channel_id"));
    const limit = Math.min(100, Math.max(1, Number(ctx.query.get("limit") ?? 50) || 50));
    const before = ctx.query.get("before");
    const after = ctx.query.get("after");
    let list = ctx.state.messages.filter((m) => m.channelId === channel.id);
    if (before) list = list.filter((m) => BigInt(m.id) < BigInt(before));
    if (after) list = list.filter((m) => BigInt(m.id) > BigInt(after));
    const page = after ? list.slice(0, limit) : list.slice(-limit);
    // As Discord: a message list carries no nonces (only the answer to the post that set one does).
    return ok(
      page.reverse().map((m) => ({ ...messageJson(ctx.state, m, false, ctx.userId), nonce: undefined })),
    );
  },
  "POST /channels/{channel_id}/messages": {
    group: "messages",
    handler: (ctx) => {
      const channelId = param(ctx, "channel_id");
      const reference = ctx.body.message_reference as Json | undefined;
      const nonce = str(ctx.body, "nonce");
      let referencedMessageId = reference ? str(reference, "message_id") : undefined;
      // `fail_if_not_exists: false`: a reply to an unknown message is posted as a plain message.
      const target =
        referencedMessageId === undefined ? undefined : ctx.state.messagesById.get(referencedMessageId);
      if (reference?.fail_if_not_exists === false && target?.channelId !== channelId) {
        referencedMessageId = undefined;
      }
      const { message } = ctx.state.createMessage({
        channelId,
        authorId: ctx.userId,
        content: str(ctx.body, "content") ?? "",
        ...(nonce === undefined ? {} : { nonce }),
        enforceNonce: ctx.body.enforce_nonce === true,
        ...(ctx.body.allowed_mentions
          ? { allowedMentions: ctx.body.allowed_mentions as AllowedMentions }
          : {}),
        ...(referencedMessageId === undefined ? {} : { referencedMessageId }),
      });
      return ok(messageJson(ctx.state, message, false));
    },
  },
  "GET /channels/{channel_id}/messages/{message_id}": (ctx) => {
    const message = ctx.state.message(param(ctx, "channel_id"), param(ctx, "message_id"));
    return ok(messageJson(ctx.state, message, false, ctx.userId));
  },
  "PUT /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me": reaction(true),
  "DELETE /channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me": reaction(false),
  "POST /channels/{channel_id}/typing": (ctx) => {
    ctx.state.channel(param(ctx, "channel_id"));
    return noContent();
  },
  "POST /channels/{channel_id}/messages/{message_id}/threads": openThread,
  "POST /channels/{channel_id}/threads": openThread,
  "GET /channels/{channel_id}/thread-members": (ctx) => {
    const thread = ctx.state.thread(param(ctx, "channel_id"));
    return ok([...thread.members].map(([userId, at]) => threadMemberJson(thread, userId, at)));
  },
  "GET /channels/{channel_id}/thread-members/{user_id}": (ctx) => {
    const thread = ctx.state.thread(param(ctx, "channel_id"));
    const userId = userParam(ctx);
    const joinedAt = thread.members.get(userId);
    if (joinedAt === undefined) throw new DiscordError(404, 10007, "Unknown Member");
    return ok(threadMemberJson(thread, userId, joinedAt));
  },
  "PUT /channels/{channel_id}/thread-members/{user_id}": threadMember(true),
  "DELETE /channels/{channel_id}/thread-members/{user_id}": threadMember(false),
};

/** Every route the emulator answers (the conformance test checks each one is exercised). */
export const routes: readonly Route[] = Object.entries(table).map(([key, spec]) =>
  compile(key, typeof spec === "function" ? { handler: spec } : spec),
);

/** The route for `method` and `path` (after /api/v10) with its ids, "method" when only the method is wrong. */
export function findRoute(
  method: string,
  path: string,
): { route: Route; params: Record<string, string> } | "method" | null {
  const candidates = routes.filter((r) => r.pattern.test(path));
  const route = candidates.find((r) => r.method === method);
  if (!route) return candidates.length > 0 ? "method" : null;
  const values = (route.pattern.exec(path) ?? []).slice(1);
  return { route, params: Object.fromEntries(route.names.map((name, i) => [name, values[i] ?? ""])) };
}

/** What a route's requests count against: its group, its shape, the channel or guild it names. */
export function bucketRoute(route: Route, params: Record<string, string>): BucketRoute {
  const major = params.channel_id ?? params.guild_id ?? "";
  return { group: route.group ?? "other", route: `${route.method} ${route.path}`, majorParameter: major };
}
