import type { AnyStateMachine } from "xstate";
import { isPlainObject } from "../persistence/index.js";

const STATUSES: ReadonlySet<unknown> = new Set(["active", "done", "error", "stopped"]);

/**
 * The store's `validateSnapshot`: the problem with a snapshot its machine cannot restore, or undefined.
 * XState accepts a snapshot naming a state its machine lacks, and fails later: such a record is quarantined.
 */
export function snapshotValidity(
  machines: Readonly<Record<string, AnyStateMachine>>,
): (machineId: string, snapshot: unknown) => string | undefined {
  return (machineId, snapshot) => {
    const machine = Object.hasOwn(machines, machineId) ? machines[machineId] : undefined;
    if (machine === undefined) return `there is no machine ${JSON.stringify(machineId)} to restore it`;
    if (!isPlainObject(snapshot)) return "it is not an object";
    const { value, status, context } = snapshot;
    if (!STATUSES.has(status)) return `its status ${JSON.stringify(status)} is not one XState knows`;
    // XState reads a number or a boolean as the initial state: only names (or objects of them) are real.
    if (typeof value !== "string" && !isPlainObject(value))
      return `its state value ${JSON.stringify(value)} is not a state name or an object of them`;
    try {
      machine.resolveState({ value, context: context ?? {} } as Parameters<
        AnyStateMachine["resolveState"]
      >[0]);
    } catch (error) {
      return `its state value ${JSON.stringify(value)} is not one of machine ${JSON.stringify(machine.id)}: ${error instanceof Error ? error.message : String(error)}`;
    }
    return undefined;
  };
}
