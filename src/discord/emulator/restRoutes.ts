// REST API (v10) of the Discord emulator: routing, auth, fault injection, Discord-shaped errors.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FaultQueue } from "./faults.js";
import {
  type AllowedMentions,
  DiscordError,
  type EmulatorState,
  invalidFormBody,
  type Json,
} from "./state.js";
import { userIdFromToken } from "./tokens.js";
import {
  channelJson,
  guildCreateJson,
  memberJson,
  messageJson,
  selfUserJson,
  threadMemberJson,
  userJson,
} from "./shapes.js";

export const API_PREFIX = "/api/v10";

interface RouteContext {
  state: EmulatorState;
  userId: string;
  params: string[];
  body: Json;
  query: URLSearchParams;
  gatewayUrl: string;
}

type Handler = (ctx: RouteContext) => { status: number; body?: unknown };

export interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

const ID = "(\\d{1,20})";
const ok = (body: unknown): { status: number; body: unknown } => ({ status: 200, body });
const noContent = (): { status: number } => ({ status: 204 });

function str(body: Json, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  throw invalidFormBody(key, "STRING_TYPE_CONVERT", "Could not interpret the value as a string.");
}

function param(ctx: RouteContext, index: number): string {
  return ctx.params[index] ?? "";
}

function userParam(ctx: RouteContext, index: number): string {
  const value = param(ctx, index);
  return value === "@me" ? ctx.userId : value;
}

/** Every route the emulator answers (the conformance test checks each one is exercised). */
export const routes: readonly Route[] = [
  {
    method: "GET",
    pattern: /^\/gateway\/bot$/,
    handler: (ctx) =>
      ok({
        url: ctx.gatewayUrl,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 },
      }),
  },
  { method: "GET", pattern: /^\/gateway$/, handler: (ctx) => ok({ url: ctx.gatewayUrl }) },
  { method: "GET", pattern: /^\/users\/@me$/, handler: (ctx) => ok(selfUserJson(ctx.state, ctx.userId)) },
  {
    method: "GET",
    pattern: new RegExp(`^/users/${ID}$`),
    handler: (ctx) => ok(userJson(ctx.state, ctx.state.user(param(ctx, 0)).id)),
  },
  {
    method: "GET",
    pattern: new RegExp(`^/guilds/${ID}$`),
    handler: (ctx) => {
      guild(ctx, param(ctx, 0));
      const { channels: _c, threads: _t, members: _m, ...rest } = guildCreateJson(ctx.state, ctx.userId);
      return ok(rest);
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/guilds/${ID}/channels$`),
    handler: (ctx) => {
      guild(ctx, param(ctx, 0));
      return ok(ctx.state.textChannels().map((c) => channelJson(ctx.state, c)));
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/guilds/${ID}/threads/active$`),
    handler: (ctx) => {
      guild(ctx, param(ctx, 0));
      const threads = ctx.state.threads().filter((t) => t.type === 11 || t.members.has(ctx.userId));
      const members = threads
        .filter((t) => t.members.has(ctx.userId))
        .map((t) => threadMemberJson(t, ctx.userId, t.members.get(ctx.userId) ?? 0));
      return ok({ threads: threads.map((t) => channelJson(ctx.state, t)), members, has_more: false });
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/guilds/${ID}/members/${ID}$`),
    handler: (ctx) => {
      guild(ctx, param(ctx, 0));
      return ok(memberJson(ctx.state, ctx.state.user(param(ctx, 1)).id, true));
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/channels/${ID}$`),
    handler: (ctx) => ok(channelJson(ctx.state, ctx.state.channel(param(ctx, 0)))),
  },
  {
    method: "GET",
    pattern: new RegExp(`^/channels/${ID}/messages$`),
    handler: (ctx) => {
      const channel = ctx.state.channel(param(ctx, 0));
      const limit = Math.min(100, Math.max(1, Number(ctx.query.get("limit") ?? 50) || 50));
      const before = ctx.query.get("before");
      const after = ctx.query.get("after");
      let list = ctx.state.messages.filter((m) => m.channelId === channel.id);
      if (before) list = list.filter((m) => BigInt(m.id) < BigInt(before));
      if (after) list = list.filter((m) => BigInt(m.id) > BigInt(after));
      const page = after ? list.slice(0, limit) : list.slice(-limit);
      // As Discord: a message list carries no nonces (only the answer to the post that set one does).
      return ok(page.reverse().map((m) => ({ ...messageJson(ctx.state, m, false), nonce: undefined })));
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^/channels/${ID}/messages$`),
    handler: (ctx) => {
      const reference = ctx.body.message_reference as Json | undefined;
      const nonce = str(ctx.body, "nonce");
      const referencedMessageId = reference ? str(reference, "message_id") : undefined;
      const { message } = ctx.state.createMessage({
        channelId: param(ctx, 0),
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
    pattern: new RegExp(`^/channels/${ID}/messages/${ID}$`),
    handler: (ctx) => ok(messageJson(ctx.state, ctx.state.message(param(ctx, 0), param(ctx, 1)), false)),
  },
  {
    method: "POST",
    pattern: new RegExp(`^/channels/${ID}/typing$`),
    handler: (ctx) => {
      ctx.state.channel(param(ctx, 0));
      return noContent();
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^/channels/${ID}/messages/${ID}/threads$`),
    handler: (ctx) => {
      const thread = ctx.state.createThread({
        parentId: param(ctx, 0),
        messageId: param(ctx, 1),
        ownerId: ctx.userId,
        name: str(ctx.body, "name") ?? "",
      });
      return { status: 201, body: channelJson(ctx.state, thread) };
    },
  },
  {
    method: "POST",
    pattern: new RegExp(`^/channels/${ID}/threads$`),
    handler: (ctx) => {
      const type = ctx.body.type;
      const thread = ctx.state.createThread({
        parentId: param(ctx, 0),
        ownerId: ctx.userId,
        name: str(ctx.body, "name") ?? "",
        ...(typeof type === "number" ? { type } : {}),
      });
      return { status: 201, body: channelJson(ctx.state, thread) };
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/channels/${ID}/thread-members$`),
    handler: (ctx) => {
      const thread = ctx.state.thread(param(ctx, 0));
      return ok([...thread.members].map(([userId, at]) => threadMemberJson(thread, userId, at)));
    },
  },
  {
    method: "GET",
    pattern: new RegExp(`^/channels/${ID}/thread-members/(@me|\\d{1,20})$`),
    handler: (ctx) => {
      const thread = ctx.state.thread(param(ctx, 0));
      const userId = userParam(ctx, 1);
      const joinedAt = thread.members.get(userId);
      if (joinedAt === undefined) throw new DiscordError(404, 10007, "Unknown Member");
      return ok(threadMemberJson(thread, userId, joinedAt));
    },
  },
  {
    method: "PUT",
    pattern: new RegExp(`^/channels/${ID}/thread-members/(@me|\\d{1,20})$`),
    handler: (ctx) => {
      ctx.state.addThreadMember(param(ctx, 0), userParam(ctx, 1));
      return noContent();
    },
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/channels/${ID}/thread-members/(@me|\\d{1,20})$`),
    handler: (ctx) => {
      ctx.state.removeThreadMember(param(ctx, 0), userParam(ctx, 1));
      return noContent();
    },
  },
];

function guild(ctx: RouteContext, id: string): void {
  if (id !== ctx.state.guildId) throw new DiscordError(404, 10004, "Unknown Guild");
}

export interface RestOptions {
  state: EmulatorState;
  faults: FaultQueue;
  gatewayUrl: () => string;
  /** Responses held open by a `timeout` fault; ended on close. */
  held: Set<ServerResponse>;
}

export async function handleRest(
  options: RestOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = (req.method ?? "GET").toUpperCase();
  if (!url.pathname.startsWith(`${API_PREFIX}/`)) {
    json(res, 404, { message: "404: Not Found", code: 0 });
    return;
  }
  let path = url.pathname.slice(API_PREFIX.length);
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep the raw path; no route will match it
  }
  const raw = await readBody(req);
  const userId = userIdFromToken(req.headers.authorization ?? "");

  const fault = options.faults.take(method, path, userId);
  if (fault) {
    switch (fault.kind) {
      case "rateLimit": {
        const seconds = (fault.retryAfterMs ?? 1000) / 1000;
        const headers: Record<string, string> = {
          "Retry-After": String(seconds),
          "X-RateLimit-Scope": fault.global ? "global" : "user",
        };
        if (fault.global) headers["X-RateLimit-Global"] = "true";
        else {
          // No X-RateLimit-Bucket: discord.js keeps this route's handler, so an immediate retry is
          // refused locally (as after a real bucket 429).
          headers["X-RateLimit-Limit"] = "5";
          headers["X-RateLimit-Remaining"] = "0";
          headers["X-RateLimit-Reset-After"] = String(seconds);
        }
        json(
          res,
          429,
          { message: "You are being rate limited.", retry_after: seconds, global: fault.global === true },
          headers,
        );
        return;
      }
      case "serverError":
        json(res, fault.status ?? 500, { message: "500: Internal Server Error", code: 0 });
        return;
      case "timeout":
        options.held.add(res);
        res.on("close", () => options.held.delete(res));
        return;
      case "reset":
        req.socket.destroy();
        return;
    }
  }

  const user = userId ? options.state.users.get(userId) : undefined;
  if (!user || !user.bot) {
    json(res, 401, { message: "401: Unauthorized", code: 0 });
    return;
  }
  const candidates = routes.filter((r) => r.pattern.test(path));
  const route = candidates.find((r) => r.method === method);
  if (!route) {
    if (candidates.length > 0) json(res, 405, { message: "405: Method Not Allowed", code: 0 });
    else json(res, 404, { message: "404: Not Found", code: 0 });
    return;
  }
  try {
    let body: Json = {};
    if (raw.length > 0) {
      const parsed: unknown = JSON.parse(raw);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new DiscordError(400, 50109, "The request body contains invalid JSON.");
      }
      body = parsed as Json;
    }
    const params = (route.pattern.exec(path) ?? []).slice(1);
    const result = route.handler({
      state: options.state,
      userId: user.id,
      params,
      body,
      query: url.searchParams,
      gatewayUrl: options.gatewayUrl(),
    });
    if (result.status === 204) {
      res.writeHead(204).end();
    } else {
      json(res, result.status, result.body);
    }
  } catch (error) {
    if (error instanceof DiscordError) {
      json(res, error.status, {
        message: error.message,
        code: error.code,
        ...(error.errors ? { errors: error.errors } : {}),
      });
    } else if (error instanceof SyntaxError) {
      json(res, 400, { message: "The request body contains invalid JSON.", code: 50109 });
    } else {
      json(res, 500, { message: "500: Internal Server Error", code: 0 });
    }
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
