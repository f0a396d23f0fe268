// Where this project's peers worker spends memory and GC time while it creates: the worker (lowdb)
// creates N workflows as in the peers benchmark, with V8's GC traced, and is stopped 1 s after its
// creates are done (no kill, no restart). It prints creates/s, peak RSS (VmHWM), the scavenges and their
// pauses, the mark-compacts, the most heap a GC found in use (live and garbage), and the most a
// mark-compact kept (what was live).
//
//   node bench/peers/memory.mjs <N> [dormantAfterMs]
//
// A throwaway state dir under the system's temp dir; the host's default dormantAfterMs unless given.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const [nArg, dormantArg] = process.argv.slice(2);
const N = Number(nArg);
const DORMANT_AFTER_MS = dormantArg === undefined ? undefined : Number(dormantArg);
if (!(N >= 1) || (DORMANT_AFTER_MS !== undefined && !(DORMANT_AFTER_MS >= 0)))
  throw new Error("usage: node bench/peers/memory.mjs <N> [dormantAfterMs]");
const peersDir = dirname(fileURLToPath(import.meta.url));

const dir = await mkdtemp(join(tmpdir(), "a2a-peers-memory-"));
const job = {
  first: 0,
  last: N,
  create: true,
  window: 500,
  sleepMinMs: 5_000,
  sleepMaxMs: 15_000,
  effectsFile: join(dir, "effects.ndjson"),
  stateDir: join(dir, "state"),
  ...(DORMANT_AFTER_MS === undefined ? {} : { dormantAfterMs: DORMANT_AFTER_MS }),
};
const child = spawn(process.execPath, ["--no-deprecation", "--trace-gc", join(peersDir, "a2aWorker.mjs")], {
  cwd: peersDir,
  env: { ...process.env, PEER_JOB: JSON.stringify(job) },
  stdio: ["ignore", "pipe", "inherit"],
});
const gc = {
  scavenges: 0,
  scavengeMs: 0,
  longestScavengeMs: 0,
  markCompacts: 0,
  markCompactMs: 0,
  mostUsedMb: 0,
  mostAfterMb: 0,
};
let created;
let buffered = "";
child.stdout.on("data", (chunk) => {
  buffered += chunk.toString();
  const lines = buffered.split("\n");
  buffered = lines.pop() ?? "";
  for (const line of lines) {
    if (line.startsWith("{")) {
      const message = JSON.parse(line);
      if (message.event === "created") created = message;
      continue;
    }
    // [pid:0x…]  1159 ms: Mark-Compact 58.8 (88.2) -> 42.4 (90.7) MB, 6.58 / 0.02 ms  (+ 32.7 ms in 91 steps …
    const traced =
      /(Scavenge|Mark-Compact)[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \/ [\d.]+ ms(?:\s+\(\+ ([\d.]+) ms)?/.exec(
        line,
      );
    if (traced === null) continue;
    const [, kind, before, after, pause, steps] = traced;
    gc.mostUsedMb = Math.max(gc.mostUsedMb, Number(before));
    if (kind === "Scavenge") {
      gc.scavenges += 1;
      gc.scavengeMs += Number(pause);
      gc.longestScavengeMs = Math.max(gc.longestScavengeMs, Number(pause));
    } else {
      gc.markCompacts += 1;
      gc.markCompactMs += Number(pause) + Number(steps ?? 0);
      gc.mostAfterMb = Math.max(gc.mostAfterMb, Number(after));
    }
  }
});
try {
  while (created === undefined) {
    if (child.exitCode !== null) throw new Error("the worker exited before its creates were done");
    await sleep(50);
  }
  await sleep(1_000);
  const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1]);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  const round = (x) => Math.round(x);
  console.log(
    JSON.stringify({
      n: N,
      dormantAfterMs: DORMANT_AFTER_MS ?? "default",
      createsPerS: round((N / created.ms) * 1000),
      peakRssMb: round(hwmKb / 1024),
      scavenges: gc.scavenges,
      scavengeMs: round(gc.scavengeMs),
      longestScavengeMs: round(gc.longestScavengeMs),
      markCompacts: gc.markCompacts,
      markCompactMs: round(gc.markCompactMs),
      heapUsedMaxMb: round(gc.mostUsedMb),
      heapAfterMarkCompactMaxMb: round(gc.mostAfterMb),
    }),
  );
} finally {
  child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
}
