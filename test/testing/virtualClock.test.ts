import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/testing/index.js";

describe("VirtualClock", () => {
  it("fires timers in due order (ties in the order set), each after the settle that follows the one before", async () => {
    const clock = new VirtualClock(1_000);
    const log: string[] = [];
    /** Work a timer starts, finished only after rounds of real I/O: settle waits for it. */
    let inFlight: Promise<void> = Promise.resolve();
    const slowly = (name: string) => () => {
      inFlight = (async () => {
        for (let i = 0; i < 20; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
        log.push(`${name} done at ${clock.now()}`);
      })();
    };
    clock.setTimeout(slowly("b"), 20);
    clock.setTimeout(slowly("a"), 10);
    clock.setTimeout(slowly("c"), 20);
    const cancelled = clock.setTimeout(() => log.push("cancelled"), 5);
    clock.clearTimeout(cancelled);

    await clock.advance(30, () => inFlight);

    expect(log).toEqual(["a done at 1010", "b done at 1020", "c done at 1020"]);
    expect(clock.now()).toBe(1_030);
    expect(clock.pending).toBe(0);
  });

  it("fires a timer set by an earlier one when it falls in the span, and leaves later ones", async () => {
    const clock = new VirtualClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 5);
      clock.setTimeout(() => fired.push(clock.now()), 50);
    }, 10);
    await clock.advance(20, async () => {});
    expect(fired).toEqual([10, 15]);
    expect(clock.pending).toBe(1);
  });

  it("refuses a second advance while one runs", async () => {
    const clock = new VirtualClock(0);
    let release = () => {};
    const first = clock.advance(10, () => new Promise<void>((resolve) => (release = resolve)));
    await expect(clock.advance(10, async () => {})).rejects.toThrow(/already advancing/);
    release();
    await first;
  });
});
