// Runtimes on a ManualClock (the test moves time by hand; real I/O runs), each stopped after the test:
// for tests that stop and start a runtime around a wait and check when it fires.
import { afterEach } from "vitest";
import { type A2AEvent, type A2ARuntime, type A2ARuntimeOptions, createA2ARuntime } from "../../src/index.js";
import type { ManualClock } from "../fixtures/manualClock.js";
import { runtimeConfig } from "./runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

/** Call at the top of a test file: `runtimeOn(stateDir, clock, { gateway | discord, … })`; `config` replaces runtimeConfig. */
export function useClockedRuntimes() {
  const started: A2ARuntime[] = [];
  afterEach(async () => {
    for (const r of started.splice(0)) await r.stop();
  });
  return function runtimeOn(
    stateDir: string,
    clock: ManualClock,
    ports: Pick<A2ARuntimeOptions, "gateway" | "discord" | "inspect" | "config" | "store" | "logger">,
  ): { r: A2ARuntime; events: A2AEvent[] } {
    const events: A2AEvent[] = [];
    const r = createA2ARuntime({
      config: runtimeConfig,
      stateDir,
      now: clock.now,
      timers: clock,
      random: () => 0.5,
      logger: textLogger(() => {}),
      ...ports,
    });
    r.onEvent((e) => events.push(e));
    started.push(r);
    return { r, events };
  };
}
