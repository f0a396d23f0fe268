// The REST routes (API v10) the Discord emulator answers, with Discord's path templates.
import { applicationRoutes } from "./applicationRoutes.js";
import { DiscordError, invalidFormBody } from "./errors.js";
import type { BucketRoute } from "./rateLimits.js";
import { react } from "./reactions.js";
import {
  compile,
  noContent,
  ok,
  param,
  type Route,
  type RouteContext,
  type RouteSpec,
  str,
  userParam,
} from "./routeKit.js";
import {
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
function openThread(ctx: RouteContext): { status: number; body: unknown } {
  const messageId = ctx.params.message_id;
  const type = ctx.body.type;
  const thread = ctx.state.createThread({
    parentId: param(ctx, "channel_id"),
    ownerId: ctx.userId,
    name: str(ctx.body, "name") ?? "",
    ...(messageId !== undefined ? { messageId } : typeof type === "number" ? { type } : {}),
  });
  return { status: 201, body: channelJson(ctx.state, thread) };
}

/** Every route the emulator answers (the conformance test checks each one is exercised). */
export const routes: readonly Route[] = (
  [
    ...applicationRoutes,
    {
      method: "GET",
      path: "/gateway/bot",
      handler: (ctx) =>
        ok({
          url: ctx.gatewayUrl,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 },
        }),
    },
    { method: "GET", path: "/gateway", handler: (ctx) => ok({ url: ctx.gatewayUrl }) },
    { method: "GET", path: "/users/@me", handler: (ctx) => ok(selfUserJson(ctx.state, ctx.userId)) },
    {
      method: "GET",
      path: "/users/@me/guilds",
      handler: (ctx) =>
        ok([
          {
            id: ctx.state.guildId,
            name: ctx.state.guildName,
            icon: null,
            banner: null,
            owner: guildOwnerId(ctx.state, ctx.userId) === ctx.userId,
            permissions: EVERYONE_PERMISSIONS,
            features: [],
          },
        ]),
    },
    {
      method: "GET",
      path: "/users/{user_id}",
      handler: (ctx) => ok(userJson(ctx.state, ctx.state.user(param(ctx, "user_id")).id)),
    },
    {
      method: "GET",
      path: "/guilds/{guild_id}",
      handler: (ctx) => {
        const { channels: _c, threads: _t, members: _m, ...rest } = guildCreateJson(ctx.state, ctx.userId);
        return ok(rest);
      },
    },
    {
      method: "GET",
      path: "/guilds/{guild_id}/channels",
      handler: (ctx) => {
        return ok(ctx.state.textChannels().map((c) => channelJson(ctx.state, c)));
      },
    },
    {
      method: "GET",
      path: "/guilds/{guild_id}/threads/active",
      handler: (ctx) => {
        const threads = ctx.state.threads().filter((t) => t.type === 11 || t.members.has(ctx.userId));
        const members = threads
          .filter((t) => t.members.has(ctx.userId))
          .map((t) => threadMemberJson(t, ctx.userId, t.members.get(ctx.userId) ?? 0));
        return ok({ threads: threads.map((t) => channelJson(ctx.state, t)), members, has_more: false });
      },
    },
    {
      method: "GET",
      path: "/guilds/{guild_id}/members/search",
      handler: (ctx) => {
        // As Discord: members whose username (or nickname; the emulator sets none) starts with `query`.
        const query = (ctx.query.get("query") ?? "").toLowerCase();
        if (query === "") throw invalidFormBody("query", "BASE_TYPE_REQUIRED", "This field is required");
        const limit = Math.min(1000, Math.max(1, Number(ctx.query.get("limit") ?? 1) || 1));
        const found = [...ctx.state.users.values()].filter((u) => u.name.toLowerCase().startsWith(query));
        return ok(found.slice(0, limit).map((u) => memberJson(ctx.state, u.id, true)));
      },
    },
    {
      method: "GET",
      path: "/guilds/{guild_id}/members/{user_id}",
      handler: (ctx) => {
        return ok(memberJson(ctx.state, ctx.state.user(param(ctx, "user_id")).id, true));
      },
    },
    {
      method: "GET",
      path: "/channels/{channel_id}",
      handler: (ctx) => ok(channelJson(ctx.state, ctx.state.channel(param(ctx, "channel_id")))),
    },
    {
      method: "GET",
      path: "/channels/{channel_id}/messages",
      handler: (ctx) => {
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
    },
    {
      method: "POST",
      path: "/channels/{channel_id}/messages",
      group: "messages",
      handler: (ctx) => {
        const reference = ctx.body.message_reference as Json | undefined;
        const nonce = str(ctx.body, "nonce");
        let referencedMessageId = reference ? str(reference, "message_id") : undefined;
        // `fail_if_not_exists: false`: a reply to an unknown message is posted as a plain message.
        const target =
          referencedMessageId === undefined ? undefined : ctx.state.messagesById.get(referencedMessageId);
        if (reference?.fail_if_not_exists === false && target?.channelId !== param(ctx, "channel_id")) {
          referencedMessageId = undefined;
        }
        const { message } = ctx.state.createMessage({
          channelId: param(ctx, "channel_id"),
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
    {
      method: "GET",
      path: "/channels/{channel_id}/messages/{message_id}",
      handler: (ctx) =>
        ok(
          messageJson(
            ctx.state,
            ctx.state.message(param(ctx, "channel_id"), param(ctx, "message_id")),
            false,
            ctx.userId,
          ),
        ),
    },
    ...(["PUT", "DELETE"] as const).map((method) => ({
      method,
      path: "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/@me",
      group: "reactions" as const,
      handler: (ctx: RouteContext) => {
        const [channelId, messageId, emoji] = [
          param(ctx, "channel_id"),
          param(ctx, "message_id"),
          param(ctx, "emoji_name"),
        ];
        react(ctx.state, { channelId, messageId, emoji, userId: ctx.userId }, method === "PUT");
        return noContent();
      },
    })),
    {
      method: "POST",
      path: "/channels/{channel_id}/typing",
      handler: (ctx) => {
        ctx.state.channel(param(ctx, "channel_id"));
        return noContent();
      },
    },
    {
      method: "POST",
      path: "/channels/{channel_id}/messages/{message_id}/threads",
      group: "threads",
      handler: openThread,
    },
    { method: "POST", path: "/channels/{channel_id}/threads", group: "threads", handler: openThread },
    {
      method: "GET",
      path: "/channels/{channel_id}/thread-members",
      handler: (ctx) => {
        const thread = ctx.state.thread(param(ctx, "channel_id"));
        return ok([...thread.members].map(([userId, at]) => threadMemberJson(thread, userId, at)));
      },
    },
    {
      method: "GET",
      path: "/channels/{channel_id}/thread-members/{user_id}",
      handler: (ctx) => {
        const thread = ctx.state.thread(param(ctx, "channel_id"));
        const userId = userParam(ctx);
        const joinedAt = thread.members.get(userId);
        if (joinedAt === undefined) throw new DiscordError(404, 10007, "Unknown Member");
        return ok(threadMemberJson(thread, userId, joinedAt));
      },
    },
    {
      method: "PUT",
      path: "/channels/{channel_id}/thread-members/{user_id}",
      handler: (ctx) => {
        ctx.state.addThreadMember(param(ctx, "channel_id"), userParam(ctx), ctx.userId);
        return noContent();
      },
    },
    {
      method: "DELETE",
      path: "/channels/{channel_id}/thread-members/{user_id}",
      handler: (ctx) => {
        ctx.state.removeThreadMember(param(ctx, "channel_id"), userParam(ctx), ctx.userId);
        return noContent();
      },
    },
  ] satisfies RouteSpec[]
).map(compile);

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
