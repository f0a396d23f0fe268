// What the emulator's REST route tables are made of: a route's spec and context, and the helpers its
// handlers share.
import { DiscordError, invalidFormBody } from "./errors.js";
import type { BucketRoute } from "./rateLimits.js";
import type { EmulatorState, Json } from "./state.js";

export interface RouteContext {
  state: EmulatorState;
  userId: string;
  /** The path's ids by name (`channel_id`, …); checkParams has checked the guild and application ids. */
  params: Record<string, string>;
  /** The JSON object sent ({} when none, or when the route takes a list). */
  body: Json;
  /** The JSON list sent, on routes that take one (`listBody`). */
  list: unknown[];
  query: URLSearchParams;
  gatewayUrl: string;
}

export type Handler = (ctx: RouteContext) => { status: number; body?: unknown };

/** How a route is served: its handler, and what sets it apart from the usual. */
export interface RouteSpec {
  /** The rate-limit group, when not `other`. */
  group?: Exclude<BucketRoute["group"], "other">;
  /** The body is a JSON list (bulk overwrites), not an object. */
  listBody?: boolean;
  handler: Handler;
}

export interface Route extends RouteSpec {
  method: string;
  /** Discord's path template, e.g. "/channels/{channel_id}/messages". */
  path: string;
  pattern: RegExp;
  /** The names of the path's ids, in order. */
  names: string[];
}

/** The route `key` ("METHOD /path/{id}") names: ids of 1–20 digits, a user id "@me" too, an emoji any segment. */
export function compile(key: string, spec: RouteSpec): Route {
  const [method = "", path = ""] = key.split(" ");
  const source = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === "user_id") return "(@me|\\d{1,20})";
    return name === "emoji_name" ? "([^/]+)" : "(\\d{1,20})";
  });
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "");
  return { ...spec, method, path, pattern: new RegExp(`^${source}$`), names };
}

export const ok = (body: unknown): { status: number; body: unknown } => ({ status: 200, body });
export const noContent = (): { status: number } => ({ status: 204 });

export function str(body: Json, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  throw invalidFormBody(key, "STRING_TYPE_CONVERT", "Could not interpret the value as a string.");
}

export function param(ctx: RouteContext, name: string): string {
  return ctx.params[name] ?? "";
}

/** The path's user id, `@me` read as the caller. */
export function userParam(ctx: RouteContext): string {
  const value = param(ctx, "user_id");
  return value === "@me" ? ctx.userId : value;
}

/** Discord's answers to a path naming another guild (404 / 10004) or another bot's application (403 / 50001). */
export function checkParams(ctx: RouteContext): void {
  const { application_id: application, guild_id: guild } = ctx.params;
  if (application !== undefined && application !== ctx.userId)
    throw new DiscordError(403, 50001, "Missing Access");
  if (guild !== undefined && guild !== ctx.state.guildId) throw new DiscordError(404, 10004, "Unknown Guild");
}
