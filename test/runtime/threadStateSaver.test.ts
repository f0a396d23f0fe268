import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ThreadStateSaver } from "../../src/runtime/ThreadStateSaver.js";

/** A writer whose writes land when the test says. */
function controlledWriter() {
  let started = 0;
  const landings: Array<(error?: Error) => void> = [];
  let inFlight = 0;
  let mostInFlight = 0;
  return {
    get started() {
      return started;
    },
    get mostInFlight() {
      return mostInFlight;
    },
    write: () =>
      new Promise<void>((resolve, reject) => {
        started += 1;
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

const saverWith = (writer: ReturnType<typeof controlledWriter>, onError = vi.fn()) =>
  new ThreadStateSaver({ write: writer.write, onError });

beforeEach(() => {
  vi.useFakeTimers();
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
    expect(writer.started).toBe(1);
    await writer.land();
    await saver.idle();
    expect(writer.started).toBe(1);
  });

  it("keeps one write in flight and saves the changes made meanwhile together, as soon as it lands", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 10; i++) {
      saver.change();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(writer.started).toBe(1);
    await writer.land();
    expect(writer.started).toBe(2);
    await writer.land();
    await saver.idle();
    expect(writer.mostInFlight).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stop() writes what waits and ignores later changes", async () => {
    const writer = controlledWriter();
    const saver = saverWith(writer);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    const stopped = saver.stop();
    await writer.land();
    expect(writer.started).toBe(2);
    await writer.land();
    await stopped;
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toBe(2);
  });

  it("reports a failed write and writes again on the next change", async () => {
    const writer = controlledWriter();
    const onError = vi.fn();
    const saver = saverWith(writer, onError);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    await writer.land(new Error("disk full"));
    expect(onError).toHaveBeenCalledWith(new Error("disk full"));
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    expect(writer.started).toBe(2);
    await writer.land();
    await saver.idle();
  });

  it("flush() waits for a write that starts after it, not the one already in flight, and rejects when it fails", async () => {
    const writer = controlledWriter();
    const onError = vi.fn();
    const saver = saverWith(writer, onError);
    saver.change();
    await vi.advanceTimersByTimeAsync(0);
    let settled = false;
    const outcome = saver.flush().then(
      () => "landed",
      (error: unknown) => (error as Error).message,
    );
    void outcome.then(() => (settled = true));
    await writer.land(); // the earlier write: not the flush's
    expect(settled).toBe(false);
    expect(writer.started).toBe(2);
    await writer.land(new Error("disk full"));
    expect(await outcome).toBe("disk full");
    expect(onError).toHaveBeenCalledTimes(1);
  });
});
