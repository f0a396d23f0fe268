import { describe, expect, it } from "vitest";
import { type AnyStateMachine, assign, createMachine, setup } from "xstate";
import type { ActorRecord, LowdbSnapshotStore } from "../../src/persistence/index.js";
import { ActorHost } from "../../src/runtime/ActorHost.js";
import { EarlierPosts } from "../../src/runtime/EarlierPosts.js";
import { ManualClock } from "../fixtures/manualClock.js";

// The runtime's actor host keeps XState's own `after` delays durable, as the generic durable host does:
// each record stores its pending delays, a restored actor fires them at their original wall-clock time,
// and a dormant record is hosted when its earliest delay is due.

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

/** A machine of nobody's: waits 3 s in a nested state, while an invoked child waits 2 s on its own. */
const child = createMachine({
  id: "child",
  initial: "waiting",
  states: { waiting: { after: { 2000: "rang" } }, rang: { type: "final" } },
});
const waiter = setup({
  actors: { child },
  delays: { patience: 3000 },
}).createMachine({
  id: "waiter",
  context: { childDone: false },
  initial: "outer",
  states: {
    outer: {
      initial: "inner",
      invoke: { id: "child", src: "child", onDone: { actions: assign({ childDone: true }) } },
      states: { inner: { after: { patience: "#waiter.late" } } },
    },
    late: {},
  },
});

function makeHost(clock: ManualClock, machine: AnyStateMachine = waiter) {
  const records = new Map<string, ActorRecord>();
  const warnings: string[] = [];
  const store = {
    put: async (record: ActorRecord) => void records.set(record.id, structuredClone(record)),
  } as unknown as LowdbSnapshotStore;
  const host = new ActorHost({
    machines: { a2aFlow: machine, collaborate: machine },
    machineVersions: { a2aFlow: 1, collaborate: 1 },
    now: clock.now,
    scheduler: clock,
    warn: (message) => warnings.push(message),
    onEmitted: () => {},
    earlierPosts: new EarlierPosts({
      nonceWindowMs: 60_000,
      now: clock.now,
      botIdOf: () => undefined,
      warn: (message) => warnings.push(message),
    }),
    store: () => store,
    stopping: () => false,
    landed: (write) => write,
    onPersisted: () => {},
  });
  host.timers.start();
  return { host, records, warnings };
}

type WaiterSnapshot = { value: unknown; context: { childDone: boolean } };
const state = (host: ActorHost, id: string) => host.hosted.get(id)?.actor.getSnapshot() as WaiterSnapshot;

/** The record of a waiter started at T0 and stopped at T0 + 1 s (stored as the runtime stores it). */
async function storedAtOneSecond(): Promise<ActorRecord> {
  const clock = new ManualClock(T0);
  const { host, records } = makeHost(clock);
  host.host("a2aFlow", "w", { input: {} });
  await clock.advance(1000);
  host.stopAll();
  const record = records.get("w");
  if (record === undefined) throw new Error("not stored");
  return record;
}

describe("ActorHost: XState after delays are durable", () => {
  it("stores each pending delay of a new actor (root and invoked child) with its wall-clock due time", async () => {
    const record = await storedAtOneSecond();
    expect(record.delayed?.map((d) => [d.source, d.target, d.dueAt]).sort()).toEqual(
      [
        [[], [], T0 + 3000],
        [["child"], ["child"], T0 + 2000],
      ].sort(),
    );
  });

  it("fires the restored delays at their original time, once each, and stores what is left", async () => {
    const record = await storedAtOneSecond();
    const clock = new ManualClock(T0 + 1500);
    const { host, records, warnings } = makeHost(clock);
    host.host("a2aFlow", "w", { ...record, snapshot: structuredClone(record.snapshot) });
    await clock.advance(T0 + 2000 - 1 - clock.now());
    expect(state(host, "w").context.childDone).toBe(false);
    await clock.advance(1);
    expect(state(host, "w").context.childDone).toBe(true);
    expect(records.get("w")?.delayed?.map((d) => d.dueAt)).toEqual([T0 + 3000]);
    await clock.advance(T0 + 3000 - 1 - clock.now());
    expect(state(host, "w").value).toEqual({ outer: "inner" });
    await clock.advance(1);
    expect(state(host, "w").value).toBe("late");
    expect(records.get("w")?.delayed).toBeUndefined();
    expect(clock.pending).toBe(0);
    expect(warnings).toEqual([]);
  });

  it("fires delays already overdue at the restart at once, once each", async () => {
    const record = await storedAtOneSecond();
    const clock = new ManualClock(T0 + 60_000);
    const { host, records } = makeHost(clock);
    host.host("a2aFlow", "w", { ...record, snapshot: structuredClone(record.snapshot) });
    await clock.advance(0);
    expect(state(host, "w")).toMatchObject({ value: "late", context: { childDone: true } });
    expect(records.get("w")?.delayed).toBeUndefined();
    expect(clock.pending).toBe(0);
  });

  it("hosts a dormant record when its earliest stored delay is due, not before", async () => {
    const record = await storedAtOneSecond();
    const clock = new ManualClock(T0 + 1000);
    const { host } = makeHost(clock);
    host.dormant.set("w", record);
    await clock.advance(999);
    expect(host.hosted.has("w")).toBe(false);
    await clock.advance(1);
    expect(host.dormant.has("w")).toBe(false);
    expect(state(host, "w").context.childDone).toBe(true);
    await clock.advance(1000);
    expect(state(host, "w").value).toBe("late");
  });

  it("drops a dormant record's wake-up when it leaves the dormant records", async () => {
    const record = await storedAtOneSecond();
    const clock = new ManualClock(T0 + 1000);
    const { host } = makeHost(clock);
    host.dormant.set("w", record);
    host.dormant.delete("w");
    await clock.advance(5000);
    expect(host.hosted.has("w")).toBe(false);
    expect(clock.pending).toBe(0);
  });
});

describe("ActorHost: an actor that fails", () => {
  it("is written as error, so a restart does not resume it to fail again", async () => {
    const brittle = setup({}).createMachine({
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
    const clock = new ManualClock(T0);
    const { host, records, warnings } = makeHost(clock, brittle);
    const entry = host.host("a2aFlow", "b", { input: {} });
    await clock.advance(0);
    expect(records.get("b")?.status).toBe("active");
    entry.actor.send({ type: "BREAK" });
    await clock.advance(0);
    expect(warnings).toContainEqual(expect.stringMatching(/actor b \(a2aFlow\) failed: the action broke/));
    expect(records.get("b")?.status).toBe("error");
    expect(host.hosted.has("b")).toBe(false);
  });
});
