// Answers the emulator's REST requests as Discord does: faults first, then auth, the route, the rate
// limits, the handler; Discord-shaped errors, and the rate-limit headers of the request's bucket.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FaultQueue } from "./faults.js";
import {
  type BucketState,
  bucketHeaders,
  type RateLimitBuckets,
  type RateLimited,
  rateLimitedAnswer,
} from "./rateLimits.js";
import { bucketRoute, findRoute } from "./restRoutes.js";
import { DiscordError } from "./errors.js";
import type { EmulatorState, Json } from "./state.js";
import { userIdFromToken } from "./tokens.js";

export const API_PREFIX = "/api/v10";

export interface RestOptions {
  state: EmulatorState;
  faults: FaultQueue;
  buckets: RateLimitBuckets;
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
  const found = findRoute(method, path);
  const now = options.state.now;

  const fault = options.faults.take(method, path, userId);
  if (fault) {
    switch (fault.kind) {
      case "rateLimit": {
        const retryAfterMs = fault.retryAfterMs ?? 1000;
        let limited: RateLimited = { scope: "global", retryAfterMs };
        if (!fault.global) {
          // The bucket is empty until the retry, as after a real 429: a retry that comes early is refused too.
          const exhausted =
            userId !== null && typeof found === "object" && found !== null
              ? options.buckets.exhaust(userId, bucketRoute(found.route, found.params), retryAfterMs)
              : null;
          const state = exhausted ?? {
            bucket: "fault",
            limit: 1,
            remaining: 0,
            resetAt: now() + retryAfterMs,
          };
          limited = { scope: "user", retryAfterMs, state };
        }
        const answer = rateLimitedAnswer(limited, now());
        json(res, 429, answer.body, answer.headers);
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
  if (found === null || found === "method") {
    if (found === "method") json(res, 405, { message: "405: Method Not Allowed", code: 0 });
    else json(res, 404, { message: "404: Not Found", code: 0 });
    return;
  }
  const { route, params } = found;
  const taken = options.buckets.take(user.id, bucketRoute(route, params));
  if (taken.limited) {
    const answer = rateLimitedAnswer(taken.limited, now());
    json(res, 429, answer.body, answer.headers);
    return;
  }
  const headers = (state: BucketState | null): Record<string, string> =>
    state ? bucketHeaders(state, now()) : {};
  try {
    let body: Json = {};
    let list: unknown[] = [];
    if (raw.length > 0) {
      const parsed: unknown = JSON.parse(raw);
      if (route.listBody === true && Array.isArray(parsed)) list = parsed;
      else if (route.listBody === true) {
        throw new DiscordError(400, 50035, "Invalid Form Body", {
          _errors: [{ code: "LIST_TYPE_CONVERT", message: "Only iterables may be used in a ListType" }],
        });
      } else if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new DiscordError(400, 50109, "The request body contains invalid JSON.");
      } else body = parsed as Json;
    }
    const result = route.handler({
      state: options.state,
      userId: user.id,
      params,
      body,
      list,
      query: url.searchParams,
      gatewayUrl: options.gatewayUrl(),
    });
    if (result.status === 204) {
      res.writeHead(204, headers(taken.state)).end();
    } else {
      json(res, result.status, result.body, headers(taken.state));
    }
  } catch (error) {
    if (error instanceof DiscordError) {
      json(
        res,
        error.status,
        {
          message: error.message,
          code: error.discordCode,
          ...(error.errors ? { errors: error.errors } : {}),
        },
        headers(taken.state),
      );
    } else if (error instanceof SyntaxError) {
      json(
        res,
        400,
        { message: "The request body contains invalid JSON.", code: 50109 },
        headers(taken.state),
      );
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

/** Answers `body` as JSON with its length; the emulator's and the fake model's servers both answer so. */
export function json(
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
