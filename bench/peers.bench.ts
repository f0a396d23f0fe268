// This project beside its peers, on one workload: N workflows, each a durable sleep of 5–15 s, one side
// effect exactly once, a second sleep, a second effect (bench/peers/workload.mjs). Each system's worker
// process creates the N workflows; once half the effects have run it is SIGKILLed and started again at
// once, and the run ends when every effect has run (or nothing moved for a minute).
// Systems: this project's durable host on the lowdb store, on PostgreSQL with one process and with two
// (the first of the two is killed), DBOS Transact (DBOS.sleep) and pg-boss (startAfter jobs). The
// peers install on demand into bench/peers/node_modules (bench/peers/package.json pins them; they are
// not dependencies of the package). All PostgreSQL systems share one throwaway server started here,
// each in its own database.
// Run: npm run build && npm run bench -- peers [--sizes 1000,10000] [--systems lowdb,pg1,pg2,dbos,pgboss]
//      [--sleep-min-ms 5000] [--sleep-max-ms 15000] [--window 500]
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, open, readdir, rm, stat } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type PostgresServer, startPostgres } from "../test/support/postgres.js";
import { printTable } from "./table.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const peersDir = join(root, "bench", "peers");
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? fallback : (args[at + 1] ?? fallback);
};
const SIZES = option("sizes", "10000").split(",").map(Number);
const SYSTEMS = option("systems", "lowdb,pg1,pg2,dbos,pgboss").split(",");
const SLEEP_MIN_MS = Number(option("sleep-min-ms", "5000"));
const SLEEP_MAX_MS = Number(option("sleep-max-ms", "15000"));
const WINDOW = Number(option("window", "500"));
/** The run ends when no effect has run for this long after the restart. */
const STALL_MS = 60_000;
const TICKS_PER_S = 100;

const LABELS: Record<string, string> = {
  lowdb: "this project, lowdb",
  pg1: "this project, PostgreSQL ×1",
  pg2: "this project, PostgreSQL ×2",
  dbos: "DBOS Transact 5.3",
  pgboss: "pg-boss 10.4",
};
const WORKERS: Record<string, string> = {
  lowdb: "a2aWorker.mjs",
  pg1: "a2aWorker.mjs",
  pg2: "a2aWorker.mjs",
  dbos: "dbosWorker.mjs",
  pgboss: "pgBossWorker.mjs",
};

for (const n of SIZES)
  if (!Number.isInteger(n) || n < 2) throw new Error(`--sizes takes whole numbers ≥ 2, got ${n}`);
for (const s of SYSTEMS)
  if (LABELS[s] === undefined)
    throw new Error(`unknown system ${s}: one of ${Object.keys(LABELS).join(", ")}`);
if (!(SLEEP_MIN_MS > 0 && SLEEP_MAX_MS >= SLEEP_MIN_MS))
  throw new Error("--sleep-min-ms and --sleep-max-ms: 0 < min ≤ max");
if (!(WINDOW >= 1)) throw new Error("--window must be ≥ 1");

interface Figures {
  system: string;
  n: number;
  createsPerS: number;
  lateness: { p50: number; p99: number; max: number };
  peakRssMb: number;
  workerCpuS: number;
  postgresCpuS: number;
  bytesPerWorkflow: number;
  lost: number;
  duplicated: number;
  reruns: number;
  killToFiringMs: number;
}

/** One worker process and what /proc last said of it. */
class Worker {
  readonly child: ChildProcess;
  readonly messages: Array<Record<string, unknown>> = [];
  hwmKb = 0;
  cpuTicks = 0;
  private readonly sampler: NodeJS.Timeout;

  constructor(script: string, job: Record<string, unknown>) {
    this.child = spawn(process.execPath, ["--no-deprecation", join(peersDir, script)], {
      cwd: peersDir,
      env: { ...process.env, PEER_JOB: JSON.stringify(job) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let buffered = "";
    this.child.stdout?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines)
        if (line.startsWith("{")) this.messages.push(JSON.parse(line) as Record<string, unknown>);
    });
    this.sampler = setInterval(() => this.sample(), 200);
  }

  get pid(): number {
    const pid = this.child.pid;
    if (pid === undefined) throw new Error("worker did not start");
    return pid;
  }

  sample(): void {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, "utf8");
      this.hwmKb = Math.max(this.hwmKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      this.cpuTicks = processTicks(this.pid, false);
    } catch {
      // exited
    }
  }

  async waitFor(event: string): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.messages.find((m) => m.event === event);
      if (found !== undefined) return found;
      if (this.child.exitCode !== null || this.child.signalCode !== null)
        throw new Error(`worker ${this.pid} exited before "${event}"`);
      await sleep(20);
    }
  }

  async end(signal: NodeJS.Signals): Promise<void> {
    this.sample();
    clearInterval(this.sampler);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

/** utime + stime (and, with `children`, of the children it waited for) in clock ticks. */
function processTicks(pid: number, children: boolean): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const at = (i: number) => Number(fields[i - 3]);
  return at(14) + at(15) + (children ? at(16) + at(17) : 0);
}

/** The PostgreSQL server's CPU so far: the postmaster, the children it reaped, the live ones. */
async function postgresTicks(pg: PostgresServer): Promise<number> {
  const postmaster = pg.pid();
  if (postmaster === undefined) return 0;
  let ticks = processTicks(postmaster, true);
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === postmaster) ticks += processTicks(Number(name), false);
    } catch {
      // gone
    }
  }
  return ticks;
}

/** The effects file as it grows: each key's first run, and the re-runs. */
class EffectsLog {
  readonly first = new Map<string, { at: number; due: number; pid: number }>();
  duplicated = 0;
  reruns = 0;
  private offset = 0;
  private rest = "";

  constructor(readonly file: string) {}

  async read(): Promise<void> {
    const handle = await open(this.file, "a+");
    try {
      const { size } = await handle.stat();
      if (size <= this.offset) return;
      const buffer = Buffer.alloc(size - this.offset);
      await handle.read(buffer, 0, buffer.length, this.offset);
      this.offset = size;
      const lines = (this.rest + buffer.toString("utf8")).split("\n");
      this.rest = lines.pop() ?? "";
      for (const line of lines) {
        const entry = JSON.parse(line) as { key: string; at: number; due: number; pid: number; rerun?: true };
        if (entry.rerun === true) this.reruns += 1;
        else if (this.first.has(entry.key)) this.duplicated += 1;
        else this.first.set(entry.key, entry);
      }
    } finally {
      await handle.close();
    }
  }
}

async function runSystem(
  system: string,
  n: number,
  pg: PostgresServer,
  emptyDbBytes: number,
): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), `a2a-peers-${system}-`));
  const effects = new EffectsLog(join(dir, "effects.ndjson"));
  const database = system === "lowdb" ? undefined : `peers_${system}_${n}`;
  const connectionString = database === undefined ? undefined : await pg.createDatabase(database);
  const halves =
    system === "pg2"
      ? [
          [0, n >> 1],
          [n >> 1, n],
        ]
      : [[0, n]];
  const job = (k: number, create: boolean) => ({
    first: halves[k]?.[0],
    last: halves[k]?.[1],
    create,
    window: WINDOW,
    sleepMinMs: SLEEP_MIN_MS,
    sleepMaxMs: SLEEP_MAX_MS,
    effectsFile: effects.file,
    ...(connectionString === undefined
      ? { stateDir: join(dir, "state") }
      : { connectionString, instance: `worker-${k}` }),
  });
  const pgBefore = await postgresTicks(pg);
  const workers = halves.map((_, k) => new Worker(WORKERS[system] ?? "", job(k, true)));
  const ended: Worker[] = [];
  try {
    const created = await Promise.all(workers.map((w) => w.waitFor("created")));
    const createMs = Math.max(...created.map((m) => Number(m.ms)));
    // Halfway: as many effects as workflows. The first worker is killed and started again.
    while (effects.first.size < n) {
      if (workers.some((w) => w.child.exitCode !== null)) throw new Error(`a ${system} worker exited early`);
      await effects.read();
      await sleep(50);
    }
    const killed = workers[0] as Worker;
    await killed.end("SIGKILL");
    const killedAt = Date.now();
    ended.push(killed);
    const restarted = new Worker(WORKERS[system] ?? "", job(0, false));
    workers[0] = restarted;
    const killedRange = halves[0] as [number, number];
    let firingAgainAt: number | undefined;
    let lastProgress = Date.now();
    let seen = effects.first.size + effects.reruns;
    while (effects.first.size < 2 * n && Date.now() - lastProgress < STALL_MS) {
      await sleep(100);
      await effects.read();
      if (effects.first.size + effects.reruns > seen) {
        seen = effects.first.size + effects.reruns;
        lastProgress = Date.now();
      }
      firingAgainAt ??= firstFiringAfter(effects, killedAt, killedRange);
    }
    for (const w of workers) w.sample();
    await Promise.all(workers.map((w) => w.end("SIGTERM")));
    ended.push(...workers);
    await effects.read();
    // An effect due while the killed worker was down is the crash's cost, counted in "kill → firing".
    const outage = (e: { due: number }) => e.due >= killedAt && e.due <= (firingAgainAt ?? killedAt);
    const late = [...effects.first.values()]
      .filter((e) => !outage(e))
      .map((e) => e.at - e.due)
      .sort((a, b) => a - b);
    const bytes =
      database === undefined
        ? await directoryBytes(join(dir, "state"))
        : (await databaseBytes(pg, database)) - emptyDbBytes;
    return {
      system,
      n,
      createsPerS: (n / createMs) * 1000,
      lateness: { p50: quantile(late, 0.5), p99: quantile(late, 0.99), max: late.at(-1) ?? Number.NaN },
      peakRssMb: Math.max(...ended.map((w) => w.hwmKb)) / 1024,
      workerCpuS: ended.reduce((sum, w) => sum + w.cpuTicks, 0) / TICKS_PER_S,
      postgresCpuS: database === undefined ? 0 : ((await postgresTicks(pg)) - pgBefore) / TICKS_PER_S,
      bytesPerWorkflow: bytes / n,
      lost: 2 * n - effects.first.size,
      duplicated: effects.duplicated,
      reruns: effects.reruns,
      killToFiringMs: firingAgainAt === undefined ? Number.NaN : firingAgainAt - killedAt,
    };
  } finally {
    await Promise.all(workers.map((w) => w.end("SIGKILL")));
    await rm(dir, { recursive: true, force: true });
  }
}

/** When the first effect of a workflow the killed worker held ran after the kill. */
function firstFiringAfter(
  effects: EffectsLog,
  killedAt: number,
  [from, to]: [number, number],
): number | undefined {
  let earliest: number | undefined;
  for (const [key, e] of effects.first) {
    if (e.at < killedAt) continue;
    const i = Number(/^wf-(\d+)#/.exec(key)?.[1]);
    if (i >= from && i < to && (earliest === undefined || e.at < earliest)) earliest = e.at;
  }
  return earliest;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

async function databaseBytes(pg: PostgresServer, database: string): Promise<number> {
  const rows = await pg.query<{ size: string }>("SELECT pg_database_size($1) AS size", [database]);
  return Number(rows[0]?.size);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function installPeers(): void {
  if (
    existsSync(join(peersDir, "node_modules", "pg-boss")) &&
    existsSync(join(peersDir, "node_modules", "@dbos-inc"))
  )
    return;
  console.log("installing the peers into bench/peers/node_modules (npm ci) …");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: peersDir, stdio: "inherit" });
}

const fixed = (digits: number) => (x: number) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
const ratio = (peer: number, ours: number) =>
  ours > 0 && Number.isFinite(peer) ? `${(peer / ours).toFixed(2)}×` : "–";

async function main(): Promise<void> {
  if (!existsSync(join(root, "dist", "durable", "index.js")))
    throw new Error("run npm run build first: the workers use dist/");
  installPeers();
  console.log(
    `peers: sizes ${SIZES.join(", ")}; sleeps ${SLEEP_MIN_MS}–${SLEEP_MAX_MS} ms; ${WINDOW} creates in flight; ` +
      `node ${process.version}; ${cpus().length} × ${cpus()[0]?.model ?? "?"}; load ${loadavg()[0]?.toFixed(2)}`,
  );
  const pg = await startPostgres({ settings: { max_connections: "200" } });
  try {
    await pg.createDatabase("peers_empty");
    const emptyDbBytes = await databaseBytes(pg, "peers_empty");
    for (const n of SIZES) {
      const rows: Figures[] = [];
      for (const system of SYSTEMS) {
        console.log(`… ${LABELS[system]}, N = ${n}`);
        rows.push(await runSystem(system, n, pg, emptyDbBytes));
      }
      printTable(
        `N = ${n.toLocaleString("en")}: figures (lateness = when an effect ran − when it was due, but for those due between the kill and the first firing after it)`,
        [
          "system",
          "creates/s",
          "late p50 ms",
          "p99 ms",
          "max ms",
          "peak RSS MB",
          "CPU s worker",
          "CPU s PG",
          "bytes/wf",
          "lost",
          "dup",
          "re-runs",
          "kill → firing ms",
        ],
        rows.map((r) => [
          LABELS[r.system] ?? r.system,
          fixed(0)(r.createsPerS),
          fixed(0)(r.lateness.p50),
          fixed(0)(r.lateness.p99),
          fixed(0)(r.lateness.max),
          fixed(0)(r.peakRssMb),
          fixed(1)(r.workerCpuS),
          fixed(1)(r.postgresCpuS),
          fixed(0)(r.bytesPerWorkflow),
          String(r.lost),
          String(r.duplicated),
          String(r.reruns),
          fixed(0)(r.killToFiringMs),
        ]),
      );
      const ours = rows.filter((r) => r.system === "lowdb" || r.system === "pg1");
      const peers = rows.filter((r) => r.system === "dbos" || r.system === "pgboss");
      printTable(
        `N = ${n.toLocaleString("en")}: ratios, peer ÷ this project (creates/s: below 1 = this project faster; the rest: above 1 = this project better)`,
        [
          "peer ÷",
          "creates/s",
          "late p50",
          "p99",
          "max",
          "peak RSS",
          "CPU (worker + PG)",
          "bytes/wf",
          "kill → firing",
        ],
        peers.flatMap((p) =>
          ours.map((o) => [
            `${LABELS[p.system]} ÷ ${LABELS[o.system]}`,
            ratio(p.createsPerS, o.createsPerS),
            ratio(p.lateness.p50, o.lateness.p50),
            ratio(p.lateness.p99, o.lateness.p99),
            ratio(p.lateness.max, o.lateness.max),
            ratio(p.peakRssMb, o.peakRssMb),
            ratio(p.workerCpuS + p.postgresCpuS, o.workerCpuS + o.postgresCpuS),
            ratio(p.bytesPerWorkflow, o.bytesPerWorkflow),
            ratio(p.killToFiringMs, o.killToFiringMs),
          ]),
        ),
      );
    }
  } finally {
    await pg.close();
  }
}

await main();
