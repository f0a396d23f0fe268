// What a waiting actor costs, kept hosted against kept as its record (the durable host's
// `dormantAfterMs`): N actors that wait 10 minutes for a delay or an event, on the lowdb store. Each
// side runs in its own process (`--expose-gc`), one after the other, in one run:
// - creates/s: N spawns, 500 in flight, each resolved once durable;
// - heap after a GC once the actors have been idle for 1.5 s (the default dormantAfterMs is 100 ms);
// - events/s: one event to each actor, 500 in flight (a dormant one is hosted again to take it).
// Run: npm run bench -- dormancy [--n 10000]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { assign, setup } from "xstate";
import { createDurableHost } from "../src/durable/index.js";
import { sideProcess } from "./sideProcess.js";
import { printTable } from "./table.js";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? undefined : args[at + 1];
};
const N = Number(flag("n") ?? "10000");
if (!Number.isInteger(N) || N < 1) throw new Error(`--n takes a whole number ≥ 1, got ${flag("n")}`);

interface Figures {
  createsPerS: number;
  heapMb: number;
  hosted: number;
  dormant: number;
  eventsPerS: number;
}

/** Waits 10 minutes; PING is counted. */
const waiting = setup({
  types: { context: {} as { pings: number }, events: {} as { type: "PING" } },
}).createMachine({
  context: { pings: 0 },
  initial: "waiting",
  states: {
    waiting: {
      on: { PING: { actions: assign({ pings: ({ context }) => context.pings + 1 }) } },
      after: { 600_000: "done" },
    },
    done: { type: "final" },
  },
});

async function inFlight(n: number, run: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) await run(next++);
  };
  await Promise.all(Array.from({ length: Math.min(500, n) }, worker));
  return (n / (performance.now() - started)) * 1000;
}

async function measure(dormantAfterMs: number): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), "a2a-dormancy-"));
  const host = createDurableHost({
    stateDir: dir,
    machines: { waiting: { machine: waiting, version: 1 } },
    dormantAfterMs,
  });
  try {
    await host.start();
    const createsPerS = await inFlight(N, (i) => host.spawn("waiting", `a${i}`));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    (globalThis as { gc?: () => void }).gc?.();
    const heapMb = process.memoryUsage().heapUsed / 1e6;
    const { live: hosted, dormant } = host.counts();
    const eventsPerS = await inFlight(N, (i) => host.send(`a${i}`, { type: "PING" }));
    return { createsPerS, heapMb, hosted, dormant, eventsPerS };
  } finally {
    await host.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const side = (dormantAfterMs: string) =>
  sideProcess<Figures>(
    fileURLToPath(import.meta.url),
    ["--n", String(N), "--side", dormantAfterMs],
    ["--expose-gc"],
  );

const only = flag("side");
if (only !== undefined) {
  process.stdout.write(JSON.stringify(await measure(Number(only))));
} else {
  const hosted = await side("Infinity");
  const dormant = await side("1000");
  const int = (v: number) => Math.round(v).toLocaleString("en-US");
  const rows: Array<[string, (f: Figures) => number, (v: number) => string]> = [
    ["creates/s", (f) => f.createsPerS, int],
    ["heap after a GC, idle 1.5 s (MB)", (f) => f.heapMb, (v) => v.toFixed(1)],
    ["actors hosted / dormant", (f) => f.hosted, int],
    ["events/s (one to each actor)", (f) => f.eventsPerS, int],
  ];
  printTable(
    `${N.toLocaleString("en-US")} waiting actors on the lowdb store: kept hosted (dormantAfterMs Infinity) against dormant once idle (100 ms)`,
    ["", "hosted", "dormant", "dormant ÷ hosted"],
    rows.map(([label, value, show]) => [
      label,
      label.startsWith("actors") ? `${int(hosted.hosted)} / ${int(hosted.dormant)}` : show(value(hosted)),
      label.startsWith("actors") ? `${int(dormant.hosted)} / ${int(dormant.dormant)}` : show(value(dormant)),
      label.startsWith("actors") ? "" : (value(dormant) / value(hosted)).toFixed(2),
    ]),
  );
}
