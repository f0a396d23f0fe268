import { createMachine, setup } from "xstate";
import { describe, expect, it } from "vitest";
import { machineChart } from "../../src/inspector/statechart.js";
import { collaborateMachine, toMermaid } from "../../src/machines/index.js";

// How the inspector rewrites toMermaid's chart for reading: invoked machines drawn inside the invoking
// state, a machine-wide transition drawn once, parallel edges merged. The drawing itself is checked in
// inspector.browser.test.ts.

const child = createMachine({
  id: "child",
  initial: "working",
  states: { working: { on: { FINISH: "done" } }, done: { type: "final" } },
});

const parent = setup({ actors: { child } }).createMachine({
  id: "parent",
  initial: "waiting",
  states: {
    waiting: {
      invoke: { id: "helper", src: "child", onDone: "done" },
      on: { POKE: { actions: () => {} } },
    },
    done: { type: "final" },
  },
});

describe("machineChart: the chart the inspector draws", () => {
  it("draws an invoked machine inside the invoking state, its ids prefixed so they stay unique", () => {
    const chart = machineChart(parent);
    const lines = chart.mermaid?.split("\n") ?? [];
    const open = lines.indexOf(
      '  state "waiting (invoke: helper (child)) (POKE (actions only))" as waiting {',
    );
    expect(open).toBeGreaterThan(0);
    const close = lines.indexOf("  }", open);
    expect(lines.slice(open + 1, close)).toEqual([
      "    [*] --> waiting__working",
      '    state "working" as waiting__working',
      '    state "done" as waiting__done',
      "    waiting__working --> waiting__done : FINISH",
      "    waiting__done --> [*]",
    ]);
    // The parent's own `done` keeps its id; the child's is waiting__done.
    expect(lines).toContain('  state "done" as done');
    expect(lines.some((line) => line.startsWith("  waiting : "))).toBe(false);
    expect(chart.nested).toEqual([
      {
        stateId: "waiting",
        invokeId: "helper",
        machineId: "child",
        prefix: "waiting__",
        stateIds: { working: "waiting__working", done: "waiting__done" },
      },
    ]);
    expect(chart.stateIds).toEqual({ waiting: "waiting", done: "done" });
  });

  it("puts the events the collaboration forwards to its mention in the box's title, not on a loop", () => {
    const source = machineChart(collaborateMachine).mermaid ?? "";
    expect(toMermaid(collaborateMachine)).toContain("awaitingResponse --> awaitingResponse :");
    expect(source).not.toContain("awaitingResponse --> awaitingResponse");
    expect(source).toContain(
      'state "awaitingResponse (invoke: mention) (forwards RESPONSE_RECEIVED, CANCEL)" as awaitingResponse {',
    );
    expect(source).toContain("awaitingResponse__pending --> awaitingResponse__timedOut : ");
  });

  it("draws a machine-wide transition once, from an any-state node, and a state's own ones as they are", () => {
    const machine = createMachine({
      id: "m",
      initial: "a",
      on: { STOP: ".stopped" },
      states: {
        a: { on: { NEXT: "b", HALT: "stopped" } },
        b: { on: { NEXT: "c", HALT: "stopped" } },
        c: { on: { HALT: "stopped" } },
        stopped: { type: "final" },
      },
    });
    const source = machineChart(machine).mermaid ?? "";
    expect(toMermaid(machine).match(/--> stopped : STOP$/gm)).toHaveLength(3);
    expect(source.match(/--> stopped : STOP/gm)).toEqual(["--> stopped : STOP"]);
    expect(source).toContain('  state "any state" as any_state__\n  any_state__ --> stopped : STOP');
    expect(source.match(/--> stopped : HALT$/gm)).toHaveLength(3);
  });

  it("merges parallel edges between two states into one edge with a label line each", () => {
    const machine = createMachine({
      id: "m",
      initial: "a",
      states: {
        a: { on: { GO: "b", JUMP: "b" }, always: [{ guard: () => false, target: "b" }] },
        b: {},
      },
    });
    expect(toMermaid(machine).match(/^ {2}a --> b/gm)).toHaveLength(3);
    const edges = (machineChart(machine).mermaid ?? "").split("\n").filter((l) => l.startsWith("  a --> b"));
    expect(edges).toHaveLength(1);
    expect(edges[0]?.split(" : ")[1]?.split("<br/>")).toHaveLength(3);
  });
});
