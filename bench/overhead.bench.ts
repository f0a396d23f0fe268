// What durability costs over XState itself, in CPU per workflow: the peers benchmark's workflow (a sleep
// of 5–15 s, a side effect, a second sleep, a second effect) run N times on a simulated clock, so no
// run waits for its sleeps and every figure is CPU. Three sides, each in its own process, one run:
// - XState alone: `createActor` with the simulated clock, each actor kept in memory (nothing stored);
// - the durable host on the lowdb store, every actor kept hosted (`dormantAfterMs: Infinity`): what
//   persistence costs (every change written, fdatasync'd, before its side effect runs);
// - the durable host as configured by default: an actor idle for 100 ms goes back to being its record
//   and is hosted again at its due time, so each workflow is hosted three times.
// The N workflows are created at time 0, 500 in flight, each resolved once durable; the clock then moves
// in 100 ms steps, each step's timers fired in due order and its writes and effects awaited.
// The host is the built package (dist/, as a user imports it: npm run build first), not the sources
// through tsx, whose transform adds work to every function of ours that XState does not pay.
// Run: npm run build && npm run bench -- overhead [--n 10000] [--rounds 3]
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Heap } from "heap-js";
import { type AnyActorRef, createActor } from "xstate";
import type * as Durable from "../src/durable/index.js";
import { workflowMachine } from "./peers/workflow.mjs";
import { firstSleep, secondSleep, workflowId } from "./peers/workload.mjs";
import { sideProcess } from "./sideProcess.js";
import { printTable } from "./table.js";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? undefined : args[at + 1];
};
const N = Number(flag("n") ?? "10000");
if (!Number.isInteger(N) || N < 1) throw new Error(`--n takes a whole number ≥ 1, got ${flag("n")}`);
const ROUNDS = Number(flag("rounds") ?? "3");
if (!Number.isInteger(ROUNDS) || ROUNDS < 1)
  throw new Error(`--rounds takes a whole number ≥ 1, got ${flag("rounds")}`);

const built = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "durable", "index.js");
if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build first`);
const { createDurableHost } = (await import(built)) as typeof Durable;

const SIDES = ["xstate", "hosted", "dormant"] as const;
type Side = (typeof SIDES)[number];

interface Figures {
  /** CPU (user + system, every thread of the process) per workflow, from the first create to the last effect. */
  cpuUs: number;
  /** Of which in the creates. */
  createCpuUs: number;
  wallS: number;
  effects: number;
}

/** The peers benchmark's sleeps: 5–15 s. */
const SLEEPS = { sleepMinMs: 5_000, sleepMaxMs: 15_000 };

let effects = 0;
const workflow = workflowMachine(() => ++effects);

/** Timers on a clock that moves only when told: `take` hands out what falls due, in due order. */
class SimulatedClock {
  now = 0;
  private readonly due = new Heap<Timer>((a, b) => a.at - b.at || a.handle - b.handle);
  private readonly cancelled = new Set<number>();
  private nextHandle = 1;

  readonly timers = {
    setTimeout: (fn: () => void, ms: number): unknown => {
      const handle = this.nextHandle++;
      this.due.push({ at: this.now + Math.max(0, ms), handle, fn });
      return handle;
    },
    clearTimeout: (handle: unknown): void => {
      if (typeof handle === "number") this.cancelled.add(handle);
    },
  };

  /** The earliest timer due by `to`, taken off; undefined when none is. */
  take(to: number): Timer | undefined {
    for (let top = this.due.peek(); top !== undefined && top.at <= to; top = this.due.peek()) {
      this.due.pop();
      if (!this.cancelled.delete(top.handle)) return top;
    }
    return undefined;
  }
}

interface Timer {
  at: number;
  handle: number;
  fn: () => void;
}

async function inFlight(n: number, run: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < n) await run(next++);
  };
  await Promise.all(Array.from({ length: Math.min(500, n) }, lane));
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function measure(side: Side): Promise<Figures> {
  const clock = new SimulatedClock();
  const dir = await mkdtemp(join(tmpdir(), "a2a-overhead-"));
  const host =
    side === "xstate"
      ? undefined
      : createDurableHost({
          stateDir: dir,
          machines: { workflow: { machine: workflow, version: 1 } },
          now: () => clock.now,
          timers: clock.timers,
          ...(side === "hosted" ? { dormantAfterMs: Number.POSITIVE_INFINITY } : {}),
        });
  const actors: AnyActorRef[] = [];
  const settle = async () => {
    if (host !== undefined) await host.idle();
    else for (let i = 0; i < 3; i++) await turn(); // a promise actor's result is delivered a few ticks on
  };
  try {
    await host?.start();
    const wall = performance.now();
    const cpu = cpuNow();
    await inFlight(N, async (i) => {
      const id = workflowId(i);
      const input = {
        id,
        createdAt: 0,
        firstSleep: firstSleep(i, SLEEPS),
        secondSleep: secondSleep(i, SLEEPS),
      };
      if (host !== undefined) await host.spawn("workflow", id, input);
      else actors.push(createActor(workflow, { id, clock: clock.timers, input }).start());
    });
    const createCpu = cpuNow() - cpu;
    // Every workflow ends by 30 s (two sleeps of at most 15 s) and an effect after each.
    for (let to = 100; effects < 2 * N && to <= 40_000; to += 100) {
      for (let timer = clock.take(to); timer !== undefined; timer = clock.take(to)) {
        clock.now = timer.at;
        timer.fn();
      }
      clock.now = to;
      await settle();
    }
    const used = cpuNow() - cpu;
    if (effects !== 2 * N) throw new Error(`${side}: ${effects} effects ran, expected ${2 * N}`);
    return { cpuUs: used / N, createCpuUs: createCpu / N, wallS: (performance.now() - wall) / 1000, effects };
  } finally {
    for (const actor of actors) actor.stop();
    await host?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const run = (side: Side) =>
  sideProcess<Figures>(fileURLToPath(import.meta.url), ["--n", String(N), "--side", side]);

const only = flag("side");
if (only !== undefined) {
  if (!(SIDES as readonly string[]).includes(only)) throw new Error(`--side takes ${SIDES.join(", ")}`);
  process.stdout.write(JSON.stringify(await measure(only as Side)));
} else {
  const runs: Record<Side, Figures[]> = { xstate: [], hosted: [], dormant: [] };
  // In turn, so that a change in the machine's load falls on every side alike.
  for (let round = 0; round < ROUNDS; round++) for (const side of SIDES) runs[side].push(await run(side));
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };
  const int = (v: number) => Math.round(v).toLocaleString("en-US");
  const rows: Array<[string, (f: Figures) => number, (v: number) => string]> = [
    ["CPU per workflow (µs)", (f) => f.cpuUs, int],
    ["  of which its create (µs)", (f) => f.createCpuUs, int],
    ["wall time (s)", (f) => f.wallS, (v) => v.toFixed(1)],
  ];
  const cell = (side: Side, value: (f: Figures) => number, show: (v: number) => string) => {
    const values = runs[side].map(value);
    const range = ROUNDS === 1 ? "" : ` (${show(Math.min(...values))}–${show(Math.max(...values))})`;
    return `${show(median(values))}${range}`;
  };
  const ratio = (side: Side, value: (f: Figures) => number) =>
    (median(runs[side].map(value)) / median(runs.xstate.map(value))).toFixed(2);
  printTable(
    `${N.toLocaleString("en-US")} peers workflows on a simulated clock, median of ${ROUNDS} rounds: XState alone, the durable host (lowdb) keeping every actor hosted, and by default (dormant once idle 100 ms)`,
    ["", "XState alone", "durable, hosted", "durable, default", "hosted ÷ XState", "default ÷ XState"],
    rows.map(([label, value, show]) => [
      label,
      cell("xstate", value, show),
      cell("hosted", value, show),
      cell("dormant", value, show),
      ratio("hosted", value),
      ratio("dormant", value),
    ]),
  );
}
