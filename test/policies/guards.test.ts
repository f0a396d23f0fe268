// Guards: loop guard, rate limits and idempotency.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createDiscordRateLimiters,
  IDEMPOTENCY_TTL_MS,
  IdempotencyCache,
  isReplyInThread,
  LoopGuard,
  type LoopGuardDecision,
  RateLimiter,
  RateLimiterClosedError,
} from "../../src/policies/index.js";
import { InvalidInputError } from "../../src/index.js";
import {
  callLoosely,
  construct,
  expectAnswerOrInvalidInput,
  expectSettlesOrInvalidInput,
  junkCases,
  ONE_MB,
} from "../support/badInput.js";

const expectDefinedOrInvalidInput = (run: () => unknown, param: string): unknown =>
  expectAnswerOrInvalidInput(run, [param]);
import { SlidingWindowLog } from "../../src/policies/guards/SlidingWindowLog.js";

const HUGE = ONE_MB;
const JUNK_CASES = junkCases().filter(([, value]) => typeof value !== "string");
const JUNK: unknown[] = JUNK_CASES.map(([, value]) => value);
const MISSING_CASES: Array<[string, unknown]> = [
  ["undefined", undefined],
  ["null", null],
];

function warningOf(decision: LoopGuardDecision): string | undefined {
  return decision.allowed ? decision.warning : undefined;
}

// ---------------------------------------------------------------------------------------------
// LoopGuard (≤ 10 collaborations per agent pair in 5 minutes, ≤ 6 agent messages per thread in 60 s)
// ---------------------------------------------------------------------------------------------
describe("LoopGuard", () => {
  const MIN = 60_000;
  let now = 0;
  const guard = (overrides: Partial<ConstructorParameters<typeof LoopGuard>[0]> = {}) =>
    new LoopGuard({
      maxCollaboratePerPair: 10,
      windowMs: 5 * MIN,
      maxMessagesPerThread: 6,
      threadWindowMs: MIN,
      now: () => now,
      ...overrides,
    });

  beforeEach(() => {
    now = 1_772_000_000_000;
  });

  describe("collaborations per pair", () => {
    it("allows 10 per pair in 5 minutes; only the 10th carries a warning; the 11th is rejected", () => {
      const g = guard();
      const decisions = Array.from({ length: 10 }, () => {
        now += 1_000;
        return g.checkCollaboration("ruda", "eden");
      });
      expect(decisions.every((d) => d.allowed)).toBe(true);
      expect(decisions.slice(0, 9).map(warningOf)).toEqual(Array(9).fill(undefined));
      const warning = warningOf(decisions[9] as LoopGuardDecision);
      expect(typeof warning).toBe("string");
      expect(warning).not.toBe("");
      now += 1_000;
      expect(g.checkCollaboration("ruda", "eden")).toMatchObject({ allowed: false, reason: "loop_guard" });
    });

    it("counts both directions for the same pair", () => {
      const g = guard();
      for (let i = 0; i < 5; i++) expect(g.checkCollaboration("ruda", "eden").allowed).toBe(true);
      for (let i = 0; i < 4; i++) expect(g.checkCollaboration("eden", "ruda").allowed).toBe(true);
      expect(warningOf(g.checkCollaboration("eden", "ruda"))).toEqual(expect.any(String));
      expect(g.checkCollaboration("eden", "ruda")).toMatchObject({ allowed: false, reason: "loop_guard" });
      expect(g.checkCollaboration("ruda", "eden")).toMatchObject({ allowed: false, reason: "loop_guard" });
    });

    it("keeps other pairs independent", () => {
      const g = guard();
      for (let i = 0; i < 10; i++) g.checkCollaboration("ruda", "eden");
      expect(g.checkCollaboration("ruda", "eden").allowed).toBe(false);
      expect(g.checkCollaboration("ruda", "seum")).toMatchObject({ allowed: true });
      expect(g.checkCollaboration("seum", "eden")).toMatchObject({ allowed: true });
    });

    it("does not count rejected calls, and slides: a slot frees when the oldest call leaves the window", () => {
      const g = guard();
      const start = now;
      expect(g.checkCollaboration("ruda", "eden").allowed).toBe(true); // t = 0
      now = start + 100_000;
      for (let i = 0; i < 9; i++) expect(g.checkCollaboration("ruda", "eden").allowed).toBe(true);
      now = start + 200_000;
      for (let i = 0; i < 3; i++) {
        expect(g.checkCollaboration("ruda", "eden")).toMatchObject({ allowed: false, reason: "loop_guard" });
      }
      now = start + 299_999; // the call at t = 0 is still inside the 5-minute window
      expect(g.checkCollaboration("ruda", "eden").allowed).toBe(false);
      now = start + 300_001; // it has left: one slot, and it is again the 10th in the window
      const freed = g.checkCollaboration("ruda", "eden");
      expect(freed.allowed).toBe(true);
      expect(warningOf(freed)).toEqual(expect.any(String));
      expect(g.checkCollaboration("ruda", "eden").allowed).toBe(false);
      now = start + 400_001; // the nine calls of t = 100 000 have left
      for (let i = 0; i < 9; i++) expect(g.checkCollaboration("ruda", "eden").allowed).toBe(true);
      expect(g.checkCollaboration("ruda", "eden").allowed).toBe(false);
    });

    it("warns on the 10th call within the window even when older calls have already left it", () => {
      const g = guard();
      const start = now;
      g.checkCollaboration("ruda", "eden"); // t = 0
      now = start + 1_000;
      for (let i = 0; i < 9; i++) g.checkCollaboration("ruda", "eden"); // 2nd..10th
      now = start + 300_500; // the call at t = 0 has left; nine remain, so the next is the 10th again
      const tenth = g.checkCollaboration("ruda", "eden");
      expect(tenth.allowed).toBe(true);
      expect(warningOf(tenth)).toEqual(expect.any(String));
    });

    it("uses a sliding window, not fixed 5-minute buckets", () => {
      const g = guard();
      const start = now;
      now = start + 290_000;
      for (let i = 0; i < 10; i++) g.checkCollaboration("ruda", "eden");
      now = start + 310_000; // a fixed bucket would have reset at 300 000
      expect(g.checkCollaboration("ruda", "eden")).toMatchObject({ allowed: false, reason: "loop_guard" });
      now = start + 590_001;
      expect(g.checkCollaboration("ruda", "eden").allowed).toBe(true);
    });

    it("honours a configured limit: the last allowed one warns, the next is rejected", () => {
      const g = guard({ maxCollaboratePerPair: 3, windowMs: 1_000 });
      expect(warningOf(g.checkCollaboration("a", "b"))).toBeUndefined();
      expect(warningOf(g.checkCollaboration("b", "a"))).toBeUndefined();
      expect(warningOf(g.checkCollaboration("a", "b"))).toEqual(expect.any(String));
      expect(g.checkCollaboration("a", "b")).toMatchObject({ allowed: false, reason: "loop_guard" });
      now += 1_001;
      expect(g.checkCollaboration("a", "b").allowed).toBe(true);
    });

    it("answers or throws InvalidInputError naming the agent id for bad ids", () => {
      const g = guard();
      for (const bad of [undefined, "", ...JUNK]) {
        expectDefinedOrInvalidInput(
          () => callLoosely(g.checkCollaboration.bind(g), bad, "eden"),
          "fromAgentId",
        );
        expectDefinedOrInvalidInput(
          () => callLoosely(g.checkCollaboration.bind(g), "ruda", bad),
          "toAgentId",
        );
      }
      expect(g.checkCollaboration(HUGE, `${HUGE}b`).allowed).toBe(true);
    });
  });

  describe("messages per thread", () => {
    it("accepts 6 agent messages in 60 s and rejects the 7th with loop_guard", () => {
      const g = guard();
      for (let i = 0; i < 6; i++) {
        now += 1_000;
        expect(g.checkThreadMessage("thread-1").allowed).toBe(true);
      }
      now += 1_000;
      expect(g.checkThreadMessage("thread-1")).toMatchObject({ allowed: false, reason: "loop_guard" });
    });

    it("lets system messages (reminders, escalations) through without counting them", () => {
      const g = guard();
      for (let i = 0; i < 5; i++) g.checkThreadMessage("thread-1");
      for (let i = 0; i < 3; i++)
        expect(g.checkThreadMessage("thread-1", { system: true }).allowed).toBe(true);
      expect(g.checkThreadMessage("thread-1").allowed).toBe(true); // the 6th agent message
      expect(g.checkThreadMessage("thread-1").allowed).toBe(false);
      expect(g.checkThreadMessage("thread-1", { system: true }).allowed).toBe(true); // even over the limit
      expect(g.checkThreadMessage("thread-1", { system: false }).allowed).toBe(false);
    });

    it("keeps threads independent and separate from the pair limit", () => {
      const g = guard();
      for (let i = 0; i < 6; i++) g.checkThreadMessage("thread-1");
      expect(g.checkThreadMessage("thread-1").allowed).toBe(false);
      expect(g.checkThreadMessage("thread-2").allowed).toBe(true);
      expect(g.checkCollaboration("ruda", "eden").allowed).toBe(true);
    });

    it("slides: does not count rejected messages and frees a slot when the oldest leaves 60 s", () => {
      const g = guard();
      const start = now;
      g.checkThreadMessage("t"); // t = 0
      now = start + 30_000;
      for (let i = 0; i < 5; i++) g.checkThreadMessage("t");
      now = start + 40_000;
      expect(g.checkThreadMessage("t").allowed).toBe(false);
      expect(g.checkThreadMessage("t").allowed).toBe(false);
      now = start + 59_999;
      expect(g.checkThreadMessage("t").allowed).toBe(false);
      now = start + 60_001;
      expect(g.checkThreadMessage("t").allowed).toBe(true);
      expect(g.checkThreadMessage("t").allowed).toBe(false);
      now = start + 90_001;
      for (let i = 0; i < 5; i++) expect(g.checkThreadMessage("t").allowed).toBe(true);
      expect(g.checkThreadMessage("t").allowed).toBe(false);
    });

    it("answers or throws InvalidInputError naming threadId for bad thread ids", () => {
      const g = guard();
      for (const bad of [undefined, "", ...JUNK]) {
        expectDefinedOrInvalidInput(() => callLoosely(g.checkThreadMessage.bind(g), bad), "threadId");
      }
      expect(g.checkThreadMessage(HUGE).allowed).toBe(true);
    });

    it.each<readonly [string, unknown]>([['""', ""], ...JUNK_CASES])(
      "answers or throws InvalidInputError for opts = %s",
      (_label, opts) => {
        const g = guard();
        const decision = expectDefinedOrInvalidInput(
          () => callLoosely(g.checkThreadMessage.bind(g), "thread-9", opts),
          "opts",
        );
        if (decision !== undefined) expect((decision as LoopGuardDecision).allowed).toBe(true);
      },
    );
  });

  it.each(MISSING_CASES)(
    "answers or throws InvalidInputError when constructed with options = %s",
    (_l, options) => {
      expectDefinedOrInvalidInput(() => construct(LoopGuard, options), "options");
    },
  );
});

describe("isReplyInThread", () => {
  it("is true when the agent handles a message from the target in a collaboration thread", () => {
    expect(
      isReplyInThread({ targetAgentId: "ruda", handling: { senderAgentId: "ruda", threadId: "t-1" } }),
    ).toBe(true);
  });

  it("is false for a different target or when not handling a thread message", () => {
    expect(
      isReplyInThread({ targetAgentId: "seum", handling: { senderAgentId: "ruda", threadId: "t-1" } }),
    ).toBe(false);
    expect(isReplyInThread({ targetAgentId: "ruda" })).toBe(false);
    expect(isReplyInThread({ targetAgentId: "ruda", handling: undefined })).toBe(false);
  });

  const BAD: ReadonlyArray<readonly [string, unknown]> = [['""', ""], ["a 1 MB string", HUGE], ...JUNK_CASES];

  it.each(BAD)("answers or throws InvalidInputError for p = %s", (_label, p) => {
    expectDefinedOrInvalidInput(() => callLoosely(isReplyInThread, p), "p");
  });

  it.each(BAD)("answers or throws InvalidInputError for handling = %s", (_label, handling) => {
    const answer = expectDefinedOrInvalidInput(
      () => callLoosely(isReplyInThread, { targetAgentId: "ruda", handling }),
      "handling",
    );
    if (answer !== undefined) expect(answer).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// RateLimiter (queue, never drop) on vitest fake timers
// ---------------------------------------------------------------------------------------------
describe("RateLimiter", () => {
  const T0 = 1_772_000_000_000;

  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Schedules `count` tasks on `key`, each recording its start (index and fake time). */
  function scheduleMany(
    limiter: RateLimiter,
    key: string,
    count: number,
    log: Array<[string, number, number]>,
  ) {
    return Array.from({ length: count }, (_, i) =>
      limiter.schedule(key, () => {
        log.push([key, i, Date.now()]);
        return `${key}-${i}`;
      }),
    );
  }

  it("starts 5 at once and holds the 6th until the window frees a slot", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000 });
    const log: Array<[string, number, number]> = [];
    const results = scheduleMany(limiter, "c1", 6, log);
    await vi.advanceTimersByTimeAsync(0);
    expect(log.map(([, i]) => i)).toEqual([0, 1, 2, 3, 4]);
    expect(log.every(([, , at]) => at === T0)).toBe(true);
    expect(limiter.pending("c1")).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(log).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(2);
    expect(log).toHaveLength(6);
    const sixth = log[5]?.[2] ?? Number.NaN;
    expect(sixth).toBeGreaterThanOrEqual(T0 + 1_000);
    expect(sixth).toBeLessThanOrEqual(T0 + 1_001);
    expect(limiter.pending("c1")).toBe(0);
    await expect(Promise.all(results)).resolves.toEqual(["c1-0", "c1-1", "c1-2", "c1-3", "c1-4", "c1-5"]);
  });

  it("never drops queued tasks and starts them in submission order", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000 });
    const log: Array<[string, number, number]> = [];
    const results = scheduleMany(limiter, "c1", 23, log);
    await vi.advanceTimersByTimeAsync(0);
    expect(limiter.pending("c1")).toBe(18);
    expect(limiter.pending()).toBe(18);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(log.map(([, i]) => i)).toEqual(Array.from({ length: 23 }, (_, i) => i));
    // No window of 1 s holds more than 5 starts.
    for (let i = 5; i < log.length; i++) {
      expect((log[i]?.[2] ?? 0) - (log[i - 5]?.[2] ?? 0)).toBeGreaterThanOrEqual(1_000);
    }
    expect(await Promise.all(results)).toHaveLength(23);
    expect(limiter.pending()).toBe(0);
  });

  it("queues a task scheduled later behind the ones already waiting", async () => {
    const limiter = new RateLimiter({ limit: 2, windowMs: 1_000 });
    const order: string[] = [];
    const first = ["a", "b", "c", "d"].map((n) => limiter.schedule("k", () => order.push(n)));
    await vi.advanceTimersByTimeAsync(500);
    const late = limiter.schedule("k", () => order.push("e"));
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all([...first, late]);
    expect(order).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("keeps keys independent", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000 });
    const log: Array<[string, number, number]> = [];
    scheduleMany(limiter, "a", 6, log);
    scheduleMany(limiter, "b", 5, log);
    await vi.advanceTimersByTimeAsync(0);
    expect(log.filter(([k]) => k === "a")).toHaveLength(5);
    expect(log.filter(([k]) => k === "b")).toHaveLength(5);
    expect(limiter.pending("a")).toBe(1);
    expect(limiter.pending("b")).toBe(0);
    expect(limiter.pending("c")).toBe(0);
    expect(limiter.pending()).toBe(1);
  });

  it("rejects only the failing task's promise; later tasks still run", async () => {
    const limiter = new RateLimiter({ limit: 2, windowMs: 1_000 });
    const boom = new Error("boom");
    const asyncBoom = new Error("async boom");
    const p1 = limiter.schedule("k", () => 1);
    const p2 = limiter.schedule("k", () => {
      throw boom;
    });
    const p3 = limiter.schedule("k", () => Promise.reject(asyncBoom));
    const p4 = limiter.schedule("k", async () => 4);
    const settled = Promise.allSettled([p1, p2, p3, p4]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(await settled).toEqual([
      { status: "fulfilled", value: 1 },
      { status: "rejected", reason: boom },
      { status: "rejected", reason: asyncBoom },
      { status: "fulfilled", value: 4 },
    ]);
  });

  it("resolves with the task's (awaited) result", async () => {
    const limiter = new RateLimiter({ limit: 1, windowMs: 1_000 });
    const p = limiter.schedule("k", async () => ({ messageId: "m-1" }));
    await vi.advanceTimersByTimeAsync(0);
    await expect(p).resolves.toEqual({ messageId: "m-1" });
  });

  it("close() rejects the waiting tasks, leaves started ones alone and refuses new ones", async () => {
    const limiter = new RateLimiter({ limit: 2, windowMs: 1_000 });
    const started: number[] = [];
    const promises = [0, 1, 2, 3].map((i) =>
      limiter.schedule("k", () => {
        started.push(i);
        return i;
      }),
    );
    const settled = Promise.allSettled(promises);
    await vi.advanceTimersByTimeAsync(0);
    limiter.close();
    const results = await settled;
    expect(results.slice(0, 2)).toEqual([
      { status: "fulfilled", value: 0 },
      { status: "fulfilled", value: 1 },
    ]);
    for (const r of results.slice(2)) {
      expect(r.status).toBe("rejected");
      expect(r.status === "rejected" ? r.reason : undefined).toBeInstanceOf(RateLimiterClosedError);
    }
    expect(limiter.pending()).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(started).toEqual([0, 1]);
    await expect(limiter.schedule("k", () => 9)).rejects.toBeInstanceOf(RateLimiterClosedError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("reopen() after close() takes tasks again, within the same window's limit", async () => {
    const limiter = new RateLimiter({ limit: 1, windowMs: 1_000 });
    await limiter.schedule("k", () => 1);
    limiter.close();
    limiter.reopen();
    const started: number[] = [];
    const later = limiter.schedule("k", () => started.push(Date.now()));
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([]); // the start before close() still counts in its window
    await vi.advanceTimersByTimeAsync(1_000);
    await later;
    expect(started).toHaveLength(1);
    limiter.close();
  });

  it("throws InvalidInputError naming limit / windowMs for unusable options", () => {
    for (const limit of [0, -1, 1.5, Number.NaN, undefined, "5"]) {
      expect(() => construct(RateLimiter, { limit, windowMs: 1_000 })).toThrow(InvalidInputError);
      expect(() => construct(RateLimiter, { limit, windowMs: 1_000 })).toThrow(/limit/);
    }
    for (const windowMs of [0, -5, 0.5, Number.POSITIVE_INFINITY, undefined]) {
      expect(() => construct(RateLimiter, { limit: 5, windowMs })).toThrow(/windowMs/);
    }
  });

  it.each(MISSING_CASES)(
    "answers or throws InvalidInputError when constructed with options = %s",
    (_l, options) => {
      expectDefinedOrInvalidInput(() => construct(RateLimiter, options), "options");
    },
  );

  it("throws InvalidInputError naming key for a bad key; a junk task is not a bare TypeError", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000 });
    for (const key of [undefined, "", ...JUNK]) {
      await expectSettlesOrInvalidInput(
        () => callLoosely(limiter.schedule.bind(limiter), key, () => 1),
        "key",
      );
    }
    await expect(limiter.schedule(HUGE, () => "ok")).resolves.toBe("ok");
    for (const task of [undefined, null, 42, "x"]) {
      const p = expectSettlesOrInvalidInput(
        () => callLoosely(limiter.schedule.bind(limiter), "k2", task),
        "task",
      );
      await vi.advanceTimersByTimeAsync(1_000);
      await p;
    }
    const junkTask = 42 as unknown as () => number;
    await expect(limiter.schedule("k3", junkTask)).rejects.toThrow(InvalidInputError);
    await expect(limiter.schedule("k3", junkTask)).rejects.toThrow(/task must be a function/);
    expect(limiter.pending()).toBe(0);
  });
});

describe("createDiscordRateLimiters", () => {
  const T0 = 1_772_000_000_000;

  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const defaults = { threadCreationPerMinute: 5, messagePerChannelPerSecond: 5 };

  it("allows 5 thread creations per minute and queues the 6th for the next minute", async () => {
    const { threadCreation } = createDiscordRateLimiters(defaults);
    const starts: number[] = [];
    const all = Array.from({ length: 6 }, () =>
      threadCreation.schedule("guild-1", () => starts.push(Date.now())),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(starts).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(starts).toHaveLength(6);
    expect(starts[5]).toBeGreaterThanOrEqual(T0 + 60_000);
    await Promise.all(all);
    threadCreation.close();
  });

  it("allows 5 messages per second per channel; channels are independent", async () => {
    const { messages } = createDiscordRateLimiters(defaults);
    const starts: Array<[string, number]> = [];
    for (const channel of ["c1", "c2"]) {
      for (let i = 0; i < 7; i++) messages.schedule(channel, () => starts.push([channel, Date.now()]));
    }
    await vi.advanceTimersByTimeAsync(0);
    expect(starts.filter(([c]) => c === "c1")).toHaveLength(5);
    expect(starts.filter(([c]) => c === "c2")).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(starts).toHaveLength(14);
    for (const [, at] of starts.slice(10)) expect(at).toBeGreaterThanOrEqual(T0 + 1_000);
    messages.close();
  });

  it("follows the configured limits", async () => {
    const { threadCreation, messages } = createDiscordRateLimiters({
      threadCreationPerMinute: 2,
      messagePerChannelPerSecond: 3,
    });
    let threads = 0;
    let sent = 0;
    for (let i = 0; i < 4; i++) threadCreation.schedule("g", () => threads++);
    for (let i = 0; i < 4; i++) messages.schedule("c", () => sent++);
    await vi.advanceTimersByTimeAsync(0);
    expect([threads, sent]).toEqual([2, 3]);
    await vi.advanceTimersByTimeAsync(1_001);
    expect([threads, sent]).toEqual([2, 4]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect([threads, sent]).toEqual([4, 4]);
  });

  it("uses injected timers when given", async () => {
    let clock = 0;
    const due: Array<{ at: number; fn: () => void }> = [];
    const { messages } = createDiscordRateLimiters(defaults, {
      now: () => clock,
      setTimeout: (fn, ms) => {
        const entry = { at: clock + ms, fn };
        due.push(entry);
        return entry;
      },
      clearTimeout: () => {},
    });
    let sent = 0;
    // One request at a time per channel: each start waits for the one before it to settle.
    const settle = async () => {
      for (let i = 0; i < 50; i++) await Promise.resolve();
    };
    for (let i = 0; i < 6; i++) messages.schedule("c", () => sent++);
    await settle();
    expect(sent).toBe(5);
    expect(due).toHaveLength(1);
    clock = due[0]?.at ?? Number.NaN;
    expect(clock).toBeGreaterThanOrEqual(1_000);
    due[0]?.fn();
    await settle();
    expect(sent).toBe(6);
  });

  it.each(MISSING_CASES)("answers or throws InvalidInputError for rateLimit = %s", (_label, rateLimit) => {
    expectDefinedOrInvalidInput(() => callLoosely(createDiscordRateLimiters, rateLimit), "rateLimit");
  });

  it("throws InvalidInputError naming limit for zero or missing limits", () => {
    expect(() =>
      callLoosely(createDiscordRateLimiters, { threadCreationPerMinute: 0, messagePerChannelPerSecond: 5 }),
    ).toThrow(InvalidInputError);
    expectDefinedOrInvalidInput(() => callLoosely(createDiscordRateLimiters, {}), "limit");
  });
});

// ---------------------------------------------------------------------------------------------
// IdempotencyCache (same key within 5 minutes → the first result, nothing new)
// ---------------------------------------------------------------------------------------------
describe("IdempotencyCache", () => {
  let now = 0;
  const cache = <T>() => new IdempotencyCache<T>({ now: () => now });

  beforeEach(() => {
    now = 1_772_000_000_000;
  });

  it("has a 5-minute TTL", () => {
    expect(IDEMPOTENCY_TTL_MS).toBe(300_000);
  });

  it("returns the first result for the same key within 5 minutes and runs the operation once", async () => {
    const c = cache<string>();
    let calls = 0;
    const op = () => `result-${++calls}`;
    expect(await c.run("k", op)).toBe("result-1");
    now += 60_000;
    expect(await c.run("k", op)).toBe("result-1");
    now += 239_000; // 299 s after the first
    expect(await c.run("k", op)).toBe("result-1");
    expect(calls).toBe(1);
    expect(c.has("k")).toBe(true);
  });

  it("runs again after the TTL", async () => {
    const c = cache<string>();
    let calls = 0;
    const op = () => `result-${++calls}`;
    await c.run("k", op);
    now += 300_001;
    expect(c.has("k")).toBe(false);
    expect(await c.run("k", op)).toBe("result-2");
    expect(calls).toBe(2);
    now += 1_000;
    expect(await c.run("k", op)).toBe("result-2");
  });

  it("shares one call between concurrent duplicates", async () => {
    const c = cache<{ messageId: string }>();
    let calls = 0;
    let release: (v: { messageId: string }) => void = () => {};
    const op = () => {
      calls++;
      return new Promise<{ messageId: string }>((resolve) => {
        release = resolve;
      });
    };
    const a = c.run("send-1", op);
    const b = c.run("send-1", op);
    const d = c.run("send-1", op);
    await Promise.resolve();
    await Promise.resolve();
    release({ messageId: "m-1" });
    expect(await Promise.all([a, b, d])).toEqual([
      { messageId: "m-1" },
      { messageId: "m-1" },
      { messageId: "m-1" },
    ]);
    expect(calls).toBe(1);
  });

  it("keeps different keys apart", async () => {
    const c = cache<string>();
    const calls: string[] = [];
    expect(
      await c.run("a", () => {
        calls.push("a");
        return "A";
      }),
    ).toBe("A");
    expect(
      await c.run("b", () => {
        calls.push("b");
        return "B";
      }),
    ).toBe("B");
    expect(calls).toEqual(["a", "b"]);
    expect(c.size).toBe(2);
  });

  it("does not cache a failure: the next call runs again", async () => {
    const c = cache<string>();
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(new Error("discord 503"));
    };
    await expect(c.run("k", failing)).rejects.toThrow("discord 503");
    await Promise.resolve();
    expect(c.has("k")).toBe(false);
    expect(
      await c.run("k", () => {
        calls++;
        return "ok";
      }),
    ).toBe("ok");
    expect(calls).toBe(2);
  });

  it("does not cache a synchronous throw either", async () => {
    const c = cache<string>();
    const err = new Error("sync");
    await expect(
      c.run("k", () => {
        throw err;
      }),
    ).rejects.toBe(err);
    expect(await c.run("k", () => "ok")).toBe("ok");
  });

  it("shares a failure between concurrent waiters, then lets the next call run", async () => {
    const c = cache<string>();
    let calls = 0;
    let fail: (e: Error) => void = () => {};
    const op = () => {
      calls++;
      return new Promise<string>((_, reject) => {
        fail = reject;
      });
    };
    const err = new Error("timeout");
    const waiters = Promise.allSettled([c.run("k", op), c.run("k", op)]);
    await Promise.resolve();
    await Promise.resolve();
    fail(err);
    expect(await waiters).toEqual([
      { status: "rejected", reason: err },
      { status: "rejected", reason: err },
    ]);
    expect(calls).toBe(1);
    expect(
      await c.run("k", () => {
        calls++;
        return "second";
      }),
    ).toBe("second");
    expect(calls).toBe(2);
  });

  it("rejects with InvalidInputError naming key for a bad key; a junk operation is not a bare TypeError", async () => {
    const c = cache<string>();
    for (const key of [undefined, "", ...JUNK]) {
      await expectSettlesOrInvalidInput(() => callLoosely(c.run.bind(c), key, () => "x"), "key");
    }
    for (const op of [undefined, null, 42, "x"]) {
      await expectSettlesOrInvalidInput(
        () => callLoosely(c.run.bind(c), `op-${String(op)}`, op),
        "operation",
      );
    }
    const junkOperation = 42 as unknown as () => string;
    await expect(c.run("junk-op", junkOperation)).rejects.toThrow(/operation must be a function/);
    expect(c.has("junk-op")).toBe(false);
    expect(await c.run(HUGE, () => "big")).toBe("big");
    expect(c.has(HUGE)).toBe(true);
    for (const key of [undefined, "", 42]) expect(callLoosely(c.has.bind(c), key)).toBe(false);
  });

  it.each([...MISSING_CASES, ["{}", {}]])("can be constructed with options = %s", async (_label, options) => {
    const c = expectDefinedOrInvalidInput(() => construct(IdempotencyCache, options), "options");
    if (c instanceof IdempotencyCache) expect(await c.run("k", () => 1)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// SlidingWindowLog (internal; the window the guards share)
// ---------------------------------------------------------------------------------------------
describe("SlidingWindowLog", () => {
  it("lists the events inside the window, oldest first", () => {
    const log = new SlidingWindowLog(5, 1_000);
    log.record("k", 100);
    log.record("k", 600);
    log.record("k", 900);
    expect(log.recent("k", 1_000)).toEqual([100, 600, 900]);
    expect(log.recent("k", 1_100)).toEqual([600, 900]);
    expect(log.recent("k", 1_950)).toEqual([]);
    expect(log.recent("other", 1_000)).toEqual([]);
  });

  it("keeps at most `limit` events per key (the newest)", () => {
    const log = new SlidingWindowLog(3, 10_000);
    for (let t = 1; t <= 6; t++) log.record("k", t);
    expect(log.recent("k", 7)).toEqual([4, 5, 6]);
  });

  it("forgets idle keys", () => {
    const log = new SlidingWindowLog(3, 1_000);
    log.record("a", 0);
    log.record("b", 500);
    log.sweep(1_200);
    expect(log.size).toBe(1);
    expect(log.recent("b", 1_200)).toEqual([500]);
  });
});
