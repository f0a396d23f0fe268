import type { AnyStateMachine } from "xstate";

/** The peers workload as an XState machine; `run(key, due)` is its side effect, returning when it ran. */
export function workflowMachine(run: (key: string, due: number) => number): AnyStateMachine;
