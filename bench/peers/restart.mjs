// A killed worker's restart, on one state dir, as often as asked: how long `host.start()` takes on
// what a `kill -9` left (a journal not yet folded, actors inside an effect), the same dir every run.
//
//   node bench/peers/restart.mjs <N> <dir> [runs]
//
// The first call makes <dir>: this project's peers worker (lowdb) creates N workflows and is SIGKILLed
// once N effects have run, as in the peers benchmark. Every run copies <dir>/state afresh, starts the
// worker on the copy (no creates), watches it for 5 s, and kills it; it prints the `started` figure
// and how many effects ran by 1.5, 3 and 5 s after start() resolved. On a dir made
// earlier every due time is past: the restart after a long outage. To compare two builds, run this
// file of each checkout on the same <dir>, alternating.
import { spawn } from "node:child_process";
import { cp, mkdir, readFile, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const [nArg, dir, runsArg] = process.argv.slice(2);
const N = Number(nArg);
const RUNS = Number(runsArg ?? "3");
if (!(N >= 1) || dir === undefined || !(RUNS >= 1))
  throw new Error("usage: node bench/peers/restart.mjs <N> <dir> [runs]");
/** How long each run watches the restarted worker's effects. */
const WATCH_MS = 5_000;
const worker = join(dirname(fileURLToPath(import.meta.url)), "a2aWorker.mjs");

/** The peers worker on `stateDir`, as the peers benchmark runs it; resolves its `started` message. */
function run(stateDir, effectsFile, create) {
  const job = {
    first: 0,
    last: N,
    create,
    window: 500,
    sleepMinMs: 5_000,
    sleepMaxMs: 15_000,
    effectsFile,
    stateDir,
  };
  const child = spawn(process.execPath, ["--no-deprecation", worker], {
    cwd: dirname(worker),
    env: { ...process.env, PEER_JOB: JSON.stringify(job) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const started = new Promise((resolve, reject) => {
    let text = "";
    child.stdout.on("data", (chunk) => {
      text += chunk;
      const line = text.split("\n").find((l) => l.includes('"started"'));
      if (line !== undefined) resolve(JSON.parse(line));
    });
    child.once("exit", (code) => reject(new Error(`the worker exited (${code}) before it started`)));
  });
  return { child, started };
}

async function effects(file) {
  try {
    return (await readFile(file, "utf8")).split("\n").length - 1;
  } catch {
    return 0;
  }
}

const made = await stat(join(dir, "state")).then(
  () => true,
  () => false,
);
if (!made) {
  await mkdir(dir, { recursive: true });
  const file = join(dir, "effects.ndjson");
  const { child } = run(join(dir, "state"), file, true);
  while ((await effects(file)) < N) await sleep(100);
  child.kill("SIGKILL");
  console.log(`made ${dir}: killed after ${await effects(file)} effects`);
}
for (let i = 0; i < RUNS; i++) {
  const copy = join(dir, "run");
  await rm(copy, { recursive: true, force: true });
  await cp(join(dir, "state"), join(copy, "state"), { recursive: true });
  await cp(join(dir, "effects.ndjson"), join(copy, "effects.ndjson"));
  const before = await effects(join(copy, "effects.ndjson"));
  const { child, started } = run(join(copy, "state"), join(copy, "effects.ndjson"), false);
  const { ms } = await started;
  const startedAt = Date.now();
  await sleep(WATCH_MS);
  child.kill("SIGKILL");
  const ran = (await readFile(join(copy, "effects.ndjson"), "utf8"))
    .split("\n")
    .slice(before, -1)
    .map((line) => JSON.parse(line).at - startedAt);
  const by = (ms) => ran.filter((at) => at <= ms).length;
  console.log(
    JSON.stringify({
      run: i + 1,
      startMs: Math.round(ms),
      effectsBy1500Ms: by(1_500),
      effectsBy3000Ms: by(3_000),
      effectsBy5000Ms: by(5_000),
    }),
  );
}
await rm(join(dir, "run"), { recursive: true, force: true });
