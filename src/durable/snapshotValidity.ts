import type { AnyStateMachine } from "xstate";
import { isPlainObject } from "../persistence/index.js";

const STATUSES: ReadonlySet<unknown> = new Set(["active", "done", "error", "stopped"]);

/**
 * The check LowdbSnapshotStore applies at open (its `validateSnapshot` option): whether a persisted snapshot
 * can be restored by its machine. XState 5 does not refuse a snapshot naming a state its machine lacks
 * when an actor is created from it; the actor fails later and every read of it throws. Resolving the
 * state value against the machine first lets the store quarantine such a record instead. Returns a
 * problem text, or undefined when the snapshot is fine.
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
