import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AcceleratedClock } from "../../src/cli/demo/AcceleratedClock.js";
import { createA2ARuntime } from "../../src/index.js";
import { FakeDiscord, runtimeConfig, tempStateDir, waitUntil } from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  vi.setSystemTime(T0);
});
afterEach(() => vi.useRealTimers());

describe("AcceleratedClock", () => {
  it("runs demo time `speed` times faster once accelerated, never going back", async () => {
    const clock = AcceleratedClock.startingNow(60_000);
    expect(clock.now()).toBe(T0 - 60_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(clock.now()).toBe(T0 - 59_000);
    clock.accelerate(60);
    const at = clock.now();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(clock.now() - at).toBe(60_000);
    expect(clock.elapsed()).toBe(60_000);
  });

  it("fires a demo-time timer after delay/speed of real time", async () => {
    const clock = AcceleratedClock.startingNow();
    clock.accelerate(100);
    let fired = false;
    void clock.sleep(60_000).then(() => (fired = true));
    await vi.advanceTimersByTimeAsync(599);
    expect(fired).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toBe(true);
  });

  it("rejects a speed that is not a number above 0", () => {
    const clock = AcceleratedClock.startingNow();
    for (const speed of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => clock.accelerate(speed)).toThrow(/speed must be a number above 0/);
    }
  });
});

describe("createA2ARuntime({ now, timers }) on an accelerated clock", () => {
  it("posts the 5-minute reminder after 5 s of real time at 60×, not before", async () => {
    const clock = AcceleratedClock.startingNow();
    clock.accelerate(60);
    const discord = new FakeDiscord();
    const runtime = createA2ARuntime({
      stateDir: tempStateDir(),
      config: runtimeConfig,
      discord,
      now: clock.now,
      timers: clock,
      logger: textLogger(() => {}),
    });
    await runtime.start();
    try {
      const sent = await runtime.discordSend({
        fromAgentId: "ruda",
        targetAgentId: "eden",
        message: "리뷰 부탁",
      });
      if (sent.status !== "sent") throw new Error("not sent");
      const reminders = () => discord.messages.filter((m) => m.content.startsWith("[리마인더 1/3]"));
      await vi.advanceTimersByTimeAsync(4_900);
      expect(reminders()).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(200);
      await waitUntil(() => reminders().length === 1, "reminder 1/3");
      expect((await runtime.mentions())[0]).toMatchObject({ status: "reminded", attempts: 2 });
    } finally {
      await runtime.stop();
    }
  });
});
