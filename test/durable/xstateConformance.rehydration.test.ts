// Conformance of the durable host with plain XState across restarts (see xstateConformance.test.ts),
// for what a restart restores beyond the delays: history, children's state and completion, delays
// computed from context, eventless transitions, actors addressed through the system. Most scenarios
// follow a test of XState's own suite, named above each.
import { describe, it } from "vitest";
import { assign, createMachine, enqueueActions, fromPromise, sendTo, setup, spawnChild } from "xstate";
import { cases, conforms, createEffectLog, type Scenario } from "./conformance/harness.js";

const log = createEffectLog();
const note = (_: unknown, params: { label: string }) => log.note(params.label);
const noted = (label: string) => ({ type: "note", params: { label } }) as const;

// packages/core/test/history.test.ts › "should go to the most recently visited state (explicit shallow
// history type)", with delays: the history state restores `b`, and `b`'s delay starts again.
describe("j. a history state across a restart", () => {
  const machine = setup({ actions: { note } }).createMachine({
    initial: "work",
    states: {
      work: {
        initial: "a",
        states: {
          a: { entry: noted("a"), after: { 1000: "b" } },
          b: { entry: noted("b"), after: { 1000: "c" } },
          c: { entry: noted("c") },
          hist: { type: "history" },
        },
        on: { PAUSE: "paused" },
      },
      paused: { entry: noted("paused"), on: { RESUME: "work.hist" } },
    },
  });
  const s: Scenario = { machine, log };

  it.each(
    cases({
      none: [
        { advance: 1500 },
        { send: { type: "PAUSE" } },
        { advance: 1000 },
        { send: { type: "RESUME" } },
        { advance: 2000 },
      ],
      pending: [
        { advance: 1500 },
        { send: { type: "PAUSE" } },
        { restart: 200 },
        { advance: 800 },
        { send: { type: "RESUME" } },
        { restart: 300 },
        { advance: 1700 },
      ],
      across: [
        { advance: 1500 },
        { send: { type: "PAUSE" } },
        { restart: 1000 },
        { send: { type: "RESUME" } },
        { restart: 5000 },
        { advance: 1000 },
      ],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, {
      effects: ["a", "b", "paused", "b", "c"],
      final: { status: "active", value: { work: "c" } },
    });
  });
});

// packages/core/test/after.test.ts › "delay expressions" › "should evaluate the expression (function) to
// determine the delay", looped through an eventless transition (packages/core/test/transient.test.ts):
// each delay is computed from the context the restart restored.
describe("k. delays computed from context, and an eventless loop", () => {
  const machine = setup({
    types: { context: {} as { n: number; ms: number } },
    actions: { note },
    delays: { wait: ({ context }) => context.ms },
    guards: { enough: ({ context }) => context.n >= 3 },
  }).createMachine({
    context: { n: 0, ms: 700 },
    initial: "waiting",
    states: {
      waiting: {
        after: {
          wait: {
            target: "checking",
            actions: assign({ n: ({ context }) => context.n + 1, ms: ({ context }) => context.ms + 300 }),
          },
        },
      },
      checking: {
        entry: noted("check"),
        always: [{ guard: "enough", target: "done" }, { target: "waiting" }],
      },
      done: { type: "final", entry: noted("done") },
    },
  });
  const s: Scenario = { machine, log };

  it.each(
    cases({
      none: [{ advance: 4000 }],
      pending: [{ advance: 500 }, { restart: 100 }, { advance: 1500 }, { restart: 100 }, { advance: 1800 }],
      across: [{ advance: 500 }, { restart: 5000 }, { advance: 5000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, {
      effects: ["check", "check", "check", "done"],
      final: { status: "done", context: { n: 3, ms: 1600 } },
    });
  });
});

// packages/core/test/invoke.test.ts › "child invoker" › "should be able to access the output of an
// invoked machine": the child's delays run in the child, and its output reaches the parent once.
describe("l. an invoked child machine's delays and output", () => {
  const child = setup({ actions: { note } }).createMachine({
    initial: "x",
    states: {
      x: { after: { 1500: "y" } },
      y: { entry: noted("child y"), after: { 1500: "z" } },
      z: { type: "final" },
    },
    output: { got: 42 },
  });
  const machine = setup({ actors: { child }, actions: { note } }).createMachine({
    context: { out: null as unknown },
    initial: "running",
    states: {
      running: {
        invoke: {
          src: "child",
          onDone: { target: "finished", actions: assign({ out: ({ event }) => event.output }) },
        },
      },
      finished: { entry: noted("finished") },
    },
  });
  const s: Scenario = { machine, log };

  it.each(
    cases({
      none: [{ advance: 4000 }],
      pending: [{ advance: 1000 }, { restart: 200 }, { advance: 1000 }, { restart: 200 }, { advance: 1600 }],
      across: [{ advance: 1000 }, { restart: 5000 }, { advance: 3000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, {
      effects: ["child y", "finished"],
      final: { status: "active", value: "finished", context: { out: { got: 42 } } },
    });
  });
});

// packages/core/test/rehydration.test.ts › "should be able to rehydrate an actor deep in the tree", with
// the parent's sendTo delayed: the grandchild keeps its count across restarts.
describe("m. a grandchild's context, reached by a delayed sendTo", () => {
  const grandchild = createMachine({
    context: { count: 0 },
    on: {
      INC: {
        actions: [
          assign({ count: ({ context }) => context.count + 1 }),
          ({ context }) => log.note(`count ${context.count}`),
        ],
      },
    },
  });
  const child = setup({ actors: { grandchild } }).createMachine({
    invoke: { src: "grandchild", id: "grandchild" },
    on: { INC: { actions: sendTo("grandchild", { type: "INC" }) } },
  });
  const machine = setup({ actors: { child } }).createMachine({
    invoke: { src: "child", id: "child" },
    on: { INC: { actions: sendTo("child", { type: "INC" }, { delay: 300 }) } },
  });
  const s: Scenario = { machine, log };
  const inc = { send: { type: "INC" } };

  it.each(
    cases({
      none: [{ advance: 500 }, inc, { advance: 500 }, inc, { advance: 1000 }],
      pending: [
        { advance: 500 },
        inc,
        { restart: 100 },
        { advance: 400 },
        inc,
        { restart: 100 },
        { advance: 900 },
      ],
      across: [{ advance: 500 }, inc, { restart: 1000 }, inc, { restart: 1000 }, { advance: 1000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, { effects: ["count 1", "count 2"], final: { status: "active" } });
  });
});

// packages/core/test/rehydration.test.ts › "a rehydrated done child should not re-notify the parent
// about its completion", and › "shouldn't re-notify the parent about the error when rehydrating".
describe("n. a child that ended before the restart is not heard from again", () => {
  const done = createMachine(
    {
      context: ({ spawn }) => {
        spawn("foo", { systemId: "mySystemId" });
        return {};
      },
      // The spawned child's id is generated, and differs between systems: the event is named without it.
      on: { "*": { actions: ({ event }) => log.note(`heard ${event.type.replace(/\.x:\d+$/, "")}`) } },
    },
    { actors: { foo: createMachine({ type: "final" }) } },
  );
  const failed = setup({
    actors: { failure: fromPromise(() => Promise.reject(new Error("failure"))) },
  }).createMachine({
    invoke: { src: "failure", onError: { actions: () => log.note("onError") } },
    on: { PING: { actions: () => log.note("PING") } },
  });
  const ping = { send: { type: "PING" } };
  const script = cases({
    none: [{ advance: 500 }, ping, { advance: 500 }],
    pending: [{ advance: 500 }, { restart: 100 }, ping, { restart: 100 }, { advance: 400 }],
    across: [{ advance: 500 }, { restart: 1000 }, ping, { restart: 1000 }],
  });

  it.each(script)("a done child — %s", async (_name, steps, compare) => {
    await conforms({ machine: done, log }, steps, compare, {
      effects: ["heard xstate.done.actor", "heard PING"],
      final: { status: "active" },
    });
  });

  it.each(script)("a failed invoke — %s", async (_name, steps, compare) => {
    await conforms({ machine: failed, log }, steps, compare, {
      effects: ["onError", "PING"],
      final: { status: "active" },
    });
  });
});

// packages/core/test/system.test.ts › "should be accessible in referenced custom actions", with the
// sendTo delayed; and packages/core/test/actions.test.ts › "enqueueActions" with a delayed raise.
describe("o. delayed events to an actor found through the system, and enqueued", () => {
  const worker = setup({ actions: { note } }).createMachine({
    on: { PING: { actions: noted("ping") }, PONG: { actions: noted("pong") } },
  });
  const machine = setup({
    types: { context: {} as { k: number } },
    actors: { worker },
    actions: { note },
  }).createMachine({
    context: { k: 0 },
    entry: spawnChild("worker", { id: "w", systemId: "theWorker" }),
    on: {
      GO: { actions: sendTo(({ system }) => system.get("theWorker"), { type: "PING" }, { delay: 2000 }) },
      BACK: {
        actions: enqueueActions(({ enqueue, context }) => {
          enqueue.assign({ k: context.k + 1 });
          if (context.k === 0) enqueue.sendTo("w", { type: "PONG" }, { delay: 1000 });
        }),
      },
    },
  });
  const s: Scenario = { machine, log };
  const [go, back] = [{ send: { type: "GO" } }, { send: { type: "BACK" } }];

  it.each(
    cases({
      none: [{ advance: 100 }, go, { advance: 500 }, back, back, { advance: 3000 }],
      pending: [{ advance: 100 }, go, { advance: 500 }, back, { restart: 300 }, back, { advance: 2000 }],
      across: [{ advance: 100 }, go, { advance: 500 }, back, { restart: 3000 }, back, { advance: 1000 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, { effects: ["pong", "ping"], final: { context: { k: 2 } } });
  });
});

// A snapshot of 1,024 JSON characters or more is kept by the lowdb store apart from its record, and its
// outline (the snapshot without contexts) beside it: the restore reads both back.
describe("p. a large snapshot with children, history and delays", () => {
  const page = "긴 문단 ".repeat(300);
  const child = setup({
    types: { context: {} as { text: string; n: number } },
  }).createMachine({
    context: { text: page, n: 0 },
    initial: "idle",
    states: {
      idle: { on: { INC: "counting" } },
      counting: {
        entry: assign({ n: ({ context }) => context.n + 1 }),
        after: { 700: { target: "idle", actions: ({ context }) => log.note(`child ${context.n}`) } },
      },
    },
  });
  const machine = setup({
    types: { context: {} as { text: string; n: number } },
    actors: { child },
    actions: { note },
  }).createMachine({
    context: { text: page, n: 0 },
    initial: "on",
    states: {
      on: {
        initial: "first",
        invoke: { src: "child", id: "child" },
        states: {
          first: { after: { 1000: "second" } },
          second: { entry: noted("second") },
          hist: { type: "history" },
        },
        on: {
          INC: { actions: [assign({ n: ({ context }) => context.n + 1 }), sendTo("child", { type: "INC" })] },
          OFF: "off",
        },
      },
      off: { entry: noted("off"), on: { ON: "on.hist" } },
    },
  });
  const s: Scenario = { machine, log };
  const [inc, off, on] = [{ send: { type: "INC" } }, { send: { type: "OFF" } }, { send: { type: "ON" } }];

  it.each(
    cases({
      none: [inc, { advance: 1200 }, off, on, inc, { advance: 1000 }],
      pending: [inc, { restart: 200 }, { advance: 1000 }, off, on, inc, { restart: 300 }, { advance: 700 }],
      across: [inc, { restart: 2000 }, { advance: 100 }, off, on, inc, { restart: 2000 }, { advance: 100 }],
    }),
  )("%s", async (_name, script, compare) => {
    await conforms(s, script, compare, {
      // Leaving `on` stops the child: the one invoked on the way back starts from its initial context.
      effects: ["child 1", "second", "off", "second", "child 1"],
      final: { status: "active", value: { on: "second" }, context: { text: page, n: 2 } },
    });
  });
});
