// The durable host with generic machines on the in-memory store, in simulated time: XState's `after`
// delays keep their wall-clock due times across stop/start, a side effect waits for the write that
// started it, a stored snapshot of an older machine version is migrated, idle() waits.
import { describe, expect, it, vi } from "vitest";
import {
  type AnyActorRef,
  assign,
  createActor,
  createMachine,
  emit,
  type EventObject,
  fromPromise,
  raise,
  sendTo,
  setup,
} from "xstate";
import {
  type ActorRecord,
  createDurableHost,
  createMemoryStore,
  type DurableHost,
  type MachineRegistration,
  type SnapshotStore,
} from "../../src/durable/index.js";
import { hostsOnFakeTime } from "../support/fakeClock.js";
import { storeWith } from "../support/runtimeParts.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const hosts = hostsOnFakeTime(T0);

/** A light with a nested wait, a named delay and a parallel region. */
const light = setup({
  delays: { patience: 60_000 },
  types: { context: {} as { log: string[] } },
}).createMachine({
  id: "light",
  context: { log: [] },
  initial: "green",
  states: {
    green: { after: { 30_000: "yellow" } },
    yellow: {
      initial: "blinking",
      states: { blinking: { after: { patience: "#light.red" } } },
    },
    red: {
      type: "parallel",
      states: {
        lamp: { initial: "on", states: { on: { after: { 5_000: "off" } }, off: {} } },
        gate: {
          initial: "closed",
          states: { closed: { after: { 10_000: "open" } }, open: { type: "final" } },
        },
      },
    },
  },
});

function host(
  store: SnapshotStore,
  machines: Record<string, MachineRegistration> = { light: { machine: light, version: 1 } },
) {
  const h = createDurableHost({ store, machines, logger: { warn: () => {} } });
  hosts.push(h);
  return h;
}

async function restart(h: DurableHost, store: SnapshotStore, machines?: Parameters<typeof host>[1]) {
  await h.stop();
  hosts.splice(hosts.indexOf(h), 1);
  const next = host(store, machines);
  await next.start();
  return next;
}

const valueOf = async (h: DurableHost, id: string) => (await h.get(id))?.value;

describe("createDurableHost: XState's own delays are durable", () => {
  it("a plain `after` fires at its original wall-clock time after a stop and a start, once", async () => {
    const store = createMemoryStore();
    let h = host(store);
    await h.start();
    await h.spawn("light", "l1");
    await vi.advanceTimersByTimeAsync(20_000);
    h = await restart(h, store);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(await valueOf(h, "l1")).toBe("green");
    await vi.advanceTimersByTimeAsync(1);
    await h.idle();
    expect(await valueOf(h, "l1")).toEqual({ yellow: "blinking" });
  });

  it("a named delay in a nested state, and delays in parallel regions, keep their due times", async () => {
    const store = createMemoryStore();
    let h = host(store);
    await h.start();
    await h.spawn("light", "l1");
    await vi.advanceTimersByTimeAsync(30_000 + 45_000);
    h = await restart(h, store);
    await vi.advanceTimersByTimeAsync(15_000);
    await h.idle();
    expect(await valueOf(h, "l1")).toEqual({ red: { lamp: "on", gate: "closed" } });
    await vi.advanceTimersByTimeAsync(5_000);
    h = await restart(h, store);
    await h.idle();
    expect(await valueOf(h, "l1")).toEqual({ red: { lamp: "off", gate: "closed" } });
    await vi.advanceTimersByTimeAsync(5_000);
    await h.idle();
    expect(await valueOf(h, "l1")).toEqual({ red: { lamp: "off", gate: "open" } });
  });

  it("a delay longer than a timer can hold (30 days) fires after 30 days, not at once", async () => {
    const month = createMachine({
      initial: "waiting",
      states: { waiting: { after: { [30 * 86_400_000]: "expired" } }, expired: {} },
    });
    const h = host(createMemoryStore(), { month: { machine: month, version: 1 } });
    await h.start();
    await h.spawn("month", "m1");
    await vi.advanceTimersByTimeAsync(86_400_000);
    expect(await valueOf(h, "m1")).toBe("waiting");
    await vi.advanceTimersByTimeAsync(29 * 86_400_000);
    await h.idle();
    expect(await valueOf(h, "m1")).toBe("expired");
  });

  it("a delay that fell due while the host was stopped fires once, at start", async () => {
    const store = createMemoryStore();
    const h = host(store);
    await h.start();
    await h.spawn("light", "l1");
    await h.stop();
    hosts.splice(0);
    await vi.advanceTimersByTimeAsync(31_000);
    const next = host(store);
    await next.start();
    await vi.advanceTimersByTimeAsync(0);
    await next.idle();
    expect(await valueOf(next, "l1")).toEqual({ yellow: "blinking" });
    const stored = (await store.get("l1")) as ActorRecord;
    // Now waiting on `patience` only, due a full minute after the late firing.
    expect(stored.delayed).toEqual([expect.objectContaining({ dueAt: T0 + 31_000 + 60_000 })]);
  });

  it("an invoked child machine's delay survives too, and the parent hears the child finish", async () => {
    const child = createMachine({
      initial: "waiting",
      states: { waiting: { after: { 3_000: "done" } }, done: { type: "final" } },
    });
    const parent = setup({ actors: { child } }).createMachine({
      initial: "running",
      states: { running: { invoke: { src: "child", onDone: "finished" } }, finished: { type: "final" } },
    });
    const machines = { parent: { machine: parent, version: 1 } };
    const store = createMemoryStore();
    let h = host(store, machines);
    await h.start();
    await h.spawn("parent", "p1");
    await vi.advanceTimersByTimeAsync(1_000);
    h = await restart(h, store, machines);
    await vi.advanceTimersByTimeAsync(1_999);
    expect((await h.get("p1"))?.status).toBe("active");
    await vi.advanceTimersByTimeAsync(1);
    await h.idle();
    expect(await h.get("p1")).toMatchObject({ status: "done", value: "finished" });
    expect(await h.list()).toEqual([]);
    expect((await store.list("archive")).map((r) => r.id)).toEqual(["p1"]);
  });
});

describe("createDurableHost: what is written", () => {
  it("an event that enables no transition, in the actor or its children, writes nothing", async () => {
    const store = createMemoryStore();
    const puts: string[][] = [];
    const counted: SnapshotStore = Object.assign(Object.create(store) as SnapshotStore, {
      put: (records: readonly ActorRecord[]) => {
        puts.push(records.map((r) => r.id));
        return store.put(records);
      },
    });
    const door = setup({}).createMachine({
      initial: "shut",
      states: {
        shut: { on: { KEY: { guard: ({ event }) => event.fits === true, target: "open" } } },
        open: {},
      },
    });
    const house = setup({ actors: { door } }).createMachine({
      invoke: { id: "door", src: "door" },
      on: { KEY: { actions: sendTo("door", ({ event }) => event) } },
    });
    const h = host(counted, { house: { machine: house, version: 1 } });
    await h.start();
    await h.spawn("house", "h1");
    const before = puts.length;
    await h.send("h1", { type: "KEY", fits: false } as EventObject);
    await h.send("h1", { type: "NOTHING" });
    await h.idle();
    expect(puts.length).toBe(before);
    await h.send("h1", { type: "KEY", fits: true } as EventObject);
    expect(puts.slice(before)).toEqual([["h1"]]);
  });
});

describe("createDurableHost: meta", () => {
  it("keeps what `meta` returns beside each snapshot, computed again at every write", async () => {
    const store = createMemoryStore();
    const h = createDurableHost({
      store,
      machines: { light: { machine: light, version: 1 } },
      meta: (actor, kind) => ({ kind, value: JSON.stringify(actor.getSnapshot().value) }),
      logger: { warn: () => {} },
    });
    hosts.push(h);
    await h.start();
    await h.spawn("light", "l1");
    expect((await store.get("l1"))?.meta).toEqual({ kind: "light", value: '"green"' });
    await vi.advanceTimersByTimeAsync(30_000);
    await h.idle();
    expect((await store.get("l1"))?.meta).toEqual({ kind: "light", value: '{"yellow":"blinking"}' });
  });
});

describe("createDurableHost: onRecord, onAdopt and onOpen", () => {
  it("tells each record written with its write, and each stored live actor taken on at start, after the store opened", async () => {
    const store = createMemoryStore();
    const told: string[] = [];
    const options = {
      store,
      machines: { light: { machine: light, version: 1 } },
      onRecord: (record: Readonly<ActorRecord>, durable: Promise<boolean>) => {
        told.push(`record ${record.id} ${JSON.stringify((record.snapshot as { value: unknown }).value)}`);
        void durable.then((landed) => told.push(`durable ${record.id} ${landed}`));
      },
      onAdopt: (record: Readonly<ActorRecord>) => told.push(`adopt ${record.id}`),
      onOpen: () => void told.push("open"),
      logger: { warn: () => {} },
    };
    const first = createDurableHost(options);
    await first.start();
    await first.spawn("light", "l1");
    expect(told).toEqual(["open", 'record l1 "green"', "durable l1 true"]);
    await first.stop();
    told.length = 0;
    const second = createDurableHost(options);
    hosts.push(second);
    await second.start();
    expect(told).toEqual(["open", "adopt l1"]);
  });
});

describe("createDurableHost: onEmitted and name", () => {
  it("hears what any actor of a tree emits, and names itself in errors as told", async () => {
    type Pong = { type: "pong"; from: string };
    const child = setup({ types: { emitted: {} as Pong } }).createMachine({
      on: { PING: { actions: emit({ type: "pong", from: "child" }) } },
    });
    const parent = setup({ types: { emitted: {} as Pong }, actors: { child } }).createMachine({
      invoke: { id: "child", src: "child" },
      on: {
        PING: { actions: [emit({ type: "pong", from: "parent" }), sendTo("child", { type: "PING" })] },
      },
    });
    const heard: unknown[] = [];
    const h = createDurableHost({
      store: createMemoryStore(),
      machines: { parent: { machine: parent, version: 1 } },
      onEmitted: (event) => heard.push(event),
      name: "Orders",
      logger: { warn: () => {} },
    });
    hosts.push(h);
    await expect(h.spawn("parent", "p")).rejects.toThrow(/^Orders\.spawn: the host is not running/);
    await h.start();
    await h.spawn("parent", "p");
    await h.send("p", { type: "PING" });
    expect(heard).toEqual([
      { type: "pong", from: "parent" },
      { type: "pong", from: "child" },
    ]);
  });
});

describe("createDurableHost: side effects", () => {
  it("an invoked promise starts only once the snapshot that started it is durable", async () => {
    const calls: string[] = [];
    const memory = createMemoryStore();
    let releasePut: (() => void) | undefined;
    const slow = storeWith(memory, {
      put: async (records) => {
        calls.push(`put ${records.map((r) => (r.snapshot as { value: string }).value).join(",")}`);
        if (records.some((r) => (r.snapshot as { value: string }).value === "working")) {
          await new Promise<void>((resolve) => (releasePut = resolve));
        }
        await memory.put(records);
      },
    });
    const job = setup({
      actors: { work: fromPromise(async () => void calls.push("effect")) },
    }).createMachine({
      initial: "idle",
      states: {
        idle: { on: { GO: "working" } },
        working: { invoke: { src: "work", onDone: "done" } },
        done: { type: "final" },
      },
    });
    const h = host(slow, { job: { machine: job, version: 1 } });
    await h.start();
    await h.spawn("job", "j1");
    const sending = h.send("j1", { type: "GO" });
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toEqual(["put idle", "put working"]);
    releasePut?.();
    await sending;
    await h.idle();
    expect(calls).toEqual(["put idle", "put working", "effect", "put done"]);
  });
});

describe("createDurableHost: a machine's version", () => {
  it("a record stored by an older version is converted by the registration's migrate, then resumes", async () => {
    const door = (version: 1 | 2) =>
      setup({ types: { context: {} as Record<string, number> } }).createMachine({
        context: version === 1 ? { opens: 0 } : { openings: 0 },
        initial: "closed",
        states: {
          closed: { on: { OPEN: "open" } },
          open: {
            entry: assign(({ context }) =>
              version === 1 ? { opens: (context.opens ?? 0) + 1 } : { openings: (context.openings ?? 0) + 1 },
            ),
            on: { CLOSE: "closed" },
          },
        },
      });
    const store = createMemoryStore();
    let h = host(store, { door: { machine: door(1), version: 1 } });
    await h.start();
    await h.spawn("door", "d1");
    await h.send("d1", { type: "OPEN" });
    await h.send("d1", { type: "CLOSE" });
    // Version 2 renamed `opens`: its migrate converts what version 1 stored.
    const seen: number[] = [];
    const migrate = (snapshot: unknown, fromVersion: number) => {
      seen.push(fromVersion);
      const { context, ...rest } = snapshot as { context: { opens: number } };
      return { ...rest, context: { openings: context.opens } };
    };
    h = await restart(h, store, { door: { machine: door(2), version: 2, migrate } });
    expect(seen).toEqual([1]);
    expect((await h.get("d1"))?.context).toEqual({ openings: 1 });
    await h.send("d1", { type: "OPEN" });
    expect(await h.get("d1")).toMatchObject({ value: "open", context: { openings: 2 } });
    expect((await store.get("d1"))?.machineVersion).toBe(2);
  });
});

describe("createDurableHost: refusals name what is wrong", () => {
  it("an actor that fails at its start or on an event rejects its caller, and is kept as an error", async () => {
    const strict = setup({
      types: { input: {} as { n: number }, context: {} as { n: number } },
    }).createMachine({
      context: ({ input }) => {
        if (input.n < 0) throw new Error("n must not be negative");
        return { n: input.n };
      },
      initial: "ready",
      states: {
        ready: {
          on: {
            BREAK: {
              actions: () => {
                throw new Error("the action broke");
              },
            },
          },
        },
      },
    });
    const store = createMemoryStore();
    const h = host(store, { strict: { machine: strict, version: 1 } });
    await h.start();
    await expect(h.spawn("strict", "bad", { n: -1 })).rejects.toThrow(
      /DurableHost.spawn: actor "bad" \(strict\) failed: n must not be negative/,
    );
    expect(await h.get("bad")).toMatchObject({ status: "error" });
    await h.spawn("strict", "ok", { n: 1 });
    await expect(h.send("ok", { type: "BREAK" })).rejects.toThrow(
      /actor "ok" \(strict\) failed: the action broke/,
    );
    expect((await store.list("archive")).map((r) => [r.id, r.status])).toEqual([
      ["bad", "error"],
      ["ok", "error"],
    ]);
  });

  it("a state the store cannot keep (not JSON) rejects its caller at once, and holds no other actor back", async () => {
    const holder = setup({
      types: { input: {} as { v: unknown }, context: {} as { v: unknown } },
    }).createMachine({
      context: ({ input }) => ({ v: input.v }),
      initial: "idle",
      states: { idle: { on: { GO: "busy" } }, busy: {} },
    });
    const warnings: string[] = [];
    const store = createMemoryStore();
    // onRecord hears whether each write landed: false for the refused one, and nothing rejects.
    const landed: Array<Promise<string>> = [];
    const h = createDurableHost({
      store,
      machines: { holder: { machine: holder, version: 1 } },
      logger: { warn: (m) => warnings.push(m) },
      onRecord: (record, durable) => void landed.push(durable.then((ok) => `${record.id} ${ok}`)),
    });
    hosts.push(h);
    await h.start();
    await h.spawn("holder", "fine", { v: 1 });
    // The refusal fails only its own caller; the other actor goes on being written.
    const bad = h.spawn("holder", "bigint", { v: 10n });
    const good = h.send("fine", { type: "GO" });
    await expect(bad).rejects.toThrow(/record "bigint" is invalid: it is not JSON data/);
    await good;
    expect(await valueOf(h, "fine")).toBe("busy");
    expect(await h.get("bigint")).toBeUndefined();
    expect(warnings).toContainEqual(expect.stringMatching(/actor bigint \(holder\) cannot be stored/));
    expect(warnings.filter((w) => w.includes("trying again"))).toEqual([]);
    expect((await Promise.all(landed)).sort()).toEqual(["bigint false", "fine true", "fine true"]);
  });

  it("a delayed event that holds an actor outside the tree rejects its send, naming it; the stored state stays", async () => {
    const outsider = createActor(setup({}).createMachine({}), { id: "outsider" }).start();
    const courier = setup({
      types: { events: {} as { type: "CARRY" | "DELIVER"; ref: AnyActorRef } },
    }).createMachine({
      id: "courier",
      initial: "idle",
      states: {
        idle: {
          on: {
            CARRY: {
              target: "carrying",
              actions: raise(({ event }) => ({ type: "DELIVER", ref: event.ref }), { delay: 1000 }),
            },
          },
        },
        carrying: {},
      },
    });
    const warnings: string[] = [];
    const store = createMemoryStore();
    const h = createDurableHost({
      store,
      machines: { courier: { machine: courier, version: 1 } },
      logger: { warn: (m) => warnings.push(m) },
    });
    hosts.push(h);
    await h.start();
    await h.spawn("courier", "c1");
    await expect(h.send("c1", { type: "CARRY", ref: outsider } as EventObject)).rejects.toThrow(
      'delayed event "DELIVER" of the root actor "c1" (machine "courier") cannot be stored: it holds a reference to actor "outsider", which is not in the actor\'s tree',
    );
    expect((await store.get("c1"))?.snapshot).toMatchObject({ status: "active", value: "idle" });
    expect(warnings).toContainEqual(expect.stringMatching(/actor c1 \(courier\) cannot be stored/));
    outsider.stop();
  });

  it("an inspect option that is not an inspector names createDurableHost", () => {
    expect(() => createDurableHost({ store: createMemoryStore(), machines: {}, inspect: 42 })).toThrow(
      /^createDurableHost: inspect must be an @statelyai\/inspect inspector/,
    );
  });

  it("before start, an unknown kind, a taken id, an unknown actor", async () => {
    const h = host(createMemoryStore());
    await expect(h.spawn("light", "x")).rejects.toThrow(/not running; call start\(\) first/);
    await h.start();
    await expect(h.spawn("nope", "x")).rejects.toThrow(/no machine of kind "nope" \(registered: light\)/);
    await h.spawn("light", "x");
    await expect(h.spawn("light", "x")).rejects.toThrow(/an actor "x" already exists/);
    await expect(h.send("y", { type: "GO" })).rejects.toThrow(/no actor "y"/);
    expect(await h.list()).toEqual([{ id: "x", kind: "light", status: "active", value: "green" }]);
  });
});

describe("createDurableHost: a start that fails", () => {
  it("a store that cannot list its records fails start(), and lets the store go for the next start", async () => {
    const inner = createMemoryStore();
    let listFails = true;
    const store: SnapshotStore = {
      open: (options) => inner.open(options),
      get: (id) => inner.get(id),
      put: (records) => inner.put(records),
      prune: (olderThan) => inner.prune(olderThan),
      close: () => inner.close(),
      list: async (which) => {
        if (listFails) throw new Error("EIO: i/o error, read");
        return inner.list(which);
      },
    };
    const first = host(store);
    await expect(first.start()).rejects.toThrow(/EIO/);
    listFails = false;
    const second = host(store);
    await second.start();
    expect(await second.list()).toEqual([]);
  });
});

describe("createDurableHost: actors that only wait stay records until they are needed", () => {
  /** A host whose inspector notes every actor XState creates, by the root's id. */
  function inspectedHost(store: SnapshotStore, machines: Record<string, MachineRegistration>) {
    const created: string[] = [];
    const h = createDurableHost({
      store,
      machines,
      logger: { warn: () => {} },
      inspect: (event: { type: string; actorRef?: { id?: string } }) => {
        if (event.type === "@xstate.actor" && event.actorRef?.id !== undefined)
          created.push(event.actorRef.id);
      },
    });
    hosts.push(h);
    return { h, created };
  }

  it("a waiting actor is not restored at start; its first delay wakes it on time", async () => {
    const store = createMemoryStore();
    const machines = { light: { machine: light, version: 1 } };
    const first = host(store, machines);
    await first.start();
    await first.spawn("light", "l1");
    await first.stop();
    hosts.splice(0);
    const { h, created } = inspectedHost(store, machines);
    await h.start();
    expect(created).toEqual([]);
    expect(await h.list()).toEqual([{ id: "l1", kind: "light", status: "active", value: "green" }]);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(created).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await h.idle();
    expect(created).toEqual(["l1"]);
    expect(await valueOf(h, "l1")).toEqual({ yellow: "blinking" });
  });

  it("an event wakes it too, and a running side effect keeps an actor from sleeping (it runs again, at least once)", async () => {
    let runs = 0;
    const job = setup({
      actors: { work: fromPromise(() => new Promise<void>(() => void (runs += 1))) },
    }).createMachine({
      initial: "idle",
      states: { idle: { on: { GO: "working" } }, working: { invoke: { src: "work" } } },
    });
    const machines = { job: { machine: job, version: 1 } };
    const store = createMemoryStore();
    const first = host(store, machines);
    await first.start();
    await first.spawn("job", "waits");
    await first.spawn("job", "works");
    await first.send("works", { type: "GO" });
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toBe(1);
    await first.stop();
    hosts.splice(0);

    const { h, created } = inspectedHost(store, machines);
    await h.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(created.filter((id) => id === "works" || id === "waits")).toEqual(["works"]);
    expect(runs).toBe(2);
    await h.send("waits", { type: "GO" });
    await vi.advanceTimersByTimeAsync(0);
    expect(await valueOf(h, "waits")).toBe("working");
    expect(runs).toBe(3);
  });
});
