import { afterEach, describe, expect, it, vi } from "vitest";
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

  it("moveTo sets the time and fires what is due by then at once, in due order, each seeing the new time", () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b at ${clock.now()}`), 20);
    clock.setTimeout(() => {
      fired.push(`a at ${clock.now()}`);
      // A timer its work sets, due by then, fires in the same move; one that moves the clock on
      // makes more fall due.
      clock.setTimeout(() => fired.push(`a's at ${clock.now()}`), 0);
      clock.moveTo(40);
    }, 10);
    clock.setTimeout(() => fired.push(`c at ${clock.now()}`), 35);
    expect(clock.nextDue()).toBe(10);
    expect(clock.moveTo(15)).toBe(4);
    expect(fired).toEqual(["a at 15", "a's at 40", "b at 40", "c at 40"]);
    expect(clock.nextDue()).toBeUndefined();
    expect(clock.moveTo(clock.now())).toBe(0);
    expect(() => clock.moveTo(39)).toThrow(/cannot go back/);
  });
});

describe("VirtualClock running by itself", () => {
  afterEach(() => vi.useRealTimers());

  it("follows real time at its pace, fires each timer when its time comes, and stops where it stands", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: 1_000_000 });
    const clock = new VirtualClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 5_000);
    clock.run(10);
    expect(clock.pace).toEqual({ at: 0, realAt: 1_000_000, speed: 10 });
    await vi.advanceTimersByTimeAsync(499);
    expect(clock.now()).toBe(4_990);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual([5_000]);
    // Another clock at the same pace reads the same time.
    const other = new VirtualClock(0);
    other.run(clock.pace ?? { at: 0, realAt: 0, speed: 1 });
    expect(other.now()).toBe(clock.now());
    await expect(clock.advance(1, async () => {})).rejects.toThrow(/runs by itself/);
    clock.setTimeout(() => fired.push(clock.now()), 1_000);
    clock.stop();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(clock.now()).toBe(5_000);
    expect(fired).toEqual([5_000]);
    expect(clock.moveTo(6_000)).toBe(1);
    other.stop();
  });

  it("fires timers due together in turns, each after the promise work of the one before", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: 0 });
    const clock = new VirtualClock(0);
    clock.run(1);
    const log: string[] = [];
    clock.setTimeout(() => void Promise.resolve().then(() => log.push("a's work")), 10);
    clock.setTimeout(() => log.push("b"), 10);
    await vi.advanceTimersByTimeAsync(20);
    expect(log).toEqual(["a's work", "b"]);
    clock.stop();
  });

  it("rejects a speed that is not a number above 0", () => {
    const clock = new VirtualClock(0);
    for (const speed of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => clock.run(speed)).toThrow(/speed must be a number above 0/);
    }
  });
});
