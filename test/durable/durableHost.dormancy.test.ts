// A hosted actor that only waits goes back to being its record once idle (`dormantAfterMs` after its
// latest change is durable; a spawned one as soon as its first record is queued), and is hosted again
// at its next event or due time, unseen by get(), list(), send(), actor() and the inspector. On the
// in-memory store, in simulated time.
import { describe, expect, it, vi } from "vitest";
import { assign, fromPromise, type InspectionEvent, sendTo, setup } from "xstate";
import {
  createDurableHost,
  createMemoryStore,
  type DurableHost,
  type DurableHostOptions,
  type SnapshotStore,
} from "../../src/durable/index.js";
import type { ActorRecord } from "../../src/persistence/actorRecord.js";
import { hostsOnFakeTime } from "../support/fakeClock.js";
import { InspectorModel } from "../../src/inspector/InspectorModel.js";
import { HoldingStore } from "../support/runtimeParts.js";
import { BACKLOG_FIRES_PER_TURN, OVERDUE_FIRES_PER_TURN } from "../../src/durable/TimerQueue.js";

const T0 = Date.UTC(2026, 10, 29, 9, 0, 0);
const hosts = hostsOnFakeTime(T0);
let finishWork: () => void = () => {};

/** Waits for PING (counted) or WORK (a side effect, then back to waiting); reminded after a minute. */
const reminder = setup({
  types: { context: {} as { pings: number }, events: {} as { type: "PING" } | { type: "WORK" } },
  actors: { work: fromPromise(() => new Promise<void>((resolve) => (finishWork = resolve))) },
}).createMachine({
  context: { pings: 0 },
  initial: "waiting",
  states: {
    waiting: {
      on: { PING: { actions: assign({ pings: ({ context }) => context.pings + 1 }) }, WORK: "working" },
      after: { 60_000: "reminded" },
    },
    working: { invoke: { src: "work", onDone: "waiting" } },
    reminded: { type: "final" },
  },
});

/** Invokes a child machine that waits for GO; done when the child is. */
const parent = setup({
  actors: {
    child: setup({ types: { events: {} as { type: "GO" } } }).createMachine({
      initial: "waiting",
      states: { waiting: { on: { GO: "gone" } }, gone: { type: "final" } },
    }),
  },
}).createMachine({
  initial: "running",
  states: {
    running: {
      invoke: { id: "child", src: "child", onDone: "finished" },
      on: { GO: { actions: sendTo("child", { type: "GO" }) } },
    },
    finished: { type: "final" },
  },
});

function host(store: SnapshotStore = createMemoryStore(), options: Partial<DurableHostOptions> = {}) {
  const h = createDurableHost({
    store,
    machines: { reminder: { machine: reminder, version: 1 }, parent: { machine: parent, version: 1 } },
    logger: { warn: () => {} },
    dormantAfterMs: 1_000,
    ...options,
  });
  hosts.push(h);
  return h;
}

const counts = (h: DurableHost) => {
  const { live, dormant } = h.counts();
  return { live, dormant };
};

/** A started host on `store` whose one actor, reminder "r", has gone dormant. */
async function dormantReminder(store: SnapshotStore): Promise<DurableHost> {
  const h = host(store);
  await h.start();
  await h.spawn("reminder", "r");
  await vi.advanceTimersByTimeAsync(1_000);
  expect(counts(h)).toEqual({ live: 0, dormant: 1 });
  return h;
}

describe("an idle actor that only waits goes back to being its record", () => {
  it("once its write is durable and dormantAfterMs has passed; get() and list() show it as before", async () => {
    const h = host();
    await h.start();
    await h.spawn("reminder", "r1");
    const before = h.actor("r1");
    await vi.advanceTimersByTimeAsync(999);
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
    await vi.advanceTimersByTimeAsync(1);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
    expect(before?.actor.getSnapshot().status).toBe("stopped");
    expect(await h.get("r1")).toMatchObject({ status: "active", value: "waiting", context: { pings: 0 } });
    expect(await h.list()).toEqual([{ id: "r1", kind: "reminder", status: "active", value: "waiting" }]);
    // Its wake-up is its delay's.
    expect(h.counts().timersPending).toBe(1);
  });

  it("send() hosts it again: the event applies durably, and it is dormant again once idle", async () => {
    const store = createMemoryStore();
    const h = host(store);
    await h.start();
    await h.spawn("reminder", "r1");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h).dormant).toBe(1);
    await h.send("r1", { type: "PING" });
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
    expect((await store.get("r1"))?.snapshot).toMatchObject({ context: { pings: 1 } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
    await h.send("r1", { type: "PING" });
    expect(await h.get("r1")).toMatchObject({ context: { pings: 2 } });
  });

  it("its delay fires at its due time while it is dormant", async () => {
    const h = host();
    await h.start();
    await h.spawn("reminder", "r1");
    await vi.advanceTimersByTimeAsync(59_999);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
    expect(await h.get("r1")).toMatchObject({ status: "active", value: "waiting" });
    await vi.advanceTimersByTimeAsync(1);
    await h.idle();
    expect(await h.get("r1")).toMatchObject({ status: "done", value: "reminded" });
    expect(counts(h)).toEqual({ live: 0, dormant: 0 });
  });

  it("actor() hosts it again: a new XState actor in the same state, the old one stopped", async () => {
    const h = host();
    await h.start();
    await h.spawn("reminder", "r1");
    await h.send("r1", { type: "PING" });
    const old = h.actor("r1");
    await vi.advanceTimersByTimeAsync(1_000);
    const again = h.actor("r1");
    expect(again?.actor).not.toBe(old?.actor);
    expect(again?.actor.getSnapshot()).toMatchObject({ status: "active", context: { pings: 1 } });
    again?.actor.send({ type: "PING" });
    await h.idle();
    expect(await h.get("r1")).toMatchObject({ context: { pings: 2 } });
  });

  it("not before its latest change is durable", async () => {
    const store = new HoldingStore(createMemoryStore());
    const h = host(store);
    await h.start();
    store.hold();
    h.create("reminder", "r1");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
    store.release();
    await h.idle();
    await vi.advanceTimersByTimeAsync(999);
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
    await vi.advanceTimersByTimeAsync(1);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
  });

  it("not while a when() caller waits on it, nor while a side effect runs in it", async () => {
    const h = host();
    await h.start();
    const created = h.create("reminder", "r1");
    let pinged = false;
    const waited = created.when(() => (created.actor.getSnapshot().context.pings > 0 ? true : undefined));
    void waited.then(() => (pinged = true));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
    created.actor.send({ type: "PING" });
    await h.idle();
    expect(pinged).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });

    await h.send("r1", { type: "WORK" });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
    finishWork();
    await h.idle();
    expect(await h.get("r1")).toMatchObject({ value: "waiting" });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
  });

  it("the inspector hears nothing of it: no stopped actor, and one actor per id once it is hosted again", async () => {
    const events: InspectionEvent[] = [];
    const model = new InspectorModel(() => {});
    const h = host(createMemoryStore(), {
      inspect: (event: InspectionEvent) => {
        events.push(event);
        model.handle(event);
      },
    });
    await h.start();
    await h.spawn("parent", "p1");
    const first = model
      .hello()
      .actors.map(({ id, sessionId, parentSessionId }) => ({ id, sessionId, parentSessionId }));
    expect(first.map((a) => a.id).sort()).toEqual(["child", "p1"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h).dormant).toBe(1);
    const statuses = events.flatMap((e) => (e.type === "@xstate.snapshot" ? [e.snapshot.status] : []));
    expect(statuses).not.toContain("stopped");
    // Hosted again: new XState actors, shown as the ones seen before.
    await h.send("p1", { type: "GO" });
    const shown = model.hello().actors;
    expect(shown.map(({ id, sessionId, parentSessionId }) => ({ id, sessionId, parentSessionId }))).toEqual(
      first,
    );
    expect(shown.find((a) => a.id === "p1")).toMatchObject({ status: "done", state: "finished" });
    expect(shown.find((a) => a.id === "child")).toMatchObject({ status: "done", state: "gone" });
    const root = first.find((a) => a.id === "p1")?.sessionId;
    const latest = model
      .hello()
      .events.slice(-3)
      .map((e) => [e.type, e.targetSessionId]);
    expect(latest).toEqual([
      ["GO", root],
      ["GO", first.find((a) => a.id === "child")?.sessionId],
      ["xstate.done.actor.child", root],
    ]);
  });

  it("is the store's record once dormant, not a second copy; woken from a copy of it", async () => {
    const store = createMemoryStore(); // kept() hands out the frozen record: restoring from it would throw
    const h = await dormantReminder(store);
    const kept = store.kept?.("r");
    const clone = vi.spyOn(globalThis, "structuredClone");
    await h.send("r", { type: "PING" });
    expect(clone.mock.calls.map(([value]) => value)).toContain(kept?.snapshot);
    clone.mockRestore();
    expect(await h.get("r")).toMatchObject({ context: { pings: 1 } });
  });

  it("get() of it hands out a copy: changing what it returned changes nothing stored", async () => {
    const store = createMemoryStore();
    const h = await dormantReminder(store);
    const got = await h.get("r");
    (got?.context as { pings: number }).pings = 99;
    expect(await h.get("r")).toMatchObject({ context: { pings: 0 } });
    await h.send("r", { type: "PING" });
    expect(await h.get("r")).toMatchObject({ context: { pings: 1 } });
  });

  it("list() of it hands out copies of its value and meta: changing them changes nothing stored", async () => {
    const nested = setup({ types: { events: {} as { type: "PING" } } }).createMachine({
      initial: "waiting",
      states: {
        waiting: {
          initial: "quiet",
          states: { quiet: { on: { PING: "pinged" } }, pinged: {} },
          after: { 60_000: "done" },
        },
        done: { type: "final" },
      },
    });
    const store = createMemoryStore();
    const h = host(store, {
      machines: { nested: { machine: nested, version: 1 } },
      meta: () => ({ tag: { n: 1 } }),
    });
    await h.start();
    await h.spawn("nested", "n");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
    const [listed] = await h.list();
    expect(listed).toMatchObject({ value: { waiting: "quiet" }, meta: { tag: { n: 1 } } });
    (listed?.value as { waiting: string }).waiting = "changed";
    (listed?.meta?.tag as { n: number }).n = 99;
    expect(await h.list()).toMatchObject([{ value: { waiting: "quiet" }, meta: { tag: { n: 1 } } }]);
    await h.send("n", { type: "PING" });
    expect(await h.get("n")).toMatchObject({ value: { waiting: "pinged" } });
  });

  it("once dormant, is what a restart would restore: a context value that is not JSON is its JSON form", async () => {
    const stamped = setup({
      types: { context: {} as { at: unknown }, events: {} as { type: "PING" } },
    }).createMachine({
      context: { at: new Date(T0) },
      initial: "waiting",
      states: {
        waiting: { on: { PING: "pinged" } },
        pinged: { after: { 60_000: "done" } },
        done: { type: "final" },
      },
    });
    const store = createMemoryStore();
    const h = host(store, { machines: { stamped: { machine: stamped, version: 1 } } });
    await h.start();
    // Created through a handle, it stays hosted until idle (a spawned one would be its record at once).
    h.create("stamped", "s");
    await h.idle();
    expect((await h.get("s"))?.context).toEqual({ at: new Date(T0) });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
    expect((await h.get("s"))?.context).toEqual({ at: new Date(T0).toISOString() });
    await h.send("s", { type: "PING" });
    expect(await h.get("s")).toMatchObject({ value: "pinged", context: { at: new Date(T0).toISOString() } });
  });

  it("on a store that keeps no records in memory, is the record it made, woken from it as it is", async () => {
    const { kept: _, ...store } = createMemoryStore();
    const h = await dormantReminder(store);
    const clone = vi.spyOn(globalThis, "structuredClone");
    const snapshotCopies = () =>
      clone.mock.calls.filter(([value]) => typeof value === "object" && value !== null && "context" in value)
        .length;
    await h.send("r", { type: "PING" });
    expect(snapshotCopies()).toBe(0);
    clone.mockRestore();
    expect(await h.get("r")).toMatchObject({ context: { pings: 1 } });
  });

  it("1,000 waiting actors are 1,000 records once idle: none stays an XState actor", async () => {
    const h = host();
    await h.start();
    const created = Array.from({ length: 1_000 }, (_, i) => h.create("reminder", `r${i}`));
    for (const { id } of created) await h.send(id, { type: "PING" });
    expect(counts(h)).toEqual({ live: 1_000, dormant: 0 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(counts(h)).toEqual({ live: 0, dormant: 1_000 });
    await vi.advanceTimersByTimeAsync(59_000);
    await h.idle();
    expect((await h.list()).length).toBe(0);
  });
});

/**
 * The in-memory store (it keeps its records in memory, `kept`), whose puts can be held, or fail after
 * placing their records, as the lowdb store's do when its journal cannot be written.
 */
function keepingStore() {
  const inner = createMemoryStore();
  let gate: Promise<void> | undefined;
  let release = () => {};
  let failures = 0;
  return {
    ...inner,
    async put(records: readonly ActorRecord[]): Promise<void> {
      await inner.put(records);
      await gate;
      if (failures > 0) {
        failures -= 1;
        throw new Error("ENOSPC: no space left on device");
      }
    },
    hold(): void {
      gate = new Promise((resolve) => (release = resolve));
    },
    release(): void {
      gate = undefined;
      release();
    },
    failNext(n: number): void {
      failures = n;
    },
  };
}

describe("a spawned actor that only waits is its record once its first record is queued", () => {
  it("none stays hosted while its write is in flight; spawn() resolves once that write is durable", async () => {
    const store = keepingStore();
    const h = host(store);
    await h.start();
    store.hold();
    let resolved = 0;
    const spawns = ["r1", "r2", "r3"].map((id) => h.spawn("reminder", id).then(() => (resolved += 1)));
    await vi.advanceTimersByTimeAsync(0);
    expect(counts(h)).toEqual({ live: 0, dormant: 3 });
    expect(resolved).toBe(0);
    expect(await h.get("r2")).toMatchObject({ status: "active", value: "waiting", context: { pings: 0 } });
    store.release();
    await Promise.all(spawns);
    expect((await store.get("r3"))?.snapshot).toMatchObject({ value: "waiting" });
    await h.send("r1", { type: "PING" });
    expect((await store.get("r1"))?.snapshot).toMatchObject({ context: { pings: 1 } });
  });

  it("not when its first state runs a side effect, nor with dormantAfterMs: Infinity", async () => {
    const working = setup({ actors: { work: fromPromise(() => new Promise<void>(() => {})) } }).createMachine(
      {
        initial: "working",
        states: { working: { invoke: { src: "work" } } },
      },
    );
    const machines = {
      reminder: { machine: reminder, version: 1 },
      working: { machine: working, version: 1 },
    };
    const h = host(keepingStore(), { machines });
    await h.start();
    await h.spawn("working", "w");
    await h.spawn("reminder", "r");
    expect(counts(h)).toEqual({ live: 1, dormant: 1 });
    const always = host(keepingStore(), { machines, dormantAfterMs: Infinity });
    await always.start();
    await always.spawn("reminder", "r");
    expect(counts(always)).toEqual({ live: 1, dormant: 0 });
  });

  it("a first write that fails is put again, and spawn() resolves once it lands", async () => {
    const store = keepingStore();
    const h = host(store);
    await h.start();
    store.failNext(1);
    let resolved = false;
    const spawned = h.spawn("reminder", "r").then(() => (resolved = true));
    await vi.advanceTimersByTimeAsync(99);
    expect(resolved).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await spawned;
    expect((await store.get("r"))?.snapshot).toMatchObject({ value: "waiting", context: { pings: 0 } });
  });

  it.each([
    ["hosted", 1_000],
    ["dormant again", 0],
  ])(
    "woken by an event before its failed first write is put again (%s by then): the retry writes it as it is now",
    async (_, dormantAfterMs) => {
      const store = keepingStore();
      const h = host(store, { dormantAfterMs });
      await h.start();
      store.failNext(1);
      const spawned = h.spawn("reminder", "r");
      await vi.advanceTimersByTimeAsync(0);
      expect(counts(h)).toEqual({ live: 0, dormant: 1 });
      await h.send("r", { type: "PING" });
      await vi.advanceTimersByTimeAsync(1);
      expect(counts(h).dormant).toBe(dormantAfterMs === 0 ? 1 : 0);
      // The retry round, 100 ms after the failure: the older record must not land over the newer one.
      await vi.advanceTimersByTimeAsync(100);
      await spawned;
      await h.idle();
      expect((await store.get("r"))?.snapshot).toMatchObject({ context: { pings: 1 } });
      expect(await h.get("r")).toMatchObject({ context: { pings: 1 } });
    },
  );
});

describe("dormantAfterMs", () => {
  it("is 100 ms by default: a burst of creates does not hold a second of them as XState actors", async () => {
    const h = createDurableHost({
      store: createMemoryStore(),
      machines: { reminder: { machine: reminder, version: 1 } },
      logger: { warn: () => {} },
    });
    hosts.push(h);
    await h.start();
    await h.spawn("reminder", "r1");
    await h.send("r1", { type: "PING" });
    await vi.advanceTimersByTimeAsync(99);
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
    await vi.advanceTimersByTimeAsync(1);
    expect(counts(h)).toEqual({ live: 0, dormant: 1 });
  });

  it("Infinity keeps every actor hosted", async () => {
    const h = host(createMemoryStore(), { dormantAfterMs: Infinity });
    await h.start();
    await h.spawn("reminder", "r1");
    await vi.advanceTimersByTimeAsync(30_000);
    expect(counts(h)).toEqual({ live: 1, dormant: 0 });
  });

  it.each([-1, Number.NaN, "1000", null])("%s is refused with a TypeError naming the option", (value) => {
    expect(() => host(createMemoryStore(), { dormantAfterMs: value as number })).toThrow(
      /createDurableHost: dormantAfterMs must be a number of ms ≥ 0 \(or Infinity\), got/,
    );
  });
});

/** Real event-loop turns (setImmediate is not faked): the I/O polls a backlog's turns wait for. */
async function eventLoopTurns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe("a restart after an outage", () => {
  /** Sleeps a second, then runs one side effect; `log` says when each wakes and when its effect runs. */
  const log: string[] = [];
  const sleeper = setup({
    types: { context: {} as { n: number }, input: {} as { n: number } },
    actors: { effect: fromPromise(async ({ input }: { input: number }) => void log.push(`effect ${input}`)) },
    actions: { woke: ({ context }) => void log.push(`woke ${context.n}`) },
  }).createMachine({
    context: ({ input }) => ({ n: input.n }),
    initial: "sleeping",
    states: {
      sleeping: { after: { 1_000: { target: "working", actions: "woke" } } },
      working: { invoke: { src: "effect", input: ({ context }) => context.n, onDone: "done" } },
      done: { type: "final" },
    },
  });
  const machines = { sleeper: { machine: sleeper, version: 1 } };

  const woken = () => log.filter((line) => line.startsWith("woke")).length;

  /** A host started on `n` overdue sleepers, its writes held: two turns of them woken, the rest waiting. */
  async function catchUpWithWritesHeld(n: number) {
    const store = createMemoryStore();
    await overdueSleepers(store, n);
    const holding = new HoldingStore(store);
    const restarted = host(holding, { machines });
    await restarted.start();
    holding.hold();
    await vi.advanceTimersByTimeAsync(100);
    await eventLoopTurns(20); // enough for every turn of the backlog, were they not waiting
    return { store, holding, restarted };
  }

  /** `n` effects ran, each once, and no sleeper is left live. */
  async function expectEachEffectOnce(store: SnapshotStore, n: number): Promise<void> {
    const effects = log.filter((line) => line.startsWith("effect"));
    expect(effects.length).toBe(n);
    expect(new Set(effects).size).toBe(n);
    expect((await store.list("live")).length).toBe(0);
  }

  /** `n` sleepers stored in `store`, all overdue by 9 s: what a restart after an outage finds. */
  async function overdueSleepers(store: SnapshotStore, n: number): Promise<void> {
    const first = host(store, { machines });
    await first.start();
    for (let i = 0; i < n; i++) await first.spawn("sleeper", `s${i}`, { n: i });
    await first.stop();
    log.length = 0;
    vi.setSystemTime(Date.now() + 10_000);
  }

  it("wakes the overdue actors a few at a time, in due order: the first effects run before the last wakes", async () => {
    const store = createMemoryStore();
    const first = host(store, { machines });
    await first.start();
    for (let n = 0; n < 500; n++) {
      await first.spawn("sleeper", `s${n}`, { n });
      await vi.advanceTimersByTimeAsync(1); // each due 1 ms after the one before
    }
    await first.stop();
    log.length = 0;
    vi.setSystemTime(Date.now() + 10_000);

    const second = host(store, { machines });
    await second.start();
    await vi.advanceTimersByTimeAsync(100);
    await second.idle();
    const woken = log.filter((line) => line.startsWith("woke"));
    expect(woken).toEqual(Array.from({ length: 500 }, (_, n) => `woke ${n}`));
    expect(new Set(log.filter((line) => line.startsWith("effect"))).size).toBe(500);
    // All woken in one turn would hold every write, and so every effect, back until the last wakes.
    const firstEffect = log.findIndex((line) => line.startsWith("effect"));
    expect(firstEffect).toBeLessThan(log.indexOf("woke 499"));
    expect(firstEffect).toBeLessThanOrEqual(BACKLOG_FIRES_PER_TURN);
  });

  it("wakes each turn of the backlog once the writes of the turn two before have landed", async () => {
    const { holding, restarted: second } = await catchUpWithWritesHeld(500);
    // Two turns in flight. Woken regardless, the whole backlog would be hosted, each waiting for its write.
    expect(woken()).toBe(2 * BACKLOG_FIRES_PER_TURN);
    expect(second.counts().live).toBe(2 * BACKLOG_FIRES_PER_TURN);
    holding.release();
    await vi.advanceTimersByTimeAsync(100);
    await second.idle();
    expect(new Set(log.filter((line) => line.startsWith("effect"))).size).toBe(500);
    expect(counts(second)).toEqual({ live: 0, dormant: 0 });
  });

  it("waits while the writes of a catch-up fail, and runs every effect once when they land again", async () => {
    const store = keepingStore();
    await overdueSleepers(store, 200);
    const second = host(store, { machines });
    await second.start();
    store.failNext(3); // ENOSPC: the first turn's batch and its first two retries
    await vi.advanceTimersByTimeAsync(250);
    await eventLoopTurns(20);
    expect(woken()).toBe(2 * BACKLOG_FIRES_PER_TURN);
    expect(log.some((line) => line.startsWith("effect"))).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    await second.idle();
    await expectEachEffectOnce(store, 200);
  });

  it("stopped while a turn of its catch-up waits for writes: the next host wakes the rest, each effect once", async () => {
    const { store, holding, restarted: second } = await catchUpWithWritesHeld(300);
    expect(woken()).toBe(2 * BACKLOG_FIRES_PER_TURN);
    const stopped = second.stop();
    holding.release();
    await stopped;
    await eventLoopTurns(20); // the cancelled turn wakes no one once its writes land
    expect(woken()).toBe(2 * BACKLOG_FIRES_PER_TURN);

    const third = host(store, { machines });
    await third.start();
    await vi.advanceTimersByTimeAsync(100);
    await third.idle();
    // The stopped host ran none: each effect waits until the write that started it is durable.
    await expectEachEffectOnce(store, 300);
  });

  it("hosts none of the actors whose side effect was in flight: they wake in its turns, each effect run again once", async () => {
    // Stopped inside its effect: its record says the effect must run again.
    let stalled = true;
    const worker = setup({
      types: { context: {} as { n: number }, input: {} as { n: number } },
      actors: {
        effect: fromPromise(async ({ input }: { input: number }) => {
          log.push(`effect ${input}`);
          if (stalled) await new Promise(() => {});
        }),
      },
    }).createMachine({
      context: ({ input }) => ({ n: input.n }),
      initial: "working",
      states: {
        working: { invoke: { src: "effect", input: ({ context }) => context.n, onDone: "done" } },
        done: { type: "final" },
      },
    });
    const workers = { worker: { machine: worker, version: 1 } };
    const store = createMemoryStore();
    const first = host(store, { machines: workers });
    await first.start();
    log.length = 0;
    for (let n = 0; n < 300; n++) await first.spawn("worker", `w${n}`, { n });
    await eventLoopTurns(5);
    expect(log.length).toBe(300);
    await first.stop();
    log.length = 0;
    stalled = false;

    const holding = new HoldingStore(store);
    const second = host(holding, { machines: workers });
    await second.start();
    // Hosted at start, 300 XState actors would be made before start() resolves, and all run at once.
    expect(counts(second)).toEqual({ live: 0, dormant: 300 });
    holding.hold();
    await vi.advanceTimersByTimeAsync(1);
    await eventLoopTurns(20);
    // Two turns woken, the rest waiting for the first turn's writes; the second turn's effects too.
    expect(counts(second).dormant).toBe(300 - 2 * BACKLOG_FIRES_PER_TURN);
    expect(log.length).toBe(BACKLOG_FIRES_PER_TURN);
    holding.release();
    await vi.advanceTimersByTimeAsync(100);
    await second.idle();
    expect(new Set(log).size).toBe(300);
    expect(log.length).toBe(300);
    expect((await store.list("live")).length).toBe(0);
  });

  it("wakes later due times in turns of OVERDUE_FIRES_PER_TURN, each once the writes of the turn two before landed", async () => {
    const store = createMemoryStore();
    const holding = new HoldingStore(store);
    const h = host(holding, { machines, dormantAfterMs: 0 });
    await h.start();
    const n = OVERDUE_FIRES_PER_TURN * 2 + 500;
    await Promise.all(Array.from({ length: n }, (_, i) => h.spawn("sleeper", `s${i}`, { n: i })));
    await vi.advanceTimersByTimeAsync(1);
    await eventLoopTurns(5); // idle actors retire in turns too
    expect(counts(h)).toEqual({ live: 0, dormant: n });
    log.length = 0;
    holding.hold();
    await vi.advanceTimersByTimeAsync(999);
    await eventLoopTurns(20);
    // Two turns woken, their writes held: the third waits for the first's. All at once, 2,548 actors
    // would be hosted, each waiting for its write.
    expect(woken()).toBe(2 * OVERDUE_FIRES_PER_TURN);
    holding.release();
    await h.idle();
    expect(woken()).toBe(n);
    await expectEachEffectOnce(store, n);
  });

  it("wakes later due times that fit a turn all at once", async () => {
    const store = createMemoryStore();
    const h = host(store, { machines, dormantAfterMs: 0 });
    await h.start();
    await Promise.all(Array.from({ length: 500 }, (_, n) => h.spawn("sleeper", `s${n}`, { n })));
    await vi.advanceTimersByTimeAsync(1);
    expect(counts(h)).toEqual({ live: 0, dormant: 500 });
    log.length = 0;
    await vi.advanceTimersByTimeAsync(999);
    // One timer turn woke all 500, before any of their effects ran.
    expect(log.findIndex((line) => line.startsWith("effect"))).toBe(500);
    await h.idle();
    expect(new Set(log).size).toBe(1_000);
  });
});
