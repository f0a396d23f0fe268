// The tracker keeps XState's own rules for delayed events across a restore: due-time order, the
// actor an event was scheduled for, actor refs in payloads, two events under one id.
import { describe, expect, it } from "vitest";
import {
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
import { append, type Log, logOf, note, persist, start, T0 } from "./trackedActor.js";

describe("trackDelays: overdue events after a restore", () => {
  const race = setup({
    types: { context: {} as Log },
    actions: { note: assign(append) },
  }).createMachine({
    context: { log: [] },
    entry: [
      raise({ type: "LATE" }, { delay: 5000 }),
      raise({ type: "EARLY" }, { delay: 1000 }),
      raise({ type: "TIE_A" }, { delay: 3000 }),
      raise({ type: "TIE_B" }, { delay: 3000 }),
      raise({ type: "NOT_YET" }, { delay: 9000 }),
    ],
    on: {
      LATE: { actions: note("LATE") },
      EARLY: { actions: note("EARLY") },
      TIE_A: { actions: note("TIE_A") },
      TIE_B: { actions: note("TIE_B") },
      NOT_YET: { actions: note("NOT_YET") },
    },
  });

  it("are delivered in due-time order, ties in scheduling order, before any that is not yet due", () => {
    const stored = persist(start(race, T0));
    expect(
      stored.delayed.map((r) => r.event.type),
      "stored in scheduling order",
    ).toEqual(["LATE", "EARLY", "TIE_A", "TIE_B", "NOT_YET"]);
    const run = start(race, T0 + 6000, stored);
    run.clock.increment(0);
    expect(logOf(run.actor)).toEqual(["EARLY", "TIE_A", "TIE_B", "LATE"]);
    run.clock.set(T0 + 9000);
    expect(logOf(run.actor)).toEqual(["EARLY", "TIE_A", "TIE_B", "LATE", "NOT_YET"]);
    run.actor.stop();
  });
});

describe("trackDelays: two events scheduled under one id", () => {
  const twice = setup({
    types: { context: {} as Log, events: {} as { type: "AGAIN" } | { type: "CANCEL" } | { type: "TICK" } },
    actions: { note: assign(append) },
  }).createMachine({
    context: { log: [] },
    entry: raise({ type: "TICK" }, { id: "t", delay: 1000 }),
    on: {
      AGAIN: { actions: raise({ type: "TICK" }, { id: "t", delay: 1000 }) },
      CANCEL: { actions: cancel("t") },
      TICK: { actions: note("TICK") },
    },
  });

  it("both fire, as in XState, also after a restore", () => {
    const first = start(twice, T0);
    first.clock.set(T0 + 500);
    first.actor.send({ type: "AGAIN" });
    const stored = persist(first);
    expect(stored.delayed.map((r) => [r.dueAt - T0, r.cancellable])).toEqual([
      [1000, false],
      [1500, undefined],
    ]);
    const run = start(twice, T0 + 600, stored);
    run.clock.set(T0 + 2000);
    expect(logOf(run.actor)).toEqual(["TICK", "TICK"]);
    run.actor.stop();
  });

  it("cancel(id) cancels only the second, as in XState, also after a restore", () => {
    const first = start(twice, T0);
    first.clock.set(T0 + 500);
    first.actor.send({ type: "AGAIN" });
    const run = start(twice, T0 + 600, persist(first));
    run.actor.send({ type: "CANCEL" });
    run.clock.set(T0 + 2000);
    expect(logOf(run.actor)).toEqual(["TICK"]);
    run.actor.stop();
  });

  it("once the first has fired, cancel(id) reaches neither, as in XState's scheduler", () => {
    const first = start(twice, T0);
    first.clock.set(T0 + 500);
    first.actor.send({ type: "AGAIN" });
    first.clock.set(T0 + 1000);
    expect(logOf(first.actor)).toEqual(["TICK"]);
    const stored = persist(first);
    expect(stored.delayed.map((r) => r.cancellable)).toEqual([false]);
    const run = start(twice, T0 + 1200, stored);
    run.actor.send({ type: "CANCEL" });
    run.clock.set(T0 + 2000);
    expect(logOf(run.actor)).toEqual(["TICK", "TICK"]);
    run.actor.stop();
  });
});

describe("trackDelays: the actor an event was scheduled for", () => {
  const listener = (name: string) =>
    setup({}).createMachine({ on: { PING: { actions: sendParent({ type: name }) } } });
  const root = setup({
    types: {
      context: {} as Log,
      events: {} as { type: "REPLACE" } | { type: "FIRST_HEARD" } | { type: "SECOND_HEARD" },
    },
    actions: { note: assign(append) },
    actors: { first: listener("FIRST_HEARD"), second: listener("SECOND_HEARD") },
  }).createMachine({
    context: { log: [] },
    entry: [spawnChild("first", { id: "child" }), sendTo("child", { type: "PING" }, { delay: 1000 })],
    on: {
      REPLACE: { actions: [stopChild("child"), spawnChild("second", { id: "child" })] },
      FIRST_HEARD: { actions: note("first") },
      SECOND_HEARD: { actions: note("second") },
    },
  });

  it("is dropped when that actor was stopped, though another took its id (XState drops it)", () => {
    const first = start(root, T0);
    expect(first.tracker.pending()).toHaveLength(1);
    first.actor.send({ type: "REPLACE" });
    expect(first.tracker.pending()).toEqual([]);
    const run = start(root, T0 + 500, persist(first));
    run.clock.set(T0 + 2000);
    expect(logOf(run.actor)).toEqual([]);
    run.actor.stop();
  });
});

describe("trackDelays: actor refs in a payload", () => {
  const echo = setup({}).createMachine({
    on: {
      PING: {
        actions: sendTo(({ event }) => (event as unknown as { origin: AnyActorRef }).origin, {
          type: "PONG",
        }),
      },
    },
  });
  const pinger = setup({
    types: { context: {} as Log },
    actions: { note: assign(append) },
    actors: { echo },
  }).createMachine({
    context: { log: [] },
    invoke: { src: "echo", id: "echo" },
    entry: sendTo("echo", ({ self }) => ({ type: "PING", origin: self }), { delay: 1000 }),
    on: { PONG: { actions: note("PONG") } },
  });

  it("are stored by their place in the tree and revived as those actors", () => {
    const stored = persist(start(pinger, T0));
    expect(stored.delayed[0]?.event).toEqual({
      type: "PING",
      origin: { xstate$$type: 1, id: expect.any(String) as unknown, path: [] },
    });
    const run = start(pinger, T0 + 2000, stored);
    run.clock.increment(0);
    expect(run.actor.getSnapshot().status).toBe("active");
    expect(logOf(run.actor)).toEqual(["PONG"]);
    run.actor.stop();
  });

  // The origin is a child that is stopped before the event falls due; the receiver reports what it got.
  const reporter = setup({}).createMachine({
    on: {
      PING: {
        actions: sendParent(({ event }) => {
          const origin = (event as unknown as { origin?: AnyActorRef }).origin;
          return { type: "GOT", origin: origin === undefined ? "nothing" : origin.getSnapshot().status };
        }),
      },
    },
  });
  const relay = setup({
    types: {
      context: {} as Log,
      events: {} as { type: "SEND" } | { type: "STOP_ORIGIN" } | { type: "GOT"; origin: string },
    },
    actors: { reporter, origin: setup({}).createMachine({}) },
  }).createMachine({
    context: { log: [] },
    invoke: [
      { src: "reporter", id: "reporter" },
      { src: "origin", id: "origin" },
    ],
    on: {
      SEND: {
        actions: sendTo(
          "reporter",
          ({ self }) => ({ type: "PING", origin: self.getSnapshot().children.origin as AnyActorRef }),
          { delay: 1000 },
        ),
      },
      STOP_ORIGIN: { actions: stopChild("origin") },
      GOT: { actions: assign({ log: ({ event }) => [`origin ${event.origin}`] }) },
    },
  });

  it("one that stopped since is stored without its place and revived as a stopped actor", () => {
    const first = start(relay, T0);
    first.actor.send({ type: "SEND" });
    expect(first.tracker.pending()[0]?.event).toMatchObject({ origin: { path: ["origin"] } });
    first.actor.send({ type: "STOP_ORIGIN" });
    const stored = persist(first);
    expect(stored.delayed[0]?.event).toEqual({ type: "PING", origin: { xstate$$type: 1, id: "origin" } });
    const run = start(relay, T0 + 2000, stored);
    run.clock.increment(0);
    expect(logOf(run.actor)).toEqual(["origin stopped"]);
    run.actor.stop();
  });

  it("one outside the tree is refused when the event is stored, naming the event and the actor", () => {
    const outsider = createActor(setup({}).createMachine({}), { id: "outsider" }).start();
    const carrier = setup({}).createMachine({
      id: "carrier",
      entry: raise({ type: "CARRY", ref: outsider }, { delay: 1000 }),
    });
    const run = start(carrier, T0);
    expect(() => run.tracker.pending()).toThrow(
      /delayed event "CARRY" of the root actor "x:\d+" \(machine "carrier"\) cannot be stored: it holds a reference to actor "outsider", which is not in the actor's tree/,
    );
    run.actor.stop();
    outsider.stop();
  });
});
