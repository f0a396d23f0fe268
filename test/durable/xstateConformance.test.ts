// Conformance of the durable host with plain XState across restarts. Each scenario runs a machine as a
// plain XState actor, never interrupted, and on a durable host (fake timers) that is stopped and
// started again: (i) not at all, (ii) while its delays are pending and not yet due,
// (iii) for longer than every pending delay. The host must log the same effects in the same order and
// end in the same state; with no restart or a restart before any due time, at the same times too. A
// restart across due times delivers the overdue events at start, so there only the order is compared.
// Each host run is made four times: on the memory store and on the lowdb store, each with the actor
// kept hosted and with it dormant (its record) as soon as it is idle, hosted again at each event and
// due time.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  assign,
  cancel,
  fromPromise,
  raise,
  sendParent,
  sendTo,
  setup,
  spawnChild,
  stopChild,
  type AnyActorRef,
} from "xstate";
import {
  cases,
  conforms,
  createEffectLog,
  runHost,
  runXState,
  type Scenario,
  type Step,
  T0,
} from "./conformance/harness.js";
import { raceMachine, type RaceInput } from "./conformance/race.js";
import { createDurableHost, createMemoryStore, type SnapshotStore } from "../../src/durable/index.js";

const log = createEffectLog();
const note = (_: unknown, params: { label: string }) => log.note(params.label);

// packages/core/test/after.test.ts › "delayed transitions" › "should transition after delay", with two
// parallel regions (packages/core/test/actions.test.ts › "should call transition actions in document
// order for same-level parallel regions"): region `slow` is entered first and schedules its 5000 ms
// delay first; `fast`'s 1000 ms delay falls due first. The first to fire wins.
const race = raceMachine((label) => log.note(label));
const raceInput: RaceInput = { fastMs: 1000, slowMs: 5000 };

describe("a. due-time order of after transitions in parallel regions", () => {
  const s: Scenario = { machine: race, input: raceInput, log };
  const expected = {
    effects: ["fast", "slow"],
    final: { status: "done", value: { slow: "lost", fast: "won" }, context: { winner: "fast" } },
  };

  it.each(
    cases({
      none: [{ advance: 6000 }],
      pending: [{ advance: 500 }, { restart: 200 }, { advance: 5300 }],
      across: [{ advance: 500 }, { restart: 6000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, expected);
  });
});

// packages/core/test/interpreter.test.ts › "send with delay" › "can send an event after a delay", and
// packages/core/test/actions.test.ts › "raise" › "should be able to send a delayed event to itself":
// here two delayed raises, LATE (5000 ms) raised before EARLY (1000 ms).
const twoRaises = setup({
  types: { events: {} as { type: "EARLY" } | { type: "LATE" } },
  actions: { note },
}).createMachine({
  entry: [raise({ type: "LATE" }, { delay: 5000 }), raise({ type: "EARLY" }, { delay: 1000 })],
  on: {
    EARLY: { actions: { type: "note", params: { label: "EARLY" } } },
    LATE: { actions: { type: "note", params: { label: "LATE" } } },
  },
});

describe("b. delayed raises arrive by due time, ties in the order raised", () => {
  const s: Scenario = { machine: twoRaises, log };

  it.each(
    cases({
      none: [{ advance: 6000 }],
      pending: [{ advance: 500 }, { restart: 200 }, { advance: 5300 }],
      across: [{ advance: 500 }, { restart: 6000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, { effects: ["EARLY", "LATE"], final: { status: "active" } });
  });

  const tie = setup({
    types: { events: {} as { type: "FIRST" } | { type: "SECOND" } },
    actions: { note },
  }).createMachine({
    entry: [raise({ type: "FIRST" }, { delay: 1000 }), raise({ type: "SECOND" }, { delay: 1000 })],
    on: {
      FIRST: { actions: { type: "note", params: { label: "FIRST" } } },
      SECOND: { actions: { type: "note", params: { label: "SECOND" } } },
    },
  });

  it.each(
    cases({
      none: [{ advance: 2000 }],
      pending: [{ advance: 500 }, { restart: 200 }, { advance: 1300 }],
      across: [{ advance: 500 }, { restart: 2000 }],
    }),
  )("tie (same due time) — %s", async (_name, script, compare) => {
    await conforms({ machine: tie, log }, script, compare, {
      effects: ["FIRST", "SECOND"],
      final: { status: "active" },
    });
  });
});

// packages/core/test/after.test.ts › "delayed transitions" › "should execute an after transition after
// starting from a persisted state": down across the first due time only. The overdue delay fires at
// start, the other at its own time; only the overdue one's time differs from plain XState.
describe("c. one delay overdue at start, one not yet due", () => {
  const script: Step[] = [{ advance: 500 }, { restart: 1500 }, { advance: 4000 }];

  it("after transitions: fast fires at start (2000 ms), slow at its own time", async () => {
    const s: Scenario = { machine: race, input: raceInput, log };
    const xstate = await runXState(s, script);
    expect(xstate.effects).toEqual([
      { label: "fast", at: 1000 },
      { label: "slow", at: 5000 },
    ]);
    for (const dormantAfterMs of [Infinity, 0]) {
      const host = await runHost(s, script, dormantAfterMs);
      expect(host.effects).toEqual([
        { label: "fast", at: 2000 },
        { label: "slow", at: 5000 },
      ]);
      expect(host.final).toEqual(xstate.final);
    }
  });

  it("delayed raises: EARLY arrives at start (2000 ms), LATE at its own time", async () => {
    const s: Scenario = { machine: twoRaises, log };
    const xstate = await runXState(s, script);
    expect(xstate.effects).toEqual([
      { label: "EARLY", at: 1000 },
      { label: "LATE", at: 5000 },
    ]);
    for (const dormantAfterMs of [Infinity, 0]) {
      const host = await runHost(s, script, dormantAfterMs);
      expect(host.effects).toEqual([
        { label: "EARLY", at: 2000 },
        { label: "LATE", at: 5000 },
      ]);
      expect(host.final).toEqual(xstate.final);
    }
  });
});

// packages/core/test/actions.test.ts › "sendTo" › "should not attempt to deliver a delayed event to the
// spawned actor's ID that was stopped since the event was scheduled" and "… to the invoked actor's ID
// that was stopped since the event was scheduled": PING goes to the child that was `myChild` when it was
// sent; once that child is stopped, PING is dropped, and the child now called `myChild` never hears it.
describe("d. a delayed sendTo a stopped child is dropped, not given to the next child of that id", () => {
  const child1 = setup({ actions: { note } }).createMachine({
    on: { PING: { actions: { type: "note", params: { label: "child1 heard PING" } } } },
  });
  const child2 = setup({ actions: { note } }).createMachine({
    on: { PING: { actions: { type: "note", params: { label: "child2 heard PING" } } } },
  });
  const nobodyHears = { effects: [], final: { status: "active" } };
  // XState's development build warns of the PING sent to the stopped child.
  beforeEach(() => void vi.spyOn(console, "warn").mockImplementation(() => {}));
  afterEach(() => vi.restoreAllMocks());

  // As upstream: spawned, PING scheduled, stopped and replaced in one entry.
  const sameEntry = setup({ actors: { child1, child2 } }).createMachine({
    entry: [
      spawnChild("child1", { id: "myChild" }),
      sendTo("myChild", { type: "PING" }, { delay: 2000 }),
      stopChild("myChild"),
      spawnChild("child2", { id: "myChild" }),
    ],
  });

  it.each(
    cases({
      none: [{ advance: 3000 }],
      pending: [{ advance: 500 }, { restart: 500 }, { advance: 2000 }],
      across: [{ advance: 500 }, { restart: 3000 }],
    }),
  )("spawned, replaced in the same entry — %s", async (_name, script, compare) => {
    await conforms({ machine: sameEntry, log }, script, compare, nobodyHears);
  });

  // Replaced by a later event (SWAP), so that a restart falls between the replacement and the due time.
  const swapLater = setup({
    types: { events: {} as { type: "SWAP" } },
    actors: { child1, child2 },
  }).createMachine({
    entry: [spawnChild("child1", { id: "myChild" }), sendTo("myChild", { type: "PING" }, { delay: 2000 })],
    on: { SWAP: { actions: [stopChild("myChild"), spawnChild("child2", { id: "myChild" })] } },
  });

  it.each(
    cases({
      none: [{ advance: 500 }, { send: { type: "SWAP" } }, { advance: 2500 }],
      pending: [{ advance: 500 }, { send: { type: "SWAP" } }, { restart: 500 }, { advance: 2000 }],
      across: [{ advance: 500 }, { send: { type: "SWAP" } }, { restart: 3000 }],
    }),
  )("spawned, replaced by a later event — %s", async (_name, script, compare) => {
    await conforms({ machine: swapLater, log }, script, compare, nobodyHears);
  });

  // As upstream: invoked in b, PING scheduled on entering b; NEXT leaves b and invokes child2 in c.
  const invoked = setup({
    types: { events: {} as { type: "NEXT" } },
    actors: { child1, child2 },
  }).createMachine({
    initial: "b",
    states: {
      b: {
        entry: sendTo("myChild", { type: "PING" }, { delay: 2000 }),
        invoke: { src: "child1", id: "myChild" },
        on: { NEXT: "c" },
      },
      c: { invoke: { src: "child2", id: "myChild" } },
    },
  });

  it.each(
    cases({
      none: [{ advance: 500 }, { send: { type: "NEXT" } }, { advance: 2500 }],
      pending: [{ advance: 500 }, { send: { type: "NEXT" } }, { restart: 500 }, { advance: 2000 }],
      across: [{ advance: 500 }, { send: { type: "NEXT" } }, { restart: 3000 }],
    }),
  )("invoked, replaced by the next state's invoke — %s", async (_name, script, compare) => {
    await conforms({ machine: invoked, log }, script, compare, {
      effects: [],
      final: { status: "active", value: "c" },
    });
  });
});

// packages/core/test/invoke.test.ts › "should be able to receive a delayed event sent by the entry
// action of the invoking state": the delayed PING carries the parent's own ref, the child answers to it.
describe("e. an actor ref in a delayed event's payload", () => {
  const responder = setup({
    types: { events: {} as { type: "PING"; origin: AnyActorRef } },
  }).createMachine({
    on: { PING: { actions: sendTo(({ event }) => event.origin, { type: "PONG" }) } },
  });
  const asker = setup({
    types: { events: {} as { type: "PONG" } },
    actors: { responder },
    actions: { note },
  }).createMachine({
    initial: "asking",
    invoke: { src: "responder", id: "responder" },
    states: {
      asking: {
        entry: sendTo("responder", ({ self }) => ({ type: "PING", origin: self }), { delay: 2000 }),
        on: { PONG: { target: "answered", actions: { type: "note", params: { label: "PONG" } } } },
      },
      answered: { type: "final" },
    },
    output: { answeredBy: "responder" },
  });

  it.each(
    cases({
      none: [{ advance: 3000 }],
      pending: [{ advance: 500 }, { restart: 500 }, { advance: 2000 }],
      across: [{ advance: 500 }, { restart: 3000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms({ machine: asker, log }, script, compare, {
      effects: ["PONG"],
      final: { status: "done", value: "answered", output: { answeredBy: "responder" } },
    });
  });
});

// packages/core/test/actions.test.ts › "cancel" › "should cancel only the delayed event in the machine
// that scheduled it when canceling the event with the same ID in the machine that sent it first": here
// one machine raises TICK under the id "t" twice (at 0 and at 500 ms) without cancelling in between.
// XState keeps one timeout per id: the second schedule replaces the first's entry but does not clear
// its timeout, so both TICKs arrive; cancel("t") then clears the second timeout only.
describe("f. two delayed raises under the same id", () => {
  const ticker = setup({
    types: { events: {} as { type: "ARM" } | { type: "CANCEL" } | { type: "TICK" } },
    actions: { note },
  }).createMachine({
    entry: raise({ type: "TICK" }, { id: "t", delay: 1000 }),
    on: {
      ARM: { actions: raise({ type: "TICK" }, { id: "t", delay: 1000 }) },
      CANCEL: { actions: cancel("t") },
      TICK: { actions: { type: "note", params: { label: "TICK" } } },
    },
  });
  const s: Scenario = { machine: ticker, log };
  // The first timeout is no longer in XState's table, so stopping the host's actor does not clear it: it
  // fires into the stopped actor, and XState's development build warns.
  beforeEach(() => void vi.spyOn(console, "warn").mockImplementation(() => {}));
  afterEach(() => vi.restoreAllMocks());
  const arm: Step[] = [{ advance: 500 }, { send: { type: "ARM" } }];

  it.each(
    cases({
      none: [...arm, { advance: 2000 }],
      pending: [...arm, { advance: 200 }, { restart: 100 }, { advance: 1700 }],
      across: [...arm, { advance: 200 }, { restart: 2000 }],
    }),
  )("both are delivered — %s", async (_name, script, compare) => {
    await conforms(s, script, compare, { effects: ["TICK", "TICK"], final: { status: "active" } });
  });

  const armAndCancel: Step[] = [...arm, { advance: 100 }, { send: { type: "CANCEL" } }];

  it.each(
    cases({
      none: [...armAndCancel, { advance: 2000 }],
      pending: [...armAndCancel, { advance: 100 }, { restart: 100 }, { advance: 1700 }],
      across: [...armAndCancel, { advance: 100 }, { restart: 2000 }],
    }),
  )("cancel('t') at 600 ms stops the second only — %s", async (_name, script, compare) => {
    await conforms(s, script, compare, { effects: ["TICK"], final: { status: "active" } });
  });

  // The first timeout, when it fires, empties the id's entry, which is the second's by then: a later
  // cancel("t") finds nothing to clear.
  const cancelAfterFirst: Step[] = [...arm, { advance: 700 }, { send: { type: "CANCEL" } }];

  it.each(
    cases({
      none: [...cancelAfterFirst, { advance: 1000 }],
      pending: [...cancelAfterFirst, { advance: 100 }, { restart: 100 }, { advance: 800 }],
      across: [...cancelAfterFirst, { restart: 1000 }],
    }),
  )("cancel('t') after the first TICK (1200 ms) stops neither — %s", async (_name, script, compare) => {
    await conforms(s, script, compare, { effects: ["TICK", "TICK"], final: { status: "active" } });
  });
});

// packages/core/test/invoke.test.ts › "with machines" › "should emit onSnapshot": the parent logs each
// snapshot of its invoked child, which goes from a to b after 1000 ms. A restored child's snapshot is
// the one already logged: the host does not report it again.
describe("g. onSnapshot of an invoked child machine", () => {
  const stepper = setup({}).createMachine({
    initial: "a",
    states: { a: { after: { 1000: "b" } }, b: {} },
  });
  const watcher = setup({ actors: { stepper }, actions: { note } }).createMachine({
    invoke: {
      src: "stepper",
      id: "stepper",
      onSnapshot: {
        actions: { type: "note", params: ({ event }) => ({ label: String(event.snapshot.value) }) },
      },
    },
  });

  it.each(
    cases({
      none: [{ advance: 2000 }],
      pending: [{ advance: 500 }, { restart: 200 }, { advance: 1300 }],
      across: [{ advance: 500 }, { restart: 2000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms({ machine: watcher, log }, script, compare, {
      effects: ["a", "b"],
      final: { status: "active" },
    });
  });
});

// packages/core/test/spawnChild.test.ts › "spawnChild action" › "should accept `syncSnapshot` option": a
// spawned child's snapshots reach its parent as `xstate.snapshot.<id>` events, like onSnapshot's.
describe("g. snapshots of a spawned child with syncSnapshot", () => {
  const stepper = setup({}).createMachine({
    initial: "a",
    states: { a: { after: { 1000: "b" } }, b: {} },
  });
  const watcher = setup({ actors: { stepper }, actions: { note } }).createMachine({
    entry: spawnChild("stepper", { id: "stepper", syncSnapshot: true }),
    on: {
      "xstate.snapshot.stepper": {
        actions: {
          type: "note",
          params: ({ event }) => ({
            label: String((event as unknown as { snapshot: { value: unknown } }).snapshot.value),
          }),
        },
      },
    },
  });

  it.each(
    cases({
      none: [{ advance: 2000 }],
      pending: [{ advance: 500 }, { restart: 200 }, { advance: 1300 }],
      across: [{ advance: 500 }, { restart: 2000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms({ machine: watcher, log }, script, compare, {
      effects: ["a", "b"],
      final: { status: "active" },
    });
  });
});

// packages/core/test/actions.test.ts › "cancel" › "should be possible to cancel a raised delayed event".
describe("h. cancel by id across a restart", () => {
  const cancellable = setup({
    types: { events: {} as { type: "NEXT" } | { type: "RAISED" } | { type: "CANCEL" } },
    actions: { note },
  }).createMachine({
    initial: "a",
    states: {
      a: {
        on: {
          NEXT: { actions: raise({ type: "RAISED" }, { delay: 1000, id: "myId" }) },
          RAISED: { target: "b", actions: { type: "note", params: { label: "RAISED" } } },
          CANCEL: { actions: cancel("myId") },
        },
      },
      b: {},
    },
  });
  const s: Scenario = { machine: cancellable, log };
  const next: Step = { send: { type: "NEXT" } };
  const cancelIt: Step = { send: { type: "CANCEL" } };

  it.each([
    ["no restart", [next, { advance: 500 }, cancelIt, { advance: 2000 }]],
    [
      "a restart before the due time, then CANCEL",
      [next, { advance: 300 }, { restart: 200 }, cancelIt, { advance: 2000 }],
    ],
  ] satisfies Array<[string, Step[]]>)("cancelled: %s", async (_name, script) => {
    await conforms(s, script, "times", { effects: [], final: { status: "active", value: "a" } });
  });

  it("a restart across the due time: RAISED arrives at start, the later CANCEL finds nothing", async () => {
    const script: Step[] = [next, { advance: 300 }, { restart: 2000 }, cancelIt, { advance: 1000 }];
    await conforms(s, script, "labels", { effects: ["RAISED"], final: { status: "active", value: "b" } });
  });
});

// packages/core/test/interpreter.test.ts › "sendParent() event expressions" › "should resolve sendParent
// event expressions", here with a delay: the child's HELLO is scheduled by the child, for its parent.
describe("i. a delayed sendParent", () => {
  const greeter = setup({}).createMachine({
    entry: sendParent({ type: "HELLO" }, { delay: 2000 }),
  });
  const listener = setup({
    types: { context: {} as { heard: number }, events: {} as { type: "HELLO" } },
    actors: { greeter },
    actions: { note, count: assign({ heard: ({ context }) => context.heard + 1 }) },
  }).createMachine({
    // Invoked by the root, so the child lives on and a second HELLO would be heard.
    invoke: { src: "greeter", id: "greeter" },
    context: { heard: 0 },
    on: { HELLO: { actions: [{ type: "note", params: { label: "HELLO" } }, "count"] } },
  });

  it.each(
    cases({
      none: [{ advance: 3000 }],
      pending: [{ advance: 500 }, { restart: 500 }, { advance: 2000 }],
      across: [{ advance: 500 }, { restart: 3000 }, { advance: 1000 }],
    }),
  )("arrives once — %s", async (_name, script, compare) => {
    await conforms({ machine: listener, log }, script, compare, {
      effects: ["HELLO"],
      final: { status: "active", context: { heard: 1 } },
    });
  });
});

// Two differences by design (docs/durable-actors.md, "How it differs from an uninterrupted XState actor").
describe("by design: where the host differs from an uninterrupted actor", () => {
  // packages/core/test/after.test.ts › "delayed transitions" › "should be able to transition with delay
  // from nested initial state", as a chain: each state's delay starts when the state is entered.
  const chain = setup({ actions: { note } }).createMachine({
    initial: "a",
    output: { reached: "c" },
    states: {
      a: { after: { 1000: { target: "b", actions: { type: "note", params: { label: "b" } } } } },
      b: { after: { 1000: { target: "c", actions: { type: "note", params: { label: "c" } } } } },
      c: { type: "final" },
    },
  });

  it("a chain of delays that fell due while no host ran: the next delay counts from the start", async () => {
    const script: Step[] = [{ advance: 500 }, { restart: 4500 }, { advance: 1000 }];
    const xstate = await runXState({ machine: chain, log }, script);
    expect(xstate.effects).toEqual([
      { label: "b", at: 1000 },
      { label: "c", at: 2000 },
    ]);
    for (const dormantAfterMs of [Infinity, 0]) {
      const host = await runHost({ machine: chain, log }, script, dormantAfterMs);
      // The host starts again at 5000: a's overdue delay fires then, and b's waits 1000 from there.
      expect(host.effects).toEqual([
        { label: "b", at: 5000 },
        { label: "c", at: 6000 },
      ]);
      expect(host.final).toEqual(xstate.final);
      expect(host.final).toMatchObject({ status: "done", output: { reached: "c" } });
    }
  });

  // packages/core/test/invoke.test.ts › "invoke" › "with promises" › "should be invoked with a promise
  // factory and resolve through onDone", racing an `after` shorter than the store's write.
  const quote = setup({
    actors: { fetchQuote: fromPromise(async () => "42") },
  }).createMachine({
    initial: "fetching",
    states: {
      fetching: {
        invoke: { src: "fetchQuote", onDone: "quoted" },
        after: { 5: "timedOut" },
      },
      quoted: { type: "final" },
      timedOut: { type: "final" },
    },
  });

  it("a side effect waits for its write, so an after shorter than the write wins", async () => {
    const plain = await runXState({ machine: quote, log }, [{ advance: 100 }]);
    expect(plain.final).toMatchObject({ status: "done", value: "quoted" });
    vi.useFakeTimers({ now: T0, toFake: ["setTimeout", "clearTimeout", "Date"] });
    const inner = createMemoryStore();
    // Each write takes 10 ms.
    const store: SnapshotStore = {
      ...inner,
      put: async (records) => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        return inner.put(records);
      },
    };
    const host = createDurableHost({ store, machines: { quote: { machine: quote, version: 1 } } });
    try {
      await host.start();
      const spawned = host.spawn("quote", "q");
      await vi.advanceTimersByTimeAsync(100);
      await spawned;
      await host.idle();
      expect(await host.get("q")).toMatchObject({ status: "done", value: "timedOut" });
    } finally {
      await host.stop();
      vi.useRealTimers();
    }
  });
});
