// Answers the emulator's REST requests as Discord does: faults first, then auth, the route, the rate
// limits, the handler; Discord-shaped errors, with the rate-limit headers of the request's bucket.
import type { IncomingMessage, ServerResponse } from "node:http";
import { text as readText } from "node:stream/consumers";
import { DiscordError, invalidFormBody } from "./errors.js";
import type { FaultQueue } from "./faults.js";
import {
  type BucketState,
  bucketHeaders,
  type RateLimitBuckets,
  type RateLimited,
  rateLimitedAnswer,
} from "./rateLimits.js";
import { checkParams } from "./routeKit.js";
import { bucketRoute, findRoute } from "./restRoutes.js";
import type { EmulatorState, Json } from "./state.js";
import { userIdFromToken } from "./tokens.js";

export const API_PREFIX = "/api/v10";

/** One REST request the emulator answered, and its answer. */
export interface RestExchange {
  /** HTTP method, upper case. */
  method: string;
  /** The path after `/api/v10` (the whole path for a request outside it), without the query. */
  path: string;
  /** Query parameters (the last value of a repeated one). */
  query: Record<string, string>;
  status: number;
  /** The parsed JSON body the client sent; the raw text when it was not JSON; absent when empty. */
  requestBody?: unknown;
  /** The parsed JSON body of the answer; absent when it had none (204). */
  responseBody?: unknown;
}

export interface RestOptions {
  state: EmulatorState;
  faults: FaultQueue;
  buckets: RateLimitBuckets;
  gatewayUrl: () => string;
  /** Where each exchange is kept (`recordExchanges`), pushed before its answer is written. */
  recorded: RestExchange[] | null;
}

export async function handleRest(
  options: RestOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = (req.method ?? "GET").toUpperCase();
  const inApi = url.pathname.startsWith(`${API_PREFIX}/`);
  let path = inApi ? url.pathname.slice(API_PREFIX.length) : url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep the raw path; no route will match it
  }
  const raw = await readText(req);
  const now = options.state.now;
  let bucket: BucketState | null = null;
  const answer = (status: number, body?: unknown, headers: Record<string, string> = {}): void => {
    const text = body === undefined ? "" : JSON.stringify(body);
    options.recorded?.push({
      method,
      path,
      query: Object.fromEntries(url.searchParams),
      status,
      ...(raw === "" ? {} : { requestBody: parsed(raw) }),
      ...(text === "" ? {} : { responseBody: JSON.parse(text) as unknown }),
    });
    const type =
      text === "" ? {} : { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) };
    res.writeHead(status, { ...type, ...headers }).end(text);
  };
  const rateLimited = (limited: RateLimited): void => {
    const { body, headers } = rateLimitedAnswer(limited, now());
    answer(429, body, headers);
  };

  try {
    if (!inApi) throw new DiscordError(404, 0, "404: Not Found");
    const userId = userIdFromToken(req.headers.authorization ?? "");
    const found = findRoute(method, path);
    const fault = options.faults.take(method, path, userId);
    switch (fault?.kind) {
      case "rateLimit": {
        const retryAfterMs = fault.retryAfterMs ?? 1000;
        if (fault.global) return rateLimited({ scope: "global", retryAfterMs });
        // The bucket is empty until the retry, as after a real 429: a retry that comes early is refused too.
        const exhausted =
          userId !== null && typeof found === "object" && found !== null
            ? options.buckets.exhaust(userId, bucketRoute(found.route, found.params), retryAfterMs)
            : null;
        const state = exhausted ?? { bucket: "fault", limit: 1, count: 1, resetAt: now() + retryAfterMs };
        return rateLimited({ scope: "user", retryAfterMs, state });
      }
      case "serverError":
        throw new DiscordError(fault.status ?? 500, 0, "500: Internal Server Error");
      case "timeout": // left unanswered until close()
        return;
      case "reset":
        req.socket.destroy();
        return;
    }

    const user = userId ? options.state.users.get(userId) : undefined;
    if (!user || !user.bot) throw new DiscordError(401, 0, "401: Unauthorized");
    if (found === "method") throw new DiscordError(405, 0, "405: Method Not Allowed");
    if (found === null) throw new DiscordError(404, 0, "404: Not Found");
    const { route, params } = found;
    const taken = options.buckets.take(user.id, bucketRoute(route, params));
    if (taken.limited) return rateLimited(taken.limited);
    bucket = taken.state;
    const ctx = {
      state: options.state,
      userId: user.id,
      params,
      query: url.searchParams,
      gatewayUrl: options.gatewayUrl(),
      ...parseBody(raw, route.listBody === true),
    };
    checkParams(ctx);
    const result = route.handler(ctx);
    answer(result.status, result.body, bucket ? bucketHeaders(bucket, now()) : {});
  } catch (error) {
    const e = error instanceof DiscordError ? error : new DiscordError(500, 0, "500: Internal Server Error");
    const body = { message: e.message, code: e.discordCode, ...(e.errors ? { errors: e.errors } : {}) };
    answer(e.status, body, bucket ? bucketHeaders(bucket, now()) : {});
  }
}

/** The JSON body: an object, or a list on routes that take one (bulk overwrites). */
function parseBody(raw: string, listBody: boolean): { body: Json; list: unknown[] } {
  if (raw === "") return { body: {}, list: [] };
  const value = parsed(raw);
  const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
  // `value === raw`: not JSON at all.
  if (value === raw || (!listBody && !isObject)) {
    throw new DiscordError(400, 50109, "The request body contains invalid JSON.");
  }
  if (!listBody) return { body: value as Json, list: [] };
  if (Array.isArray(value)) return { body: {}, list: value };
  throw invalidFormBody([], "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType");
}

/** The JSON `text` holds, or `text` itself when it is not JSON. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
