import { InvalidInputError, requireObject, requireWholeNumber } from "../InvalidInputError.js";
import { SlidingWindowLog } from "./SlidingWindowLog.js";

export interface RateLimiterTimers {
  now: () => number;
  setTimeout: (fn: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
}

export interface RateLimiterOptions {
  /** Starts allowed per key within any window. */
  limit: number;
  windowMs: number;
  /** Defaults to the global clock and timers, so vitest fake timers drive it. */
  timers?: Partial<RateLimiterTimers>;
}

export class RateLimiterClosedError extends Error {
  override readonly name = "RateLimiterClosedError";
}

interface Queued {
  task: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * A sliding-window rate limit per key that queues instead of dropping: at most
 * `limit` tasks start per window, and a key's tasks start in the order they were scheduled. Keys are
 * independent. The limit governs starts; a slow task does not hold back the next one.
 */
export class RateLimiter {
  private readonly starts: SlidingWindowLog;
  private readonly queues = new Map<string, Queued[]>();
  private readonly timers = new Map<string, unknown>();
  private readonly clock: RateLimiterTimers;
  private closed = false;

  constructor(private readonly options: RateLimiterOptions) {
    requireObject("RateLimiter", "options", options);
    requireWholeNumber("RateLimiter", "limit", options.limit, 1);
    requireWholeNumber("RateLimiter", "windowMs", options.windowMs, 1);
    this.starts = new SlidingWindowLog(options.limit, options.windowMs);
    this.clock = {
      now: options.timers?.now ?? Date.now,
      setTimeout: options.timers?.setTimeout ?? ((fn, ms) => setTimeout(fn, ms)),
      clearTimeout: options.timers?.clearTimeout ?? ((h) => clearTimeout(h as NodeJS.Timeout)),
    };
  }

  /** Runs `task` as soon as `key` has room, after every task scheduled on `key` before it. */
  schedule<T>(key: string, task: () => T | Promise<T>): Promise<Awaited<T>> {
    // A promise-returning method reports bad arguments as a rejection, like every other failure of it.
    if (typeof key !== "string" || key === "") {
      return Promise.reject(new InvalidInputError("RateLimiter.schedule", "key", "a non-empty string", key));
    }
    if (typeof task !== "function") {
      return Promise.reject(new InvalidInputError("RateLimiter.schedule", "task", "a function", task));
    }
    if (this.closed) return Promise.reject(new RateLimiterClosedError("the rate limiter is closed"));
    return new Promise<Awaited<T>>((resolve, reject) => {
      const queue = this.queues.get(key) ?? [];
      queue.push({ task, resolve: resolve as (value: unknown) => void, reject });
      this.queues.set(key, queue);
      if (!this.timers.has(key)) this.drain(key);
    });
  }

  /** Tasks waiting for room on `key` (or on every key). */
  pending(key?: string): number {
    if (key !== undefined) return this.queues.get(key)?.length ?? 0;
    let total = 0;
    for (const queue of this.queues.values()) total += queue.length;
    return total;
  }

  /** Stops every timer and rejects the tasks still waiting; tasks already started are left alone. */
  close(): void {
    this.closed = true;
    for (const handle of this.timers.values()) this.clock.clearTimeout(handle);
    this.timers.clear();
    for (const queue of this.queues.values()) {
      for (const item of queue)
        item.reject(new RateLimiterClosedError("the rate limiter closed before the task ran"));
    }
    this.queues.clear();
  }

  /** Takes tasks again after close(): an owner that stopped may start again (a runtime's start() after stop()). */
  reopen(): void {
    this.closed = false;
  }

  private drain(key: string): void {
    this.timers.delete(key);
    const queue = this.queues.get(key);
    while (queue !== undefined && queue.length > 0) {
      const now = this.clock.now();
      const recent = this.starts.recent(key, now);
      if (recent.length >= this.options.limit) {
        const waitMs = (recent[recent.length - this.options.limit] as number) + this.options.windowMs - now;
        this.timers.set(
          key,
          this.clock.setTimeout(() => this.drain(key), Math.max(1, waitMs)),
        );
        return;
      }
      const item = queue.shift() as Queued;
      this.starts.record(key, now);
      Promise.resolve().then(item.task).then(item.resolve, item.reject);
    }
    this.queues.delete(key);
  }
}

/**
 * Discord's limits on thread creations per minute and messages per second, from
 * `discord.collaboration.rateLimit`.
 */
export function createDiscordRateLimiters(
  rateLimit: { threadCreationPerMinute: number; messagePerChannelPerSecond: number },
  timers?: Partial<RateLimiterTimers>,
): { threadCreation: RateLimiter; messages: RateLimiter } {
  requireObject("createDiscordRateLimiters", "rateLimit", rateLimit);
  return {
    threadCreation: new RateLimiter({
      limit: rateLimit.threadCreationPerMinute,
      windowMs: 60_000,
      ...(timers && { timers }),
    }),
    messages: new RateLimiter({
      limit: rateLimit.messagePerChannelPerSecond,
      windowMs: 1_000,
      ...(timers && { timers }),
    }),
  };
}
