import { afterEach, beforeEach, vi } from "vitest";
import type { DurableHost } from "../../src/durable/index.js";

/**
 * Per test of the file: fake setTimeout/setInterval/Date at `t0` (setImmediate and I/O stay real: the
 * stores need them), and the returned list's members stopped after the test. Call at the top of a file.
 */
export function stoppedAfterEachOnFakeClock<T extends { stop(): Promise<unknown> }>(t0: number): T[] {
  const started: T[] = [];
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    vi.setSystemTime(t0);
  });
  afterEach(async () => {
    // A second stop does nothing: a test may have stopped them already.
    for (const member of started.splice(0)) await member.stop();
    vi.useRealTimers();
  });
  return started;
}

/** Durable hosts on a fake clock from `t0`: push each onto the list to have it stopped after the test. */
export function hostsOnFakeTime(t0: number): DurableHost[] {
  return stoppedAfterEachOnFakeClock<DurableHost>(t0);
}
