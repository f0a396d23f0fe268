// An actor with its delays tracked on an injected clock, and what a host would store of it: the
// helpers of the delay-tracking tests.
import { SimulatedClock, createActor, type AnyActorRef, type AnyStateMachine } from "xstate";
import type { DelayedEventRecord } from "../../src/persistence/actorRecord.js";
import { trackDelays } from "../../src/durable/durableDelays.js";

// Each "process" gets its own injected clock, set to the wall-clock time it starts at.
export const T0 = 1_700_000_000_000;

export interface Log {
  log: string[];
}
// A machine's `note` action appends to its log: how the tests count transitions.
export const append = ({ context }: { context: Log }, params: { text: string }) => ({
  log: [...context.log, params.text],
});
export const note = (text: string) => ({ type: "note", params: { text } }) as const;

export function start(
  machine: AnyStateMachine,
  at: number,
  restart?: { snapshot: unknown; delayed?: DelayedEventRecord[] },
) {
  const clock = new SimulatedClock();
  clock.set(at);
  const actor = createActor(machine, { clock, snapshot: restart?.snapshot as never });
  const tracker = trackDelays(actor, { now: () => clock.now() });
  let changes = 0;
  tracker.onChange = () => (changes += 1);
  actor.start();
  const restored = restart?.delayed === undefined ? undefined : tracker.restore(restart.delayed);
  return { clock, actor, tracker, restored, changes: () => changes };
}

/** What a host stores: the persisted snapshot and the pending delays, through JSON. */
export function persist(run: ReturnType<typeof start>): { snapshot: unknown; delayed: DelayedEventRecord[] } {
  const stored = JSON.stringify({
    snapshot: run.actor.getPersistedSnapshot(),
    delayed: run.tracker.pending(),
  });
  run.actor.stop();
  return JSON.parse(stored) as { snapshot: unknown; delayed: DelayedEventRecord[] };
}

export const logOf = (actor: AnyActorRef) => (actor.getSnapshot() as { context: Log }).context.log;
