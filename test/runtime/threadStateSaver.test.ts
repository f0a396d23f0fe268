import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ThreadStateSaver } from "../../src/runtime/ThreadStateSaver.js";

const SPACING = 500;

/** A writer whose writes land when the test says: `started` lists the fake time of each start. */
function controlledWriter() {
  const started: number[] = [];
  const landings: Array<(error?: Error) => void> = [];
  let inFlight = 0;
  let mostInFlight = 0;
  return {
    started,
    get mostInFlight() {
      return mostInFlight;
    },
    get inFlight() {
      return inFlight;
    },
    write: () =>
      new Promise<void>((resolve, reject) => {
        started.push(Date.now());
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        landings.push((error) => {
          inFlight -= 1;
          if (error === undefined) resolve();
          else reject(error);
        });
      }),
    /** Lands the oldest write in flight (or fails it with `error`) and lets the saver react. */
    async land(error?: Error) {
      const landing = landings.shift();
      if (landing === undefined) throw new Error("no write in flight");
      landing(error);
      await vi.advanceTimersByTimeAsync(0);
    },
  };
}

function saverWith(writer: ReturnType<typeof controlledWriter>, onError = vi.fn()) {
  return new ThreadStateSaver({
    write: writer.write,
    spacingMs: SPACING,
    now: Date.now,
    timers: { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) },
    onError,
  });
}

const T0 = 1_000_000;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("ThreadStateSaver", () => {
  it("writes a single change at once, and changes in the same tick share that write", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    saver.change();
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toEqual([T0]);
    await writer.land();
    await saver.idle();
    expect(writer.started).toEqual([T0]);
  });

  it("keeps one write in flight and saves the changes made meanwhile together, spacingMs after it ends", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 10; i++) {
      saver.change();
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(writer.started).toHaveLength(1);
    await writer.land(); // at T0 + 100
    await vi.advanceTimersByTimeAsync(SPACING - 1);
    expect(writer.started).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(writer.started).toEqual([T0, T0 + 100 + SPACING]);
    expect(writer.mostInFlight).toBe(1);
  });

  it("writes at most once per spacingMs under a steady burst, even when every write lands at once", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    // A change every 20 ms for 2 s; each write lands before the next change comes.
    for (let i = 0; i < 100; i++) {
      saver.change();
      await vi.advanceTimersByTimeAsync(0);
      while (writer.inFlight > 0) await writer.land();
      await vi.advanceTimersByTimeAsync(20);
    }
    const gaps = writer.started.slice(1).map((t, i) => t - (writer.started[i] as number));
    expect(writer.started.length).toBeLessThanOrEqual(5);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(SPACING);
  });

  it("writes a change after a quiet spell at once", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    await writer.land();
    await vi.advanceTimersByTimeAsync(SPACING);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toEqual([T0, T0 + SPACING]);
  });

  it("idle() waits for the write in flight, not for a change waiting out the spacing", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    let idle = false;
    const waiting = saver.idle().then(() => (idle = true));
    saver.change(); // waits: a write is in flight
    await vi.advanceTimersByTimeAsync(0);
    expect(idle).toBe(false);
    await writer.land();
    await waiting;
    expect(idle).toBe(true);
    // The waiting change is in its pause now: nothing in flight.
    await saver.idle();
    expect(writer.started).toHaveLength(1);
  });

  it("stop() ends the spacing, writes what waits at once, and ignores later changes", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    saver.change();
    await writer.land(); // the second change now waits out the spacing
    expect(writer.started).toHaveLength(1);
    const stopped = saver.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toEqual([T0, T0]);
    await writer.land();
    await stopped;
    saver.change();
    await vi.advanceTimersByTimeAsync(SPACING * 2);
    expect(writer.started).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stop() writes the state even with no change waiting, after the write in flight", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    const stopped = saver.stop();
    await writer.land();
    expect(writer.started).toHaveLength(2);
    await writer.land();
    await stopped;
  });

  it("reports a failed write and writes again on the next change", async () => {
    const writer = controlledWriter();
    const onError = vi.fn();
    const saver = saverWith(writer, onError);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    await writer.land(new Error("disk full"));
    expect(onError).toHaveBeenCalledWith(new Error("disk full"));
    await vi.advanceTimersByTimeAsync(SPACING);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toHaveLength(2);
    await writer.land();
    await saver.idle();
  });

  it("flush() writes at once, skipping the spacing of a burst, and resolves when that write lands", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    await writer.land();
    saver.change(); // within the spacing: would wait 500 ms
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toHaveLength(1);
    let flushed = false;
    const flushing = saver.flush().then(() => (flushed = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toEqual([T0, T0]);
    expect(flushed).toBe(false);
    await writer.land();
    await flushing;
    expect(flushed).toBe(true);
  });

  it("flush() waits for a write that starts after it, not the one already in flight, and rejects when it fails", async () => {
    const writer = controlledWriter();
    const onError = vi.fn();
    const saver = saverWith(writer, onError);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    const outcome = saver.flush().then(
      () => "landed",
      (error: unknown) => (error as Error).message,
    );
    await writer.land(); // the earlier write: not the flush's
    expect(writer.started).toHaveLength(2);
    await writer.land(new Error("disk full"));
    expect(await outcome).toBe("disk full");
    expect(onError).toHaveBeenCalledTimes(1);
  });
});
