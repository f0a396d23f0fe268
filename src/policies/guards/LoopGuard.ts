import { requireNonEmptyText, requireObject, requireWholeNumber } from "../InvalidInputError.js";
import { SlidingWindowLog } from "./SlidingWindowLog.js";

export interface LoopGuardOptions {
  maxCollaboratePerPair: number;
  windowMs: number;
  maxMessagesPerThread: number;
  threadWindowMs: number;
  now?: () => number;
}

export type LoopGuardDecision =
  | { allowed: true; count: number; limit: number; warning?: string }
  | { allowed: false; reason: "loop_guard"; count: number; limit: number; retryAfterMs: number };

/**
 * Stops runaway agent ping-pong: per sliding window, at most `maxCollaboratePerPair` collaborations
 * between two agents (either way; the last allowed one warns) and `maxMessagesPerThread` agent messages
 * per thread. Rejected calls and system messages (reminders, escalations) are not counted.
 */
export class LoopGuard {
  private readonly pairs: SlidingWindowLog;
  private readonly threads: SlidingWindowLog;
  private readonly now: () => number;

  constructor(private readonly options: LoopGuardOptions) {
    requireObject("LoopGuard", "options", options);
    for (const name of [
      "maxCollaboratePerPair",
      "windowMs",
      "maxMessagesPerThread",
      "threadWindowMs",
    ] as const) {
      requireWholeNumber("LoopGuard", `options.${name}`, options[name], 1);
    }
    this.pairs = new SlidingWindowLog(options.maxCollaboratePerPair, options.windowMs);
    this.threads = new SlidingWindowLog(options.maxMessagesPerThread, options.threadWindowMs);
    this.now = options.now ?? Date.now;
  }

  /** Checks and, when allowed, counts one collaboration call between two agents. */
  checkCollaboration(fromAgentId: string, toAgentId: string): LoopGuardDecision {
    const from = requireNonEmptyText("LoopGuard.checkCollaboration", "fromAgentId", fromAgentId);
    const to = requireNonEmptyText("LoopGuard.checkCollaboration", "toAgentId", toAgentId);
    const key = [from, to].sort().join("\u0000");
    const limit = this.options.maxCollaboratePerPair;
    const decision = this.check(this.pairs, key, limit, this.options.windowMs);
    if (decision.allowed && decision.count === limit) {
      return {
        ...decision,
        warning: `${from} ↔ ${to}: ${limit} collaborations within ${this.options.windowMs / 1000}s; the next one is blocked`,
      };
    }
    return decision;
  }

  /** Checks and, when allowed, counts one message in a thread; system messages pass uncounted. */
  checkThreadMessage(threadId: string, opts: { system?: boolean } = {}): LoopGuardDecision {
    const key = requireNonEmptyText("LoopGuard.checkThreadMessage", "threadId", threadId);
    const limit = this.options.maxMessagesPerThread;
    if (opts?.system === true)
      return { allowed: true, count: this.threads.recent(key, this.now()).length, limit };
    return this.check(this.threads, key, limit, this.options.threadWindowMs);
  }

  private check(log: SlidingWindowLog, key: string, limit: number, windowMs: number): LoopGuardDecision {
    const now = this.now();
    const recent = log.recent(key, now);
    if (recent.length >= limit) {
      const oldest = recent[recent.length - limit] as number;
      return {
        allowed: false,
        reason: "loop_guard",
        count: recent.length,
        limit,
        retryAfterMs: oldest + windowMs - now,
      };
    }
    log.record(key, now);
    return { allowed: true, count: recent.length + 1, limit };
  }
}

/** What an agent is handling right now: a message from `senderAgentId` in collaboration thread `threadId`. */
export interface HandlingContext {
  senderAgentId: string;
  threadId: string;
}

/** An agent answering B's message in a collaboration thread answers there, not in a new collaboration. */
export function isReplyInThread(p: { targetAgentId: string; handling?: HandlingContext }): boolean {
  const handling = p?.handling;
  return (
    handling != null && typeof p.targetAgentId === "string" && handling.senderAgentId === p.targetAgentId
  );
}
