import { describe, expect, it } from "vitest";
import {
  SimulatedClock,
  assign,
  cancel,
  createActor,
  raise,
  sendParent,
  sendTo,
  setup,
  spawnChild,
  stopChild,
  type AnyActorRef,
} from "xstate";
import type { DelayedEventRecord } from "../../src/persistence/actorRecord.js";
import { trackDelays } from "../../src/durable/durableDelays.js";
import { append, type Log, logOf, note, persist, start, T0 } from "./trackedActor.js";

const reminder = setup({
  types: { context: {} as Log, events: {} as { type: "ANSWER" } },
  actions: { note: assign(append) },
  delays: { responseTimeout: () => 5000 },
}).createMachine({
  id: "reminder",
  context: { log: [] },
  initial: "waiting",
  states: {
    waiting: {
      after: { 3000: { target: "reminded", actions: note("after 3000") } },
      on: { ANSWER: "answered" },
    },
    reminded: {
      after: { responseTimeout: { target: "gaveUp", actions: note("responseTimeout") } },
      on: { ANSWER: "answered" },
    },
    answered: {},
    gaveUp: {},
  },
});

describe("trackDelays: after as a number and as a named delay", () => {
  it("lists a pending after event with its wall-clock due time, paths and XState's id", () => {
    const run = start(reminder, T0);
    run.clock.set(T0 + 1000);
    expect(
      run.tracker.pending(),
      "XState no longer routes after-events through system.scheduler.schedule",
    ).toEqual([
      {
        id: "xstate.after.3000.reminder.waiting",
        source: [],
        target: [],
        event: { type: "xstate.after.3000.reminder.waiting" },
        dueAt: T0 + 3000,
      },
    ]);
    run.actor.stop();
  });

  it("without restore, a restored actor never fires its after transition (statelyai/xstate#5331)", () => {
    const stored = persist(start(reminder, T0));
    const clock = new SimulatedClock();
    clock.set(T0 + 1000);
    const actor = createActor(reminder, { clock, snapshot: stored.snapshot as never }).start();
    clock.set(T0 + 60_000);
    expect(
      actor.getSnapshot().value,
      "XState now restores delayed events itself (statelyai/xstate#5331 fixed?): restore() would schedule each one twice",
    ).toBe("waiting");
    actor.stop();
  });

  it("restarted 1 s later, fires at the original wall-clock time, once", () => {
    const first = start(reminder, T0);
    first.clock.set(T0 + 1000);
    const run = start(reminder, T0 + 2000, persist(first));
    expect(run.restored).toEqual({ skipped: [] });
    run.clock.set(T0 + 2999);
    expect(run.actor.getSnapshot().value).toBe("waiting");
    run.clock.set(T0 + 3000);
    expect(run.actor.getSnapshot().value).toBe("reminded");
    expect(logOf(run.actor)).toEqual(["after 3000"]);
    // The next delay is XState's own, scheduled on the new clock and followed too.
    expect(run.tracker.pending().map((r) => [r.id, r.dueAt])).toEqual([
      ["xstate.after.responseTimeout.reminder.reminded", T0 + 8000],
    ]);
    run.clock.set(T0 + 60_000);
    expect(logOf(run.actor)).toEqual(["after 3000", "responseTimeout"]);
    expect(run.tracker.pending()).toEqual([]);
    run.actor.stop();
  });

  it("restarted after the due time, fires at once, once", () => {
    const stored = persist(start(reminder, T0));
    const run = start(reminder, T0 + 4000, stored);
    expect(run.actor.getSnapshot().value).toBe("waiting");
    run.clock.increment(0);
    expect(run.actor.getSnapshot().value).toBe("reminded");
    run.clock.set(T0 + 8999);
    expect(logOf(run.actor)).toEqual(["after 3000"]);
    run.clock.set(T0 + 9000);
    expect(logOf(run.actor)).toEqual(["after 3000", "responseTimeout"]);
    run.actor.stop();
  });

  it("keeps a named delay's due time across two restarts before it fires", () => {
    const first = start(reminder, T0);
    first.clock.set(T0 + 3000);
    first.clock.set(T0 + 3500);
    const second = start(reminder, T0 + 5000, persist(first));
    const stored = persist(second);
    expect(stored.delayed).toEqual([
      expect.objectContaining({ id: "xstate.after.responseTimeout.reminder.reminded", dueAt: T0 + 8000 }),
    ]);
    const third = start(reminder, T0 + 6000, stored);
    third.clock.set(T0 + 7999);
    expect(third.actor.getSnapshot().value).toBe("reminded");
    third.clock.set(T0 + 8000);
    expect(third.actor.getSnapshot().value).toBe("gaveUp");
    expect(logOf(third.actor)).toEqual(["after 3000", "responseTimeout"]);
    third.actor.stop();
  });

  it("a restored delay is cancelled when its state is left before it is due", () => {
    const run = start(reminder, T0 + 1000, persist(start(reminder, T0)));
    const before = run.changes();
    run.clock.set(T0 + 2000);
    run.actor.send({ type: "ANSWER" });
    expect(run.tracker.pending(), "leaving the state no longer cancels a restored after-event").toEqual([]);
    expect(run.changes()).toBe(before + 1);
    run.clock.set(T0 + 60_000);
    expect(run.actor.getSnapshot().value).toBe("answered");
    expect(logOf(run.actor)).toEqual([]);
    run.actor.stop();
  });

  it("calls onChange on schedule, cancel, delivery and once per restore", () => {
    const run = start(reminder, T0);
    expect(run.changes()).toBe(1); // waiting's after 3000
    run.clock.set(T0 + 3000); // delivered, then reminded's delay scheduled
    expect(run.changes()).toBe(3);
    run.actor.send({ type: "ANSWER" }); // cancelled
    expect(run.changes()).toBe(4);
    run.actor.stop();

    const restored = start(reminder, T0 + 1000, persist(start(reminder, T0)));
    expect(restored.changes()).toBe(1);
    restored.actor.stop();
  });
});

describe("trackDelays: nested and parallel states", () => {
  const machine = setup({
    types: { context: {} as Log },
    actions: { note: assign(append) },
    delays: { slow: 2000 },
  }).createMachine({
    id: "m",
    context: { log: [] },
    initial: "work",
    states: {
      work: {
        type: "parallel",
        after: { 10_000: { target: "timedOut", actions: note("outer") } },
        states: {
          a: {
            initial: "a1",
            states: { a1: { after: { 1000: { target: "a2", actions: note("a") } } }, a2: {} },
          },
          b: {
            initial: "b1",
            states: { b1: { after: { slow: { target: "b2", actions: note("b") } } }, b2: {} },
          },
        },
      },
      timedOut: {},
    },
  });

  it("restores each region's and the parent's delay at its own time", () => {
    const first = start(machine, T0);
    first.clock.set(T0 + 500);
    const stored = persist(first);
    expect(stored.delayed.map((r) => [r.id, r.dueAt]).sort()).toEqual([
      ["xstate.after.1000.m.work.a.a1", T0 + 1000],
      ["xstate.after.10000.m.work", T0 + 10_000],
      ["xstate.after.slow.m.work.b.b1", T0 + 2000],
    ]);
    const run = start(machine, T0 + 1500, stored);
    run.clock.increment(0);
    expect(logOf(run.actor)).toEqual(["a"]);
    run.clock.set(T0 + 2000);
    expect(run.actor.getSnapshot().value).toEqual({ work: { a: "a2", b: "b2" } });
    run.clock.set(T0 + 9999);
    expect(logOf(run.actor)).toEqual(["a", "b"]);
    run.clock.set(T0 + 10_000);
    expect(run.actor.getSnapshot().value).toBe("timedOut");
    expect(logOf(run.actor)).toEqual(["a", "b", "outer"]);
    run.actor.stop();
  });
});

describe("trackDelays: invoked and spawned children", () => {
  const timer = setup({}).createMachine({
    initial: "running",
    states: { running: { after: { 3000: "rang" } }, rang: { type: "final" } },
  });
  const worker = setup({ actors: { timer } }).createMachine({
    initial: "working",
    states: {
      working: { invoke: { id: "timer", src: "timer", onDone: "done" }, after: { 5000: "late" } },
      done: { type: "final" },
      late: { type: "final" },
    },
  });
  const parent = setup({
    types: { context: {} as Log },
    actors: { worker },
    actions: { note: assign(append) },
  }).createMachine({
    context: { log: [] },
    initial: "busy",
    states: {
      busy: {
        invoke: { id: "worker", src: "worker", onDone: { target: "finished", actions: note("done") } },
      },
      finished: {},
    },
  });

  it("restores the delays of an invoked child and grandchild by their child-id paths", () => {
    const first = start(parent, T0);
    first.clock.set(T0 + 1000);
    const stored = persist(first);
    expect(stored.delayed.map(({ source, target, dueAt }) => ({ source, target, dueAt }))).toEqual([
      { source: ["worker", "timer"], target: ["worker", "timer"], dueAt: T0 + 3000 },
      { source: ["worker"], target: ["worker"], dueAt: T0 + 5000 },
    ]);
    const run = start(parent, T0 + 2000, stored);
    expect(run.restored).toEqual({ skipped: [] });
    run.clock.set(T0 + 2999);
    expect(run.actor.getSnapshot().value).toBe("busy");
    run.clock.set(T0 + 3000);
    expect(run.actor.getSnapshot().value).toBe("finished");
    // The worker left "working": its own 5000 ms delay was cancelled with it, nothing is left.
    expect(run.tracker.pending()).toEqual([]);
    run.clock.set(T0 + 60_000);
    expect(logOf(run.actor)).toEqual(["done"]);
    run.actor.stop();
  });

  const pinger = setup({}).createMachine({
    entry: sendParent({ type: "PING" }, { delay: 2000, id: "ping" }),
    on: { HUSH: { actions: cancel("ping") } },
    initial: "counting",
    states: { counting: { after: { 3000: "over" } }, over: { type: "final" } },
  });
  const host = setup({
    types: { context: {} as Log, events: {} as { type: "PING" } | { type: "HUSH" } },
    actors: { pinger },
    actions: { note: assign(append) },
  }).createMachine({
    context: { log: [] },
    entry: spawnChild("pinger", { id: "pinger" }),
    on: {
      PING: { actions: note("ping") },
      HUSH: { actions: sendTo("pinger", { type: "HUSH" }) },
    },
  });

  it("restores a spawned child's after and its delayed sendParent (child to root)", () => {
    const first = start(host, T0);
    first.clock.set(T0 + 1000);
    const stored = persist(first);
    expect(stored.delayed).toEqual([
      { id: "ping", source: ["pinger"], target: [], event: { type: "PING" }, dueAt: T0 + 2000 },
      expect.objectContaining({ source: ["pinger"], target: ["pinger"], dueAt: T0 + 3000 }),
    ]);
    const run = start(host, T0 + 1500, stored);
    run.clock.set(T0 + 1999);
    expect(logOf(run.actor)).toEqual([]);
    run.clock.set(T0 + 2000);
    expect(logOf(run.actor)).toEqual(["ping"]);
    run.clock.set(T0 + 3000);
    const pingerRef = (run.actor.getSnapshot() as { children: Record<string, AnyActorRef> }).children.pinger;
    expect(pingerRef?.getSnapshot().status).toBe("done");
    run.clock.set(T0 + 60_000);
    expect(logOf(run.actor)).toEqual(["ping"]);
    run.actor.stop();
  });

  it("a restored delayed send is cancelled by its id", () => {
    const run = start(host, T0 + 1000, persist(start(host, T0)));
    run.actor.send({ type: "HUSH" });
    expect(run.tracker.pending().map((r) => r.id)).not.toContain("ping");
    run.clock.set(T0 + 60_000);
    expect(logOf(run.actor)).toEqual([]);
    run.actor.stop();
  });

  it("tells apart the same after event of two children of one machine, and drops a stopped child's", () => {
    // XState builds one event object per `after` of a state node: both children schedule the same object.
    const twins = setup({ types: { events: {} as { type: "STOP_B" } }, actors: { timer } }).createMachine({
      entry: [spawnChild("timer", { id: "a" }), spawnChild("timer", { id: "b" })],
      on: { STOP_B: { actions: stopChild("b") } },
    });
    const run = start(twins, T0);
    expect(run.tracker.pending().map((r) => r.source)).toEqual([["a"], ["b"]]);
    run.actor.send({ type: "STOP_B" }); // a stopped child's delays go with it
    expect(run.tracker.pending().map((r) => r.source)).toEqual([["a"]]);
    run.clock.set(T0 + 3000);
    expect(run.tracker.pending()).toEqual([]);
    run.actor.stop();
  });

  it("forgets a delivered event that leaves no state (a targetless after, twins of one machine)", () => {
    const ticker = setup({ types: { context: {} as Log }, actions: { note: assign(append) } }).createMachine({
      context: { log: [] },
      after: { 1000: { actions: note("tick") } },
    });
    const twins = setup({ actors: { ticker } }).createMachine({
      entry: [spawnChild("ticker", { id: "a" }), spawnChild("ticker", { id: "b" })],
    });
    const first = start(twins, T0);
    first.clock.set(T0 + 1000);
    const stored = persist(first);
    expect(
      stored.delayed,
      "XState no longer reports a delayed event's delivery to inspection (@xstate.event with the scheduled object): " +
        "a delivered event stays pending and a restart would deliver it again",
    ).toEqual([]);
    const run = start(twins, T0 + 2000, stored);
    run.clock.set(T0 + 60_000);
    const children = (run.actor.getSnapshot() as { children: Record<string, AnyActorRef> }).children;
    expect([logOf(children.a as AnyActorRef), logOf(children.b as AnyActorRef)]).toEqual([
      ["tick"],
      ["tick"],
    ]);
    run.actor.stop();
  });

  it("drops a stopped child's delayed send that has no id", () => {
    const sender = setup({}).createMachine({ entry: sendParent({ type: "PING" }, { delay: 100 }) });
    const root = setup({ types: { events: {} as { type: "STOP" } }, actors: { sender } }).createMachine({
      entry: spawnChild("sender", { id: "sender" }),
      on: { STOP: { actions: stopChild("sender") } },
    });
    const run = start(root, T0);
    expect(run.tracker.pending()).toEqual([
      { id: "durable.delayed.0", source: ["sender"], target: [], event: { type: "PING" }, dueAt: T0 + 100 },
    ]);
    run.actor.send({ type: "STOP" });
    expect(run.tracker.pending()).toEqual([]);
    run.actor.stop();
  });

  it("skips records of a child that has finished since", () => {
    const early = start(host, T0);
    early.clock.set(T0 + 1000);
    const { delayed } = persist(early);
    const late = start(host, T0);
    late.clock.set(T0 + 4000); // the pinger is done, still listed among the children
    const { snapshot } = persist(late);
    const run = start(host, T0 + 5000, { snapshot, delayed });
    expect(run.restored).toEqual({ skipped: delayed });
    expect(run.tracker.pending()).toEqual([]);
    run.actor.stop();
  });

  it("after the root is stopped, pending() still lists every delay of the tree", () => {
    const run = start(parent, T0);
    const before = run.tracker.pending();
    expect(before).toHaveLength(2);
    run.actor.stop();
    expect(
      run.tracker.pending(),
      "XState now cancels the children's delays before the root is marked stopped: pending() after stop() lost them",
    ).toEqual(before);
  });
});

describe("trackDelays: what cannot be restored", () => {
  const machine = setup({
    types: {
      context: {} as Log & { other?: AnyActorRef },
      events: {} as { type: "GO" } | { type: "SELF"; payload: { n: number } },
    },
  }).createMachine({
    context: ({ input }) => ({ log: [], other: (input as { other?: AnyActorRef } | undefined)?.other }),
    initial: "idle",
    states: {
      idle: {
        on: {
          GO: {
            actions: [
              raise({ type: "SELF", payload: { n: 1 } }, { delay: 100 }),
              sendTo(({ context }) => context.other as AnyActorRef, { type: "OUT" }, { delay: 100 }),
            ],
          },
        },
      },
    },
  });

  it("generates an id for a delayed event without one", () => {
    const clock = new SimulatedClock();
    clock.set(T0);
    const actor = createActor(machine, { clock });
    const tracker = trackDelays(actor, { now: () => clock.now() });
    actor.start();
    actor.send({ type: "GO" });
    expect(tracker.pending()[0]).toEqual({
      id: "durable.delayed.0",
      source: [],
      target: [],
      event: { type: "SELF", payload: { n: 1 } },
      dueAt: T0 + 100,
    });
    actor.stop();
  });

  it("refuses to store an event sent to an actor outside the tree, naming both", () => {
    const other = createActor(setup({}).createMachine({}), { id: "elsewhere" }).start();
    const clock = new SimulatedClock();
    clock.set(T0);
    const actor = createActor(machine, { clock, input: { other }, id: "order-42" });
    const tracker = trackDelays(actor, { now: () => clock.now() });
    actor.start();
    actor.send({ type: "GO" });
    expect(() => tracker.pending()).toThrow(
      'delayed event "OUT" of the root actor "order-42" cannot be stored: it is sent to actor "elsewhere", which is not in the actor\'s tree',
    );
    actor.stop();
    other.stop();
  });

  it("keeps a restored record's due time exactly, though the clock moves between calls", () => {
    const stored = persist(start(reminder, T0));
    const clock = new SimulatedClock();
    clock.set(T0 + 1000);
    const actor = createActor(reminder, { clock, snapshot: stored.snapshot as never });
    let drift = 0;
    const tracker = trackDelays(actor, { now: () => clock.now() + drift++ });
    actor.start();
    tracker.restore(stored.delayed);
    expect(tracker.pending()).toEqual(stored.delayed);
    actor.stop();
  });

  it("returns records whose actor is gone or that are already pending, and schedules the rest", () => {
    const stored = persist(start(reminder, T0));
    const gone = { ...stored.delayed[0], source: ["gone"] } as DelayedEventRecord;
    const run = start(reminder, T0 + 1000, {
      ...stored,
      delayed: [gone, ...stored.delayed, ...stored.delayed],
    });
    expect(run.restored).toEqual({ skipped: [gone, stored.delayed[0]] });
    run.clock.set(T0 + 3000);
    expect(logOf(run.actor)).toEqual(["after 3000"]);
    run.actor.stop();
  });

  it("rejects malformed records, naming each problem, before scheduling any", () => {
    const run = start(reminder, T0);
    const bad = {
      id: "",
      source: "x",
      target: [],
      event: {},
      dueAt: Number.NaN,
    } as unknown as DelayedEventRecord;
    expect(() => run.tracker.restore([bad])).toThrow(
      "restore: delayed event record 0 is invalid: id is not a non-empty string; source is not a list of child ids; event has no string type; dueAt is not a finite number",
    );
    run.actor.stop();
  });

  it("refuses to restore before the actor has started", () => {
    const stored = persist(start(reminder, T0));
    const clock = new SimulatedClock();
    clock.set(T0 + 1000);
    const actor = createActor(reminder, { clock, snapshot: stored.snapshot as never });
    const tracker = trackDelays(actor, { now: () => clock.now() });
    actor.send({ type: "ANSWER" }); // queued, not a start
    expect(() => tracker.restore(stored.delayed)).toThrow("restore: call it after actor.start(), not before");
    actor.start();
    expect(
      () => tracker.restore(stored.delayed),
      "XState no longer reports an actor's start to inspection (@xstate.event xstate.init)",
    ).not.toThrow();
    actor.stop();
  });

  it("refuses to track one actor twice", () => {
    const actor = createActor(reminder);
    trackDelays(actor, { now: () => 0 });
    expect(() => trackDelays(actor, { now: () => 0 })).toThrow(/delays of actor .* are already tracked/);
  });

  it("says which pending event cannot be stored as JSON", () => {
    const bigint = setup({}).createMachine({ entry: raise({ type: "BIG", size: 1n }, { delay: 100 }) });
    const clock = new SimulatedClock();
    const actor = createActor(bigint, { clock });
    const tracker = trackDelays(actor, { now: () => clock.now() });
    actor.start();
    expect(() => tracker.pending()).toThrow(
      /delayed event "BIG" of the root actor "x:\d+" cannot be stored: it is not JSON/,
    );
    actor.stop();
  });
});
