// Runs one scenario under vitest fake timers and records what happened, for comparison: (A) as a
// plain XState actor, never interrupted; (B) as the same machine on a durable host (on the memory
// store and on the lowdb store), stopped and started again on the same store at each `restart` step.
// A scenario's machine logs its side effects through actions into an EffectLog; the trace is that log
// plus the actor's final snapshot.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, vi } from "vitest";
import { createActor, type AnyStateMachine, type EventObject } from "xstate";
import { createDurableHost, createMemoryStore, type DurableHost } from "../../../src/durable/index.js";

/** The fixed wall-clock time each run starts at; effect times are relative to it. */
export const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

// setImmediate stays real: only the timers XState and the host schedule with are faked.
const FAKED: Array<"setTimeout" | "clearTimeout" | "setInterval" | "clearInterval" | "Date"> = [
  "setTimeout",
  "clearTimeout",
  "setInterval",
  "clearInterval",
  "Date",
];

/**
 * One step of a script. `restart` on the host: stop it, let `restart` ms pass with no host running,
 * start a new host on the same store. On plain XState, which is never interrupted, it is `advance`.
 */
export type Step = { send: EventObject } | { advance: number } | { restart: number };

/** A side effect a machine logged: what, and when (ms after T0). */
export interface Effect {
  label: string;
  at: number;
}

/** Where a scenario's machine logs its side effects; each run starts with it empty. */
export interface EffectLog {
  readonly entries: Effect[];
  note(label: string): void;
}

export function createEffectLog(): EffectLog {
  const entries: Effect[] = [];
  return { entries, note: (label) => void entries.push({ label, at: Date.now() - T0 }) };
}

export interface Scenario {
  machine: AnyStateMachine;
  input?: unknown;
  log: EffectLog;
}

/** The actor at the end of a run, as JSON (what the host stores). */
export interface Final {
  status: string;
  value: unknown;
  context: unknown;
  output?: unknown;
}

export interface Trace {
  effects: Effect[];
  final: Final;
  /** What the host's logger was told (always empty for plain XState). */
  warnings: string[];
}

/** "times": each effect with its time; "labels": the order of effects only (a restart across due times shifts them). */
export type Compare = "times" | "labels";

export interface View {
  effects: string[];
  final: Final;
}

export function view(trace: Trace, compare: Compare): View {
  return {
    effects: trace.effects.map((e) => (compare === "times" ? `${e.label}@${e.at}` : e.label)),
    final: trace.final,
  };
}

const toFinal = (f: Final): Final => JSON.parse(JSON.stringify(f)) as Final;

async function withFakeTimers<T>(run: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ now: T0, toFake: FAKED });
  try {
    return await run();
  } finally {
    vi.useRealTimers();
  }
}

/** (A) Plain XState: `createActor(machine, { input })`, the script played without interruption. */
export function runXState(s: Scenario, script: readonly Step[]): Promise<Trace> {
  return withFakeTimers(async () => {
    s.log.entries.length = 0;
    const actor = createActor(s.machine, { input: s.input });
    try {
      actor.start();
      await vi.advanceTimersByTimeAsync(0);
      for (const step of script) {
        if ("send" in step) {
          actor.send(step.send);
          await vi.advanceTimersByTimeAsync(0);
        } else {
          await vi.advanceTimersByTimeAsync("advance" in step ? step.advance : step.restart);
        }
      }
      const snapshot = actor.getSnapshot() as Final;
      const { status, value, context, output } = snapshot;
      return {
        effects: [...s.log.entries],
        final: toFinal({ status, value, context, output }),
        warnings: [],
      };
    } finally {
      actor.stop();
    }
  });
}

/** The stores a host runs on here: in memory, or the default lowdb store in a throwaway state directory. */
export type StoreKind = "memory" | "lowdb";

/**
 * (B) The durable host on a fresh `store`, actor "a" of kind "m", a new host on the same store after
 * each restart; an idle actor goes dormant after `dormantAfterMs`.
 */
export function runHost(
  s: Scenario,
  script: readonly Step[],
  dormantAfterMs: number,
  store: StoreKind = "memory",
): Promise<Trace> {
  return withFakeTimers(async () => {
    s.log.entries.length = 0;
    const warnings: string[] = [];
    const memory = createMemoryStore();
    const stateDir = store === "lowdb" ? await mkdtemp(join(tmpdir(), "a2a-conformance-")) : undefined;
    const newHost = () =>
      createDurableHost({
        ...(stateDir === undefined ? { store: memory } : { stateDir }),
        machines: { m: { machine: s.machine, version: 1 } },
        logger: { warn: (message) => void warnings.push(message) },
        dormantAfterMs,
      });
    let host: DurableHost = newHost();
    try {
      await host.start();
      await host.spawn("m", "a", s.input);
      await host.idle();
      for (const step of script) {
        if ("send" in step) {
          await host.send("a", step.send);
        } else if ("advance" in step) {
          await vi.advanceTimersByTimeAsync(step.advance);
        } else {
          await host.stop();
          // No host runs: no actor hears anything meanwhile.
          vi.advanceTimersByTime(step.restart);
          host = newHost();
          await host.start();
        }
        await host.idle();
      }
      const info = await host.get("a");
      if (info === undefined) throw new Error("the host has no actor a");
      // `output` of a done actor: read as the host reports it (absent, it compares as undefined).
      const { status, value, context, output } = info;
      return { effects: [...s.log.entries], final: toFinal({ status, value, context, output }), warnings };
    } finally {
      await host.stop();
      if (stateDir !== undefined) await rm(stateDir, { recursive: true, force: true });
    }
  });
}

/**
 * The host's variants: on each store, with every actor kept hosted, and with an actor dormant as soon
 * as it is idle (hosted again at each event and due time). The lowdb store keeps a record's snapshot
 * apart from its outline and reads it back from its file: a restore path of its own.
 */
const HOSTS: ReadonlyArray<{ name: string; store: StoreKind; dormantAfterMs: number }> = [
  { name: "memory store, hosted", store: "memory", dormantAfterMs: Infinity },
  { name: "memory store, dormant", store: "memory", dormantAfterMs: 0 },
  { name: "lowdb store, hosted", store: "lowdb", dormantAfterMs: Infinity },
  { name: "lowdb store, dormant", store: "lowdb", dormantAfterMs: 0 },
];

/** Runs the scenario on plain XState and on each of the host's variants; the views compare as `compare` says. */
export async function everyWay(
  s: Scenario,
  script: readonly Step[],
  compare: Compare,
): Promise<{ xstate: View; hosts: Array<{ name: string; view: View; warnings: string[] }> }> {
  const xstate = view(await runXState(s, script), compare);
  const hosts = [];
  for (const { name, store, dormantAfterMs } of HOSTS) {
    const trace = await runHost(s, script, dormantAfterMs, store);
    hosts.push({ name, view: view(trace, compare), warnings: trace.warnings });
  }
  return { xstate, hosts };
}

export interface Variants {
  /** (i) no restart. */
  none: Step[];
  /** (ii) a restart while every delay is pending and none is due yet. */
  pending: Step[];
  /** (iii) a restart for longer than every pending delay. */
  across: Step[];
}

export const cases = (v: Variants): Array<[string, Step[], Compare]> => [
  ["no restart", v.none, "times"],
  ["a restart while the delays are pending, not yet due", v.pending, "times"],
  ["a restart across every due time", v.across, "labels"],
];

const labels = (view: View) => view.effects.map((e) => e.replace(/@\d+$/, ""));

/**
 * Plays `script` every way: plain XState must log `effects` (labels, in order) and end as `final`
 * says; each of the host's variants must give the same view as plain XState.
 */
export async function conforms(
  s: Scenario,
  script: Step[],
  compare: Compare,
  expected: { effects: string[]; final: Partial<Final> },
) {
  const { xstate, hosts } = await everyWay(s, script, compare);
  expect(labels(xstate), "plain XState's effects").toEqual(expected.effects);
  expect(xstate.final, "plain XState's final state").toMatchObject(expected.final);
  for (const host of hosts)
    expect(
      host.view,
      `the host (${host.name}) differs from plain XState (warnings: ${JSON.stringify(host.warnings)})`,
    ).toEqual(xstate);
}
