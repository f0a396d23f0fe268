import type { AnyStateMachine, AnyStateNode } from "xstate";
import { mermaidStateId, toMermaid } from "../machines/index.js";

/** A machine as the inspector page draws it: its Mermaid source and the Mermaid id of each state. */
export interface MachineChart {
  machineId: string;
  /** The `stateDiagram-v2` source from toMermaid, or null when it could not be drawn (see `error`). */
  mermaid: string | null;
  error?: string;
  /** State key path (`a.b`) → the id toMermaid gives that state in `mermaid`. */
  stateIds: Record<string, string>;
}

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

/** The chart of one machine: toMermaid's source and the verified Mermaid id of every state. Never throws. */
export function machineChart(machine: AnyStateMachine): MachineChart {
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
  return { machineId: machine.id, mermaid, stateIds };
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
