import { stat } from "node:fs/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { BACKLOG_FIRES_PER_TURN, TimerQueue } from "../../src/durable/TimerQueue.js";

describe("TimerQueue: the backlog found at start()", () => {
  it("wakes it in due order, letting the I/O that waits run between its turns", async () => {
    const overdue = 50 * BACKLOG_FIRES_PER_TURN;
    const order: string[] = [];
    const queue = new TimerQueue(Date.now, (id) => {
      order.push(id);
      // A wake costs real time (an actor restored): a turn of them outlasts a timer's 1 ms, and Node
      // runs every timer due by the end of one in the same phase, before any I/O.
      for (const until = performance.now() + 0.05; performance.now() < until;);
    });
    const ids = Array.from({ length: overdue }, (_, i) => `a${String(i).padStart(5, "0")}`);
    const at = Date.now() - 60_000;
    for (const [i, id] of [...ids.entries()].reverse()) queue.set(id, at + i);
    // Real I/O, as a journal append's steps are: each waits for the event loop to poll.
    const io = stat(process.cwd()).then(() => order.length);
    queue.start();
    const wokenWhenIoRan = await io;
    expect(wokenWhenIoRan).toBeLessThan(overdue);
    expect(wokenWhenIoRan % BACKLOG_FIRES_PER_TURN).toBe(0);
    while (order.length < overdue) await nextTurn();
    expect(order).toEqual(ids);
    queue.stop();
  });
});

describe("TimerQueue: times set again", () => {
  it("wakes each actor once, at the time it was set to last; a cancelled one not at all", () => {
    let now = 0;
    const woken: Array<[string, number]> = [];
    const timers = { setTimeout: () => undefined, clearTimeout: () => undefined };
    const queue = new TimerQueue(
      () => now,
      (id) => woken.push([id, now]),
      timers,
    );
    queue.start();
    queue.set("later", 100);
    queue.set("later", 300);
    queue.set("earlier", 300);
    queue.set("earlier", 100);
    queue.set("cancelled", 200);
    queue.set("cancelled", undefined);
    queue.set("same", 200);
    queue.set("same", 200);
    queue.set("set again", 50);
    queue.set("set again", undefined);
    queue.set("set again", 250);
    expect(queue.size).toBe(4);
    for (; now <= 400; now += 50) queue.fireDue();
    expect(woken).toEqual([
      ["earlier", 100],
      ["same", 200],
      ["set again", 250],
      ["later", 300],
    ]);
    expect(queue.size).toBe(0);
  });
});
