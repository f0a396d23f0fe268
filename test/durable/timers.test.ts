import { afterEach, beforeEach, expect, it, vi } from "vitest";
import {
  clearLongTimeout,
  GLOBAL_TIMERS,
  MAX_TIMER_MS,
  setLongTimeout,
  setSoon,
} from "../../src/durable/timers.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

const DAY = 86_400_000;

it("a delay longer than a timer can hold fires after all of it, not after 1 ms", async () => {
  let fired = 0;
  setLongTimeout(GLOBAL_TIMERS, () => (fired += 1), 30 * DAY);
  await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1);
  expect(fired).toBe(0);
  await vi.advanceTimersByTimeAsync(30 * DAY - MAX_TIMER_MS - 2);
  expect(fired).toBe(0);
  await vi.advanceTimersByTimeAsync(1);
  expect(fired).toBe(1);
});

it("can be cancelled in any of its steps", async () => {
  let fired = 0;
  const timeout = setLongTimeout(GLOBAL_TIMERS, () => (fired += 1), 30 * DAY);
  await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 10);
  clearLongTimeout(GLOBAL_TIMERS, timeout);
  await vi.advanceTimersByTimeAsync(30 * DAY);
  expect(fired).toBe(0);
});

it("setSoon runs after the current synchronous work, before any timer, and can be cancelled", async () => {
  const order: string[] = [];
  GLOBAL_TIMERS.setTimeout(() => order.push("timer"), 0);
  setSoon(() => order.push("soon"));
  const cancelled = setSoon(() => order.push("cancelled"));
  clearLongTimeout(GLOBAL_TIMERS, cancelled);
  order.push("sync");
  await Promise.resolve();
  expect(order).toEqual(["sync", "soon"]);
  await vi.advanceTimersByTimeAsync(0);
  expect(order).toEqual(["sync", "soon", "timer"]);
});
