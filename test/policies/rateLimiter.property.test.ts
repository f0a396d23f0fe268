// Property: the queueing rate limiter (requests queue in order, they are not dropped) keeps each key's
// start order and never lets `limit + 1` starts into one window.
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RateLimiter } from "../../src/policies/index.js";

interface Op {
  /** Fake milliseconds to advance before this schedule call. */
  delay: number;
  key: string;
}

interface Start {
  key: string;
  seq: number;
  submittedAt: number;
  startedAt: number;
}

const opArb = fc.record({
  delay: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3_000 })),
  key: fc.constantFrom("a", "b", "c"),
});

async function runScenario(limit: number, windowMs: number, ops: Op[]) {
  const limiter = new RateLimiter({ limit, windowMs });
  const starts: Start[] = [];
  const submitted = new Map<string, number[]>();
  const promises: Promise<number>[] = [];
  for (const op of ops) {
    if (op.delay > 0) await vi.advanceTimersByTimeAsync(op.delay);
    const times = submitted.get(op.key) ?? [];
    const seq = times.length;
    const submittedAt = Date.now();
    times.push(submittedAt);
    submitted.set(op.key, times);
    promises.push(
      limiter.schedule(op.key, () => {
        starts.push({ key: op.key, seq, submittedAt, startedAt: Date.now() });
        return seq;
      }),
    );
  }
  // Enough fake time for every queue to drain: each start frees after at most one window.
  await vi.advanceTimersByTimeAsync((ops.length + 1) * windowMs + 1);
  const results = await Promise.all(promises);
  limiter.close();
  return { starts, submitted, results };
}

describe("RateLimiter (property)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("per key: every task starts once, in submission order, and no window holds more than `limit` starts", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 2_000 }),
        fc.array(opArb, { minLength: 1, maxLength: 40 }),
        async (limit, windowMs, ops) => {
          vi.useFakeTimers();
          vi.setSystemTime(1_772_000_000_000);
          try {
            const { starts, submitted, results } = await runScenario(limit, windowMs, ops);

            // Nothing dropped: as many starts as schedule calls, each resolved with its own result.
            expect(starts).toHaveLength(ops.length);
            const perKeySeq = new Map<string, number>();
            const expectedResults = ops.map((op) => {
              const seq = perKeySeq.get(op.key) ?? 0;
              perKeySeq.set(op.key, seq + 1);
              return seq;
            });
            expect(results).toEqual(expectedResults);

            for (const [key, times] of submitted) {
              const keyStarts = starts.filter((s) => s.key === key);
              // Submission order.
              expect(keyStarts.map((s) => s.seq)).toEqual(times.map((_, i) => i));
              for (let i = 0; i < keyStarts.length; i++) {
                const s = keyStarts[i] as Start;
                // Never before it was scheduled.
                expect(s.startedAt).toBeGreaterThanOrEqual(s.submittedAt);
                // At most `limit` starts in any window of `windowMs`.
                if (i >= limit) {
                  const earlier = keyStarts[i - limit] as Start;
                  expect(s.startedAt - earlier.startedAt).toBeGreaterThanOrEqual(windowMs);
                }
                // Queued, not stalled: it starts as soon as order and the window allow (1 ms slack).
                const prev = i > 0 ? (keyStarts[i - 1] as Start).startedAt : Number.NEGATIVE_INFINITY;
                const windowFree =
                  i >= limit
                    ? (keyStarts[i - limit] as Start).startedAt + windowMs
                    : Number.NEGATIVE_INFINITY;
                expect(s.startedAt).toBeLessThanOrEqual(Math.max(s.submittedAt, prev, windowFree) + 1);
              }
            }
          } finally {
            vi.useRealTimers();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("keys never slow each other down", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(opArb, { minLength: 1, maxLength: 30 }),
        async (limit, windowMs, ops) => {
          vi.useFakeTimers();
          vi.setSystemTime(1_772_000_000_000);
          let mixed: Start[];
          try {
            mixed = (await runScenario(limit, windowMs, ops)).starts;
          } finally {
            vi.useRealTimers();
          }
          // Replaying one key alone (same delays, other keys' calls removed) gives the same start times.
          for (const key of ["a", "b", "c"]) {
            const alone: Op[] = [];
            let carry = 0;
            for (const op of ops) {
              carry += op.delay;
              if (op.key === key) {
                alone.push({ key, delay: carry });
                carry = 0;
              }
            }
            if (alone.length === 0) continue;
            vi.useFakeTimers();
            vi.setSystemTime(1_772_000_000_000);
            try {
              const solo = (await runScenario(limit, windowMs, alone)).starts;
              expect(solo.map((s) => s.startedAt)).toEqual(
                mixed.filter((s) => s.key === key).map((s) => s.startedAt),
              );
            } finally {
              vi.useRealTimers();
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
