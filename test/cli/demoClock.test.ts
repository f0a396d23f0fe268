import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { VirtualClock } from "../../src/testing/VirtualClock.js";
import { createA2ARuntime } from "../../src/index.js";
import { FakeDiscord, runtimeConfig, tempStateDir, waitUntil } from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  vi.setSystemTime(T0);
});
afterEach(() => vi.useRealTimers());

// The demo runs the runtime on a virtual clock that follows real time at a speed (its pace itself is
// tested in test/testing/virtualClock.test.ts).
describe("createA2ARuntime({ now, timers }) on a virtual clock running at 60×", () => {
  it("posts the 5-minute reminder after 5 s of real time at 60×, not before", async () => {
    const clock = new VirtualClock(Date.now());
    clock.run(60);
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
