import { type AnyStateMachine, type AnyStateNode, StateMachine } from "xstate";
import { eventLabel, listTransitions, mermaidStateId, toMermaid } from "../machines/index.js";
import { ANY_STATE_ID, collapseShared, mergeParallelEdges, prefixLine } from "./chartSource.js";
import type { MachineChart, NestedChart } from "./protocol.js";

export type { MachineChart, NestedChart } from "./protocol.js";

/** Which states of a chart are active: leaves are `current`, their compound ancestors `active`. */
export interface ActiveStates {
  /** The state value as text: leaf paths joined with `.`, several (parallel) joined with `, `. */
  label: string;
  /** Mermaid ids of the active leaf states. */
  current: string[];
  /** Mermaid ids of the active compound/parallel states that contain them. */
  active: string[];
}

function descendants(node: AnyStateNode): AnyStateNode[] {
  return (Object.values(node.states) as AnyStateNode[]).flatMap((kid) => [kid, ...descendants(kid)]);
}

/** toMermaid declares every state as `state "label" as <id>`, at the end of the line or before ` {`. */
function declares(source: string, id: string): boolean {
  return source.split("\n").some((line) => {
    const at = line.lastIndexOf(` as ${id}`);
    if (at < 0) return false;
    const rest = line.slice(at + 4 + id.length);
    return rest === "" || rest === " {";
  });
}

/**
 * The chart of one machine: toMermaid's source and the verified Mermaid id of every state. A state that
 * invokes a state machine holds that machine's chart (one level deep). Never throws.
 */
export function machineChart(machine: AnyStateMachine, nest = true): MachineChart {
  let mermaid: string;
  try {
    mermaid = toMermaid(machine);
  } catch (error) {
    return {
      machineId: machine.id,
      mermaid: null,
      error: error instanceof Error ? error.message : String(error),
      stateIds: {},
    };
  }
  const stateIds: Record<string, string> = {};
  for (const node of descendants(machine.root)) {
    const id = mermaidStateId(node.path);
    if (declares(mermaid, id)) stateIds[node.path.join(".")] = id;
  }
  if (!Object.values(stateIds).includes(ANY_STATE_ID)) mermaid = collapseShared(mermaid, rootLabels(machine));
  const chart: MachineChart = { machineId: machine.id, mermaid, stateIds };
  if (!nest) return chart;
  const nested = nestInvoked(machine, chart);
  return { ...nested, mermaid: mergeParallelEdges(nested.mermaid ?? mermaid) };
}

/** The edge labels of the transitions a machine defines on itself (not on one of its states). */
function rootLabels(machine: AnyStateMachine): Set<string> {
  return new Set(
    listTransitions(machine)
      .filter((t) => t.source === machine.root.id && t.targets.length > 0)
      .map((t) => `${eventLabel(t.event)}${t.guard === undefined ? "" : ` [${t.guard}]`}`),
  );
}

/** The state machine an invocation runs: its `src` names one of the machine's actors, or is the logic itself. */
function invokedMachine(machine: AnyStateMachine, src: unknown): AnyStateMachine | undefined {
  const actors = (machine.implementations as { actors?: Record<string, unknown> }).actors ?? {};
  const logic = typeof src === "string" ? actors[src] : src;
  return logic instanceof StateMachine ? (logic as AnyStateMachine) : undefined;
}

/**
 * Draws each machine an atomic state invokes inside that state: the state becomes a box titled
 * `key (invoke: id)` holding the child's chart, its ids prefixed `<state id>__` so they stay unique.
 */
function nestInvoked(machine: AnyStateMachine, chart: MachineChart): MachineChart {
  if (chart.mermaid === null) return chart;
  let lines = chart.mermaid.split("\n");
  const nested: NestedChart[] = [];
  const taken = new Set(Object.values(chart.stateIds));
  for (const node of descendants(machine.root)) {
    const stateId = chart.stateIds[node.path.join(".")];
    if (node.type !== "atomic" || stateId === undefined) continue;
    const found = node.invoke
      .map((i) => ({ invokeId: i.id, child: invokedMachine(machine, i.src) }))
      .find((i) => i.child !== undefined);
    if (found?.child === undefined) continue;
    const inner = machineChart(found.child, false);
    const prefix = `${stateId}__`;
    const ids = Object.values(inner.stateIds).map((id) => prefix + id);
    if (inner.mermaid === null || ids.some((id) => taken.has(id))) continue;
    const at = lines.findIndex((line) => line.endsWith(` as ${stateId}`) && /^\s*state "/.test(line));
    if (at < 0) continue;
    const indent = /^\s*/.exec(lines[at] ?? "")?.[0] ?? "";
    const label = /state "(.*)" as/.exec(lines[at] ?? "")?.[1] ?? node.key;
    const noteAt = `${indent}${stateId} : `;
    let count = 0;
    while (lines[at + 1 + count]?.startsWith(noteAt)) count += 1;
    const notes = lines.slice(at + 1, at + 1 + count).map((line) => `(${line.slice(noteAt.length)})`);
    // Mermaid cannot loop an edge on a box: the state's self-loops (events it forwards to its child,
    // events it handles with actions only) go in the box's title.
    const loopAt = lines.findIndex((line) => line.startsWith(`${indent}${stateId} --> ${stateId} : `));
    const loop = loopAt < 0 ? [] : (lines[loopAt] ?? "").split(" : ").slice(1).join(" : ").split("<br/>");
    const forwarded = loop
      .filter((l) => l.endsWith(" (forward)"))
      .map((l) => l.slice(0, -" (forward)".length));
    const forwards = [
      ...(forwarded.length === 0 ? [] : [`(forwards ${forwarded.join(", ")})`]),
      ...loop.filter((l) => !l.endsWith(" (forward)")).map((l) => `(${l})`),
    ];
    const title = [label, ...notes, ...forwards].join(" ");
    const body = inner.mermaid
      .split("\n")
      .slice(1)
      .filter((line) => line !== "")
      .map((line) => `${indent}${prefixLine(line, prefix)}`);
    lines = [
      ...lines.slice(0, at),
      `${indent}state "${title}" as ${stateId} {`,
      ...body,
      `${indent}}`,
      ...lines.slice(at + 1 + count),
    ].filter((line) => loopAt < 0 || line !== lines[loopAt]);
    for (const id of ids) taken.add(id);
    nested.push({
      stateId,
      invokeId: found.invokeId,
      machineId: found.child.id,
      prefix,
      stateIds: Object.fromEntries(Object.entries(inner.stateIds).map(([path, id]) => [path, prefix + id])),
    });
  }
  return nested.length === 0 ? chart : { ...chart, mermaid: lines.join("\n"), nested };
}

/** Every active state path of a state value, ancestors included: `{ a: "b" }` → `a`, `a.b`. */
function activePaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value === "string") return [[...prefix, value]];
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) => [
    [...prefix, key],
    ...activePaths(inner, [...prefix, key]),
  ]);
}

/** The active states of a machine snapshot's `value`, as Mermaid ids of `chart`. */
export function activeStates(value: unknown, chart: MachineChart | undefined): ActiveStates {
  const paths = activePaths(value).map((p) => p.join("."));
  const leaves = paths.filter((p) => !paths.some((other) => other.startsWith(`${p}.`)));
  const idOf = (path: string): string[] => {
    const id = chart?.stateIds[path];
    return id === undefined ? [] : [id];
  };
  return {
    label: leaves.join(", "),
    current: leaves.flatMap(idOf),
    active: paths.filter((p) => !leaves.includes(p)).flatMap(idOf),
  };
}
