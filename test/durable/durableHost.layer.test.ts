// What a layer built on the durable host uses (the A2A runtime is one): create() and an actor's when(),
// actor() waking a dormant actor, counts(), meta in get()/list(), onAbandoned and housekeeping. On the
// in-memory store, in simulated time.
import { describe, expect, it, vi } from "vitest";
import { assign, setup } from "xstate";
import {
  ActorExistsError,
  ActorStoppedError,
  createDurableHost,
  createMemoryStore,
  type DurableHostOptions,
  type SnapshotStore,
} from "../../src/durable/index.js";
import { hostsOnFakeTime } from "../support/fakeClock.js";
import { HoldingStore, storeWith } from "../support/runtimeParts.js";

const T0 = Date.UTC(2026, 10, 28, 9, 0, 0);
const hosts = hostsOnFakeTime(T0);

/** Waits for GO (failing on BREAK), then finishes after a minute. */
const ticket = setup({
  types: { context: {} as { step: number }, events: {} as { type: "GO" } | { type: "BREAK" } },
  actions: {
    fail: () => {
      throw new Error("the ticket broke");
    },
  },
}).createMachine({
  context: { step: 0 },
  initial: "open",
  states: {
    open: { on: { GO: { target: "working", actions: assign({ step: 1 }) }, BREAK: { actions: "fail" } } },
    working: { after: { 60_000: "closed" } },
    closed: { type: "final" },
  },
});

function host(store: SnapshotStore, options: Partial<DurableHostOptions> = {}) {
  const h = createDurableHost({
    store,
    machines: { ticket: { machine: ticket, version: 1 } },
    meta: (actor) => ({ step: (actor.getSnapshot() as { context: { step: number } }).context.step }),
    logger: { warn: () => {} },
    ...options,
  });
  hosts.push(h);
  return h;
}

const stepOf = (actor: { getSnapshot(): unknown }) =>
  (actor.getSnapshot() as { context: { step: number } }).context.step;

describe("a layer on the durable host: create() and when()", () => {
  it("when() resolves with what it picks only once the snapshot showing it is durable", async () => {
    const store = new HoldingStore(createMemoryStore());
    const h = host(store);
    await h.start();
    const created = h.create("ticket", "t1");
    expect(created).toMatchObject({ id: "t1", kind: "ticket" });
    await h.idle();
    store.hold();
    created.actor.send({ type: "GO" });
    let picked: number | undefined;
    const reached = created.when(() => (stepOf(created.actor) === 1 ? "working" : undefined));
    void reached.then(() => (picked = 1));
    await vi.advanceTimersByTimeAsync(0);
    // The state is reached, its write is not durable: nothing is told yet.
    expect(stepOf(created.actor)).toBe(1);
    expect(h.counts().writesPending).toBeGreaterThan(0);
    expect(picked).toBeUndefined();
    store.release();
    expect(await reached).toBe("working");
    expect((await store.get("t1"))?.meta).toEqual({ step: 1 });
  });

  it("a failed actor rejects when() with its error, or resolves with onError's value", async () => {
    const h = host(createMemoryStore());
    await h.start();
    const created = h.create("ticket", "t1");
    const plain = created.when(() => undefined);
    const handled = created.when(
      () => undefined,
      (error) => `failed: ${(error as Error).message}`,
    );
    created.actor.send({ type: "BREAK" });
    await expect(plain).rejects.toThrow("the ticket broke");
    expect(await handled).toBe("failed: the ticket broke");
  });

  it("create() names an unknown kind and an id in use, and refuses before start", async () => {
    const h = host(createMemoryStore());
    expect(() => h.create("ticket", "t1")).toThrow("DurableHost.create: the host is not running");
    await h.start();
    expect(() => h.create("invoice", "i1")).toThrow('no machine of kind "invoice"');
    h.create("ticket", "t1");
    expect(() => h.create("ticket", "t1")).toThrow(ActorExistsError);
    expect(() => h.create("ticket", "t1")).toThrow('DurableHost.create: an actor "t1" already exists');
  });
});

describe("a layer on the durable host: stop() while the store is out of reach", () => {
  it("rejects what callers wait for with ActorStoppedError and hands onAbandoned the actors never stored", async () => {
    let failing = false;
    const memory = createMemoryStore();
    const store: SnapshotStore = Object.assign(Object.create(memory) as SnapshotStore, {
      put: (records: Parameters<SnapshotStore["put"]>[0]) =>
        failing ? Promise.reject(new Error("ENOSPC: no space left on device")) : memory.put(records),
    });
    const abandoned: string[][] = [];
    const h = host(store, { onAbandoned: (ids) => void abandoned.push(ids) });
    await h.start();
    const stored = h.create("ticket", "stored");
    await h.idle();
    failing = true;
    const waitsStored = stored.when(() => (stepOf(stored.actor) === 1 ? 1 : undefined));
    stored.actor.send({ type: "GO" });
    const lost = h.create("ticket", "lost");
    const waitsLost = lost.when(() => "created");
    await vi.advanceTimersByTimeAsync(0);
    await h.stop();
    await expect(waitsLost).rejects.toBeInstanceOf(ActorStoppedError);
    await expect(waitsStored).rejects.toBeInstanceOf(ActorStoppedError);
    // Only "lost" may have been written by a write whose reply was lost, never known stored.
    expect(abandoned).toEqual([["lost"]]);
  });
});

describe("a layer on the durable host: actor(), counts(), meta", () => {
  it("actor() restores a dormant actor; counts() and list() follow it, with each actor's meta", async () => {
    const store = createMemoryStore();
    const first = host(store);
    await first.start();
    await first.spawn("ticket", "t1");
    await first.send("t1", { type: "GO" });
    await first.stop();

    const h = host(store);
    await h.start();
    expect(h.counts()).toEqual({ live: 0, dormant: 1, timersPending: 1, writesPending: 0 });
    expect(await h.list()).toEqual([
      { id: "t1", kind: "ticket", status: "active", value: "working", meta: { step: 1 } },
    ]);
    expect(h.actor("nobody")).toBeUndefined();
    const woken = h.actor("t1");
    expect(woken === undefined ? undefined : stepOf(woken.actor)).toBe(1);
    expect(h.counts()).toEqual({ live: 1, dormant: 0, timersPending: 1, writesPending: 0 });
    expect(await h.get("t1")).toMatchObject({ value: "working", meta: { step: 1 } });
  });

  it("a finished actor is listed until its last write lands, then archived", async () => {
    const store = new HoldingStore(createMemoryStore());
    const h = host(store);
    await h.start();
    await h.spawn("ticket", "t1");
    await h.send("t1", { type: "GO" });
    store.hold();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(await h.list()).toEqual([
      { id: "t1", kind: "ticket", status: "done", value: "closed", output: undefined, meta: { step: 1 } },
    ]);
    store.release();
    await h.idle();
    expect(await h.list()).toEqual([]);
    expect(await h.get("t1")).toMatchObject({ status: "done", meta: { step: 1 } });
  });
});

describe("a layer on the durable host: housekeeping", () => {
  it("runs at start and every period while the host runs (a quarter of cleanupMaxAgeMs, at least a minute), not after stop", async () => {
    const runs: number[] = [];
    const h = host(createMemoryStore(), { cleanupMaxAgeMs: 8 * 60_000, housekeeping: (at) => runs.push(at) });
    await h.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([T0]);
    await vi.advanceTimersByTimeAsync(2 * 60_000 - 1);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([T0, T0 + 2 * 60_000]);
    await vi.advanceTimersByTimeAsync(2 * 60_000);
    expect(runs).toHaveLength(3);
    await h.stop();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(runs).toHaveLength(3);
  });

  it("start() does not wait for the archive's pruning (a restart's fold may hold it), and stop() does", async () => {
    const memory = createMemoryStore();
    let pruned = (): void => {};
    const store = storeWith(memory, {
      prune: (olderThan) =>
        new Promise<number>((resolve) => (pruned = () => void memory.prune(olderThan).then(resolve))),
    });
    const h = host(store);
    await h.start();
    await h.spawn("ticket", "t1");
    expect(await h.list()).toHaveLength(1);
    let stopped = false;
    const stopping = h.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    pruned();
    await stopping;
  });
});
