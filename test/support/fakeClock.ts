import { afterEach, beforeEach, vi } from "vitest";
import type { DurableHost } from "../../src/durable/index.js";

/**
 * Each test of the file runs on fake timers and Date from `t0`; the hosts pushed onto the returned
 * list are stopped after it.
 */
export function hostsOnFakeTime(t0: number): DurableHost[] {
  const hosts: DurableHost[] = [];
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    vi.setSystemTime(t0);
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
    vi.useRealTimers();
  });
  return hosts;
}
