// Discord's rate limits: a global limit per bot, and buckets, each a fixed window opened by its first
// request, per bot, route group and major parameter (the channel or guild in the path). Discord does not
// publish the per-route numbers; the defaults are the ones bots observe.

/** At most `limit` requests per `windowMs`. */
export interface BucketLimit {
  limit: number;
  windowMs: number;
}

/** The limits the emulator enforces, each changed or turned off (`false`); omitted ones keep their default. */
export interface EmulatorRateLimits {
  /** All requests of one bot (default 50 per second). */
  global?: BucketLimit | false;
  /** Messages posted by one bot in one channel or thread (default 5 per 5 s). */
  messages?: BucketLimit | false;
  /** Threads opened by one bot in one channel, with or without a starter (default 5 per minute). */
  threads?: BucketLimit | false;
  /** Application commands created (POST) by one bot, per guild for guild commands (default 5 per 20 s). */
  commands?: BucketLimit | false;
  /** Reactions added or removed by one bot in one channel, one bucket for both (default 1 per 250 ms). */
  reactions?: BucketLimit | false;
  /** Every other route, per route and major parameter (default 50 per second). */
  other?: BucketLimit | false;
}

const DEFAULT_RATE_LIMITS: Required<EmulatorRateLimits> = {
  global: { limit: 50, windowMs: 1_000 },
  messages: { limit: 5, windowMs: 5_000 },
  threads: { limit: 5, windowMs: 60_000 },
  commands: { limit: 5, windowMs: 20_000 },
  reactions: { limit: 1, windowMs: 250 },
  other: { limit: 50, windowMs: 1_000 },
};

/** Which bucket a request counts against: its group's limit, Discord's opaque bucket id, the key. */
export interface BucketRoute {
  group: Exclude<keyof EmulatorRateLimits, "global">;
  /** The route's shape without ids, e.g. "POST /channels/:id/messages" (bucket id of `other`). */
  route: string;
  /** The channel or guild id the route names, or "" when it names none. */
  majorParameter: string;
}

/** A bucket's current window: what the headers of an answer counted against it say. */
export interface BucketState {
  bucket: string;
  limit: number;
  count: number;
  /** Epoch ms at which the bucket is full again. */
  resetAt: number;
}

/** A request refused by a limit: what its 429 says. */
export type RateLimited =
  { scope: "global"; retryAfterMs: number } | { scope: "user"; retryAfterMs: number; state: BucketState };

function checkLimit(name: string, value: BucketLimit | false | undefined): void {
  if (value === undefined || value === false) return;
  const ok = (n: unknown): boolean => typeof n === "number" && Number.isInteger(n) && n >= 1;
  if (typeof value !== "object" || value === null || !ok(value.limit) || !ok(value.windowMs)) {
    throw new TypeError(
      `rateLimits.${name} must be false or { limit, windowMs } with whole numbers ≥ 1: ${JSON.stringify(value)}`,
    );
  }
}

/** Counts requests per bucket and says when one is over its limit. Time comes from `now`. */
export class RateLimitBuckets {
  private readonly limits: Required<EmulatorRateLimits>;
  private readonly windows = new Map<string, BucketState>();

  constructor(
    options: EmulatorRateLimits | false | undefined,
    private readonly now: () => number,
  ) {
    if (options !== undefined && options !== false && (typeof options !== "object" || options === null)) {
      throw new TypeError(`rateLimits must be false or an object: ${JSON.stringify(options)}`);
    }
    const given =
      options === false
        ? Object.fromEntries(Object.keys(DEFAULT_RATE_LIMITS).map((k) => [k, false]))
        : options;
    this.limits = { ...DEFAULT_RATE_LIMITS, ...given } as Required<EmulatorRateLimits>;
    for (const [name, value] of Object.entries(this.limits)) checkLimit(name, value as BucketLimit | false);
  }

  /** Counts one request, or refuses it (the global limit first) uncounted; with its bucket's state. */
  take(userId: string, route: BucketRoute): { limited: RateLimited | null; state: BucketState | null } {
    const now = this.now();
    const global = this.window(userId, "global");
    if (global && global.count >= global.limit) {
      return { limited: { scope: "global", retryAfterMs: global.resetAt - now }, state: null };
    }
    const window = this.window(userId, route.group, route);
    if (window && window.count >= window.limit) {
      return { limited: { scope: "user", retryAfterMs: window.resetAt - now, state: window }, state: window };
    }
    if (global) global.count += 1;
    if (window) window.count += 1;
    return { limited: null, state: window };
  }

  /** Empties `userId`'s bucket for `route` until `retryAfterMs` from now (an injected 429). */
  exhaust(userId: string, route: BucketRoute, retryAfterMs: number): BucketState | null {
    const window = this.window(userId, route.group, route);
    if (!window) return null;
    window.count = window.limit;
    window.resetAt = this.now() + retryAfterMs;
    return window;
  }

  /** A bucket's current window, null when its limit is off; its id names the group (`other`: the route). */
  private window(userId: string, group: keyof EmulatorRateLimits, route?: BucketRoute): BucketState | null {
    const limit = this.limits[group];
    if (!limit) return null;
    const now = this.now();
    const bucket = route?.group === "other" ? route.route : group;
    const key = `${userId}:${bucket}:${route?.majorParameter ?? ""}`;
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      window = { bucket, limit: limit.limit, count: 0, resetAt: now + limit.windowMs };
      this.windows.set(key, window);
    }
    return window;
  }
}

/** Discord's rate-limit headers for an answer that counted against `state` at `now`. */
export function bucketHeaders(state: BucketState, now: number): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(state.limit),
    "X-RateLimit-Remaining": String(state.limit - state.count),
    "X-RateLimit-Reset": (state.resetAt / 1000).toFixed(3),
    "X-RateLimit-Reset-After": seconds(state.resetAt - now),
    "X-RateLimit-Bucket": state.bucket,
  };
}

/** Milliseconds as Discord's fractional seconds, rounded up so a client never comes back early. */
export function seconds(ms: number): string {
  return (Math.ceil(Math.max(0, ms)) / 1000).toFixed(3);
}

/** A 429 as Discord sends it: `Retry-After` in whole seconds on the header, the precise value in the body. */
export function rateLimitedAnswer(
  limited: RateLimited,
  now: number,
): { headers: Record<string, string>; body: { message: string; retry_after: number; global: boolean } } {
  const retryAfter = Number(seconds(limited.retryAfterMs));
  const headers: Record<string, string> = {
    "Retry-After": String(Math.max(1, Math.ceil(retryAfter))),
    "X-RateLimit-Scope": limited.scope,
  };
  if (limited.scope === "global") headers["X-RateLimit-Global"] = "true";
  else Object.assign(headers, bucketHeaders(limited.state, now));
  return {
    headers,
    body: {
      message: "You are being rate limited.",
      retry_after: retryAfter,
      global: limited.scope === "global",
    },
  };
}
