import { A2AError } from "../../errors/A2AError.js";
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
  /** A key's next task waits for the one before to settle, so a `holdFor` it learned applies to the next. */
  oneAtATime?: boolean;
  /** Defaults to the global clock and timers, so vitest fake timers drive it. */
  timers?: Partial<RateLimiterTimers>;
}

/** A task scheduled on a closed rate limiter, or still queued when it closed: it never ran. */
export class RateLimiterClosedError extends A2AError {
  override readonly code = "RATE_LIMITER_CLOSED";
  override readonly name = "RateLimiterClosedError";
}

interface Queued {
  task: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * A sliding-window rate limit per key that queues instead of dropping: at most `limit` tasks start per
 * window, in the order they were scheduled. `holdFor` stops a key for a while, as when the far side says
 * its limit is reached.
 */
export class RateLimiter {
  private readonly starts: SlidingWindowLog;
  private readonly queues = new Map<string, Queued[]>();
  private readonly timers = new Map<string, unknown>();
  /** Until when (by the clock) a key starts nothing. */
  private readonly holds = new Map<string, number>();
  private readonly running = new Set<string>();
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

  /** Starts nothing more on `key` for `ms` from now (a longer hold stays); its tasks stay queued. */
  holdFor(key: string, ms: number): void {
    if (!(ms > 0) || !Number.isFinite(ms)) return;
    const now = this.clock.now();
    for (const [held, until] of this.holds) if (until <= now) this.holds.delete(held);
    const until = Math.max(this.holds.get(key) ?? 0, now + ms);
    // No timer to move: every drain of the key reads the hold, and one that wakes early waits again.
    this.holds.set(key, until);
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
    this.holds.clear();
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
      if (this.options.oneAtATime && this.running.has(key)) return; // started again when it settles
      const now = this.clock.now();
      const recent = this.starts.recent(key, now);
      const heldUntil = this.holds.get(key) ?? 0;
      const roomAt =
        recent.length >= this.options.limit
          ? (recent[recent.length - this.options.limit] as number) + this.options.windowMs
          : now;
      const startAt = Math.max(roomAt, heldUntil);
      if (startAt > now) {
        this.timers.set(
          key,
          this.clock.setTimeout(() => this.drain(key), Math.max(1, startAt - now)),
        );
        return;
      }
      const item = queue.shift() as Queued;
      this.starts.record(key, now);
      this.start(key, item);
    }
    this.queues.delete(key);
  }

  private start(key: string, item: Queued): void {
    const run = Promise.resolve().then(item.task);
    run.then(item.resolve, item.reject);
    if (!this.options.oneAtATime) return;
    this.running.add(key);
    const settled = (): void => {
      this.running.delete(key);
      if (this.queues.has(key) && !this.timers.has(key)) this.drain(key);
    };
    run.then(settled, settled);
  }
}

/**
 * Discord's limits from `discord.collaboration.rateLimit`, one request at a time per key as discord.js
 * sends them, so what an answer says of its bucket holds for the next.
 */
export function createDiscordRateLimiters(
  rateLimit: { threadCreationPerMinute: number; messagePerChannelPerSecond: number },
  timers?: Partial<RateLimiterTimers>,
): { threadCreation: RateLimiter; messages: RateLimiter } {
  requireObject("createDiscordRateLimiters", "rateLimit", rateLimit);
  const limiter = (limit: number, windowMs: number) =>
    new RateLimiter({ limit, windowMs, oneAtATime: true, ...(timers && { timers }) });
  return {
    threadCreation: limiter(rateLimit.threadCreationPerMinute, 60_000),
    messages: limiter(rateLimit.messagePerChannelPerSecond, 1_000),
  };
}
