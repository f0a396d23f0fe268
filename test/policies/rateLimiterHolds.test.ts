import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RateLimiter } from "../../src/policies/guards/RateLimiter.js";

const T0 = 1_772_000_000_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

/** Starts, as [key, index, ms since T0]. */
type Starts = Array<[string, number, number]>;

function schedule(limiter: RateLimiter, key: string, count: number, starts: Starts, task?: () => unknown) {
  return Array.from({ length: count }, (_, i) =>
    limiter.schedule(key, () => {
      starts.push([key, i, Date.now() - T0]);
      return task?.();
    }),
  );
}

describe("RateLimiter.holdFor", () => {
  it("starts nothing on a held key until the hold ends, in order, while other keys go on", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000 });
    const starts: Starts = [];
    limiter.holdFor("c", 2_000);
    schedule(limiter, "c", 3, starts);
    schedule(limiter, "d", 1, starts);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(starts).toEqual([["d", 0, 0]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([
      ["d", 0, 0],
      ["c", 0, 2_000],
      ["c", 1, 2_000],
      ["c", 2, 2_000],
    ]);
  });

  it("lengthens the wait of tasks already waiting for the window, never shortens a hold", async () => {
    const limiter = new RateLimiter({ limit: 1, windowMs: 1_000 });
    const starts: Starts = [];
    schedule(limiter, "c", 2, starts); // the second waits for the window, until 1 000
    await vi.advanceTimersByTimeAsync(0);
    limiter.holdFor("c", 3_000);
    limiter.holdFor("c", 500);
    await vi.advanceTimersByTimeAsync(2_999);
    expect(starts).toEqual([["c", 0, 0]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([
      ["c", 0, 0],
      ["c", 1, 3_000],
    ]);
  });

  it("ignores a hold that is not a positive finite time", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000 });
    const starts: Starts = [];
    for (const ms of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) limiter.holdFor("c", ms);
    schedule(limiter, "c", 1, starts);
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toEqual([["c", 0, 0]]);
  });

  it("forgets its holds when closed", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000 });
    limiter.holdFor("c", 60_000);
    limiter.close();
    limiter.reopen();
    const starts: Starts = [];
    schedule(limiter, "c", 1, starts);
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toEqual([["c", 0, 0]]);
  });
});

describe("RateLimiter oneAtATime", () => {
  it("starts a key's next task when the one before it settled, even when it failed", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000, oneAtATime: true });
    const starts: Starts = [];
    const after = (ms: number, fail: boolean) => () =>
      new Promise((resolve, reject) =>
        setTimeout(() => (fail ? reject(new Error("boom")) : resolve(ms)), ms),
      );
    const [failing] = schedule(limiter, "c", 1, starts, after(300, true));
    const next = schedule(limiter, "c", 2, starts, after(100, false));
    const other = schedule(limiter, "d", 2, starts);
    const failed = expect(failing).rejects.toThrow("boom");
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toEqual([
      ["c", 0, 0],
      ["d", 0, 0],
      ["d", 1, 0],
    ]);
    await vi.advanceTimersByTimeAsync(300);
    await failed;
    await vi.advanceTimersByTimeAsync(100);
    expect(starts.filter(([key]) => key === "c").map(([, , at]) => at)).toEqual([0, 300, 400]);
    await vi.advanceTimersByTimeAsync(100);
    await expect(Promise.all([...next, ...other])).resolves.toEqual([100, 100, undefined, undefined]);
  });

  it("applies a hold a task sets to the task after it", async () => {
    const limiter = new RateLimiter({ limit: 5, windowMs: 1_000, oneAtATime: true });
    const starts: Starts = [];
    // The first answer says the bucket is empty for 5 s: the second waits for that, not for the window.
    schedule(limiter, "c", 2, starts, () => {
      if (starts.length === 1) limiter.holdFor("c", 5_000);
    });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(starts).toEqual([["c", 0, 0]]);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([
      ["c", 0, 0],
      ["c", 1, 5_000],
    ]);
  });
});
