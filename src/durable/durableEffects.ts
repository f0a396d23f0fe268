import { type AnyActorLogic, type AnyActorRef, type AnyStateMachine, fromPromise } from "xstate";
import { settled } from "./hostedActors.js";

/** Runs `start` once its snapshot is durable. `settles`: a promise (idle() waits for it), not a callback. */
export type EffectGate = (start: () => void, self: AnyActorRef, settles: boolean) => void;

// XState creates each fromPromise logic with the same transition function source: the one way to tell a
// promise (which settles) from a callback or an observable (which runs until stopped) without internals.
const PROMISE_TRANSITION = fromPromise(async () => undefined).transition.toString();

/** Whether a logic is a side effect (a promise, callback or observable actor) rather than a machine. */
export function isEffectLogic(logic: AnyActorLogic): boolean {
  const l = logic as { config?: unknown; start?: unknown };
  return typeof l.config === "function" && typeof l.start === "function";
}

export function isPromiseLogic(logic: AnyActorLogic): boolean {
  return isEffectLogic(logic) && logic.transition.toString() === PROMISE_TRANSITION;
}

/**
 * The machine with every side-effect actor of `setup({ actors })`, at any depth, started through `gate`:
 * none runs before its snapshot is on disk, so a crash in between re-runs it. `ungated` ones start at once.
 */
export function withDurableEffects(
  machine: AnyStateMachine,
  gate: EffectGate,
  ungated: ReadonlySet<string> = new Set(),
): AnyStateMachine {
  const actors = machine.implementations.actors as Record<string, AnyActorLogic>;
  const gated: Record<string, AnyActorLogic> = {};
  for (const [name, logic] of Object.entries(actors)) {
    if (isMachine(logic)) gated[name] = withDurableEffects(logic, gate, ungated);
    else if (isEffectLogic(logic) && !ungated.has(name)) gated[name] = gatedLogic(logic, gate);
  }
  return Object.keys(gated).length === 0 ? machine : machine.provide({ actors: gated });
}

function gatedLogic(logic: AnyActorLogic, gate: EffectGate): AnyActorLogic {
  const start = logic.start?.bind(logic);
  if (start === undefined) return logic;
  const settles = isPromiseLogic(logic);
  return {
    ...logic,
    start: (state, scope) => {
      // A stopped actor (its state left before the write landed) must not start its effect late.
      gate(
        () => {
          if ((scope.self.getSnapshot() as { status: string }).status === "active") start(state, scope);
        },
        scope.self,
        settles,
      );
    },
  } as AnyActorLogic;
}

/** The gate: effects start once `ready()` (their writes landed) while `open()`; `running` is for idle(). */
export class EffectRuns {
  readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly o: {
      ready: () => Promise<void>;
      open: () => boolean;
      /** The save time of the record whose actor is being restored now, if one is. */
      restoredFrom: () => number | undefined;
      start?: ((start: () => void, restoredFrom: number | undefined) => void) | undefined;
    },
  ) {}

  readonly gate: EffectGate = (start, self, settles) => {
    // Captured now: a restored actor restarts its effects inside start(), synchronously.
    const restoredFrom = this.o.restoredFrom();
    const run = (async () => {
      await Promise.resolve();
      await this.o.ready();
      if (!this.o.open()) return;
      if (this.o.start === undefined) start();
      else this.o.start(start, restoredFrom);
      if (settles) await settled(self);
    })();
    this.running.add(run);
    const done = () => this.running.delete(run);
    run.then(done, done);
  };
}

function isMachine(logic: AnyActorLogic): logic is AnyStateMachine {
  return typeof (logic as { provide?: unknown }).provide === "function" && "root" in logic;
}
