// What the emulator's REST route tables are made of: a route's spec and context, and the helpers its
// handlers share.
import { DiscordError, invalidFormBody } from "./errors.js";
import type { BucketRoute } from "./rateLimits.js";
import type { EmulatorState, Json } from "./state.js";

export interface RouteContext {
  state: EmulatorState;
  userId: string;
  params: string[];
  /** The JSON object sent ({} when none, or when the route takes a list). */
  body: Json;
  /** The JSON list sent, on routes that take one (`listBody`). */
  list: unknown[];
  query: URLSearchParams;
  gatewayUrl: string;
}

export type Handler = (ctx: RouteContext) => { status: number; body?: unknown };

export interface RouteSpec {
  method: string;
  /** Discord's path template, e.g. "/channels/{channel_id}/messages". */
  path: string;
  /** The rate-limit group, when not `other`. */
  group?: Exclude<BucketRoute["group"], "other">;
  /** The body is a JSON list (bulk overwrites), not an object. */
  listBody?: boolean;
  handler: Handler;
}

export interface Route extends RouteSpec {
  pattern: RegExp;
}

/** Ids are 1–20 digits; a user id may also be "@me"; an emoji is any segment (the path arrives decoded). */
export function compile(spec: RouteSpec): Route {
  const source = spec.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === "user_id") return "(@me|\\d{1,20})";
    return name === "emoji_name" ? "([^/]+)" : "(\\d{1,20})";
  });
  return { ...spec, pattern: new RegExp(`^${source}$`) };
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

export function param(ctx: RouteContext, index: number): string {
  return ctx.params[index] ?? "";
}

export function userParam(ctx: RouteContext, index: number): string {
  const value = param(ctx, index);
  return value === "@me" ? ctx.userId : value;
}

/** Throws Discord's 404 / 10004 unless `id` is the emulated guild. */
export function guild(ctx: RouteContext, id: string): void {
  if (id !== ctx.state.guildId) throw new DiscordError(404, 10004, "Unknown Guild");
}
