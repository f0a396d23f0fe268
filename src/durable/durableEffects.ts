import { type AnyActorLogic, type AnyActorRef, type AnyStateMachine, fromPromise } from "xstate";
import { settled } from "./hostedActors.js";

/**
 * Runs `start` once the snapshot that led to it is durable. `settles`: the effect is a promise, which
 * ends by itself (a host waits for it in idle()); a callback or an observable runs until stopped.
 */
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
 * The machine with every side-effect actor it names in `setup({ actors })` (and those of the machines
 * it invokes, at any depth) started only through `gate`: so no effect runs before the snapshot that
 * started it is on disk, and a crash in between re-runs it on restore instead of losing it. The
 * actors named in `ungated` (waits and reads, which change nothing a re-run could repeat) start at once.
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

/**
 * The side effects a host lets through its gate: each starts once `ready()` resolves (the write of the
 * snapshot that started it, and every one before, landed) and while `open()` holds; `running` holds the
 * promise effects until they settle, for idle().
 */
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
