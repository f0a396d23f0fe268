import type { AnyStateMachine } from "xstate";
import { mermaidChart } from "../machines/index.js";
import type { MachineChart } from "./protocol.js";

/** Which states of a chart are active: leaves are `current`, their compound ancestors `active`. */
export interface ActiveStates {
  /** The state value as text: leaf paths joined with `.`, several (parallel) joined with `, `. */
  label: string;
  /** Mermaid ids of the active leaf states. */
  current: string[];
  /** Mermaid ids of the active compound/parallel states that contain them. */
  active: string[];
}

/** One machine's chart as the inspector draws it (every ChartOptions on). Never throws. */
export function machineChart(machine: AnyStateMachine): MachineChart {
  try {
    const { source, stateIds, nested } = mermaidChart(machine, {
      nestInvoked: true,
      anyState: true,
      mergeEdges: true,
    });
    return { machineId: machine.id, mermaid: source, stateIds, ...(nested.length ? { nested } : {}) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { machineId: machine.id, mermaid: null, error: message, stateIds: {} };
  }
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
