import {
  type AnyActorRef,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyTransitionDefinition,
  createActor,
  type InspectionEvent,
} from "xstate";
import { adjacencyMapToArray, getAdjacencyMap, getShortestPaths, serializeSnapshot } from "xstate/graph";
import { expect } from "vitest";
import { describeTransition, listTransitions } from "../../src/machines/index.js";

// Model-based testing for our statecharts: enumerate the machine's reachable graph with xstate/graph,
// build one path per explored edge (the shortest path to its source, then the edge), replay every path
// against a live actor with fake side effects, and record which defined transitions actually fired.

export interface ModelOptions {
  input: unknown;
  /** The events worth sending in a state, with payloads that reach every guard. */
  events: (snapshot: AnyMachineSnapshot) => readonly AnyEventObject[];
  /** Bounds the exploration (states visited); the default suits our machines. */
  limit?: number;
}

export interface ModelStep {
  event: AnyEventObject;
  state: AnyMachineSnapshot;
}

/** One path per explored edge: every (state, event) pair the exploration found. */
export function edgeCoveringPaths(machine: AnyStateMachine, options: ModelOptions): ModelStep[][] {
  const traversal = { input: options.input, events: options.events, limit: options.limit ?? 5_000 };
  const edges = adjacencyMapToArray(getAdjacencyMap(machine, traversal));
  const shortest = new Map(
    getShortestPaths(machine, traversal).map((path) => [serializeSnapshot(path.state), path.steps]),
  );
  return edges.map(({ state, event, nextState }) => {
    const prefix = shortest.get(serializeSnapshot(state));
    if (prefix === undefined) throw new Error(`no shortest path to ${serializeSnapshot(state)}`);
    // The first step of a shortest path is the initial state (its event is xstate.init): not sent.
    return [...prefix.slice(1), { event, state: nextState }] as ModelStep[];
  });
}

/**
 * Replays a path against a live actor (side effects faked so they never settle on their own), checks
 * after every event that the actor is in the state the model predicted, and returns the keys of the
 * transitions the actor took.
 */
export function replayPath(live: AnyStateMachine, input: unknown, path: ModelStep[]): string[] {
  const taken: string[] = [];
  const rootRef: { current?: AnyActorRef } = {};
  const actor = createActor(live, {
    input,
    inspect: recordTransitions(
      () => rootRef.current,
      (key) => taken.push(key),
    ),
  });
  rootRef.current = actor;
  actor.start();
  for (const step of path) {
    actor.send(step.event);
    const snapshot = actor.getSnapshot();
    expect({ value: snapshot.value, context: snapshot.context }, `after ${step.event.type}`).toEqual({
      value: step.state.value,
      context: step.state.context,
    });
  }
  actor.stop();
  return taken;
}

/**
 * An inspection observer that calls `record` with the key of each transition the actor `root()` takes
 * (every actor's, while `root()` is still undefined).
 */
export function recordTransitions(root: () => AnyActorRef | undefined, record: (key: string) => void) {
  return (ev: InspectionEvent) => {
    if (ev.type !== "@xstate.microstep") return;
    const current = root();
    if (current !== undefined && ev.actorRef !== current) return;
    const transitions = (ev as { _transitions?: AnyTransitionDefinition[] })._transitions ?? [];
    for (const t of transitions) record(describeTransition(t).key);
  };
}

/** Explores, replays every path, and returns what was defined, what fired and how many paths ran. */
export function exerciseModel(machine: AnyStateMachine, live: AnyStateMachine, options: ModelOptions) {
  const defined = new Set(listTransitions(machine).map((t) => t.key));
  const taken = new Set<string>();
  const paths = edgeCoveringPaths(machine, options);
  for (const path of paths) for (const key of replayPath(live, options.input, path)) taken.add(key);
  return { defined, taken, paths: paths.length };
}
