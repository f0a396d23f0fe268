// The durable host when the store fails to write (a full disk, a directory gone): answers wait for a
// retry that lands, the retry writes each actor's state as it is then (never an older one over a newer
// one), failed actors retry together, and stop() ends the waiting instead of hanging.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { assign, setup } from "xstate";
import {
  type ActorRecord,
  createDurableHost,
  createMemoryStore,
  type DurableHost,
  type SnapshotStore,
} from "../../src/durable/index.js";
import { storeWith } from "../support/runtimeParts.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const hosts: DurableHost[] = [];

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  vi.setSystemTime(T0);
});
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
  vi.useRealTimers();
});

/** Counts the events it was sent. */
const counter = setup({ types: { context: {} as { n: number } } }).createMachine({
  id: "counter",
  context: { n: 0 },
  initial: "counting",
  states: {
    counting: { on: { ADD: { actions: assign({ n: ({ context }) => context.n + 1 }) }, END: "ended" } },
    ended: { type: "final" },
  },
});

/** The memory store, whose puts fail while `failing` is set; every put's records are logged. */
function flakyStore() {
  const inner = createMemoryStore();
  const state = {
    failing: false,
    puts: [] as ActorRecord[][],
    failed: 0,
    /** While set, a put waits for it to resolve. */
    held: undefined as Promise<void> | undefined,
  };
  const store = storeWith(inner, {
    put: async (records) => {
      state.puts.push(structuredClone([...records]));
      await state.held;
      if (state.failing) {
        state.failed += 1;
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }
      await inner.put(records);
    },
  });
  return { store, state };
}

function makeHost(store: SnapshotStore, warnings: string[] = []) {
  const host = createDurableHost({
    store,
    machines: { counter: { machine: counter, version: 1 } },
    logger: { warn: (message) => warnings.push(message) },
  });
  hosts.push(host);
  return host;
}

const countOf = (records: readonly ActorRecord[], id: string) =>
  (records.find((r) => r.id === id)?.snapshot as { context: { n: number } } | undefined)?.context.n;

describe("createDurableHost: a store that fails to write", () => {
  it("answers only once a retry lands, and the retry writes the actor as it is then", async () => {
    const { store, state } = flakyStore();
    const warnings: string[] = [];
    const host = makeHost(store, warnings);
    await host.start();
    await host.spawn("counter", "c");

    state.failing = true;
    let answered = false;
    const first = host.send("c", { type: "ADD" }).then(() => (answered = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(warnings).toContainEqual(expect.stringMatching(/ENOSPC.*retrying in 100 ms, answers wait/));
    // A newer change while the first one waits for its retry.
    const second = host.send("c", { type: "ADD" });
    await vi.advanceTimersByTimeAsync(0);
    state.failing = false;
    await vi.advanceTimersByTimeAsync(100);
    await Promise.all([first, second]);
    expect(answered).toBe(true);

    // Each put after the failures holds the newest count: the failed n=1 is never written over n=2.
    const written = state.puts.map((records) => countOf(records, "c"));
    expect(written[0]).toBe(0);
    expect(written.at(-1)).toBe(2);
    const afterFailures = written.slice(1 + state.failed);
    expect(afterFailures.every((n) => n === 2)).toBe(true);
    expect((await host.get("c"))?.context).toEqual({ n: 2 });
  });

  it("retries every failed actor in one batch per round, backing off 100, 200, 400 ms", async () => {
    const { store, state } = flakyStore();
    const warnings: string[] = [];
    const host = makeHost(store, warnings);
    await host.start();
    const ids = Array.from({ length: 50 }, (_, i) => `c${i}`);
    for (const id of ids) await host.spawn("counter", id);

    state.failing = true;
    const sends = ids.map((id) => host.send(id, { type: "ADD" }));
    await vi.advanceTimersByTimeAsync(0);
    const putsBefore = state.puts.length;
    await vi.advanceTimersByTimeAsync(100);
    await vi.advanceTimersByTimeAsync(200);
    // Two retry rounds so far: one put each, with all fifty actors in it.
    expect(state.puts.slice(putsBefore).map((records) => records.length)).toEqual([50, 50]);
    expect(warnings.map((w) => /retrying in (\d+) ms/.exec(w)?.[1])).toEqual(["100", "200", "400"]);

    state.failing = false;
    await vi.advanceTimersByTimeAsync(400);
    await Promise.all(sends);
    for (const id of ids) expect((await host.get(id))?.context).toEqual({ n: 1 });
  });

  it("stop() while a write keeps failing: the waiting caller is told, and stop() returns", async () => {
    const { store, state } = flakyStore();
    const host = makeHost(store);
    await host.start();
    await host.spawn("counter", "c");

    state.failing = true;
    const sending = host.send("c", { type: "ADD" });
    const outcome = expect(sending).rejects.toThrow(/ENOSPC/);
    await vi.advanceTimersByTimeAsync(0);
    await host.stop();
    await outcome;
    // What was stored before the failure is what a restart finds.
    state.failing = false;
    const again = makeHost(store);
    await again.start();
    expect((await again.get("c"))?.context).toEqual({ n: 0 });
  });

  it("an actor whose last write is still in flight is found by get(), finished, not missing", async () => {
    const { store, state } = flakyStore();
    const host = makeHost(store);
    await host.start();
    await host.spawn("counter", "c");
    let release = (): void => {};
    state.held = new Promise<void>((resolve) => (release = resolve));
    const ending = host.send("c", { type: "END" });
    await vi.advanceTimersByTimeAsync(0);
    expect(await host.get("c")).toMatchObject({ id: "c", status: "done", value: "ended" });
    release();
    await ending;
    expect(await host.get("c")).toMatchObject({ id: "c", status: "done", value: "ended" });
  });
});
