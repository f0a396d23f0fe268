// Issue 18's growth table: the runtime at 1,000, 10,000 and 100,000 live collaborations, each with ten
// times as many finished (archived) ones spread over the month before and the thread state that leaves
// (see bench/scale/populate.mjs). Per size, in one run of a measured process (bench/scale/measure.mjs,
// plain `node --expose-gc` on the built dist/, importing the package root): start() time, peak and
// steady RSS, V8 heap used, bytes written per transition, persistence lag p50/p99 at ~1,000
// transitions/s, compaction time, the largest single write, `status` time and the state dir's size.
// Prints the table with each ×10 growth and the issue's targets, and writes docs/scale.json and
// docs/scale.svg.
// Run: npm run bench -- scale [--sizes 1000,10000,100000] [--seconds 10] (or SCALE_SIZES=1000,10000
//      SCALE_SECONDS=10 npm run bench -- scale; a flag wins over its variable), or the same flags to
//      npx tsx bench/scale.bench.ts
import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { growthSvg } from "./scale/plot.js";
import { printTable } from "./table.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
function option(name: string): string | undefined {
  const at = args.indexOf(`--${name}`);
  return at < 0 ? process.env[`SCALE_${name.toUpperCase()}`] : args[at + 1];
}
const SIZES = (option("sizes") ?? "1000,10000,100000").split(",").map((s) => Number(s.trim()));
if (SIZES.some((n) => !Number.isInteger(n) || n < 132))
  throw new Error(
    `--sizes takes whole numbers ≥ 132 (one per agent pair), comma-separated; got ${option("sizes")}`,
  );
const SECONDS = Number(option("seconds") ?? "10");
if (!(SECONDS > 0)) throw new Error(`--seconds must be a positive number, got ${option("seconds")}`);
/** The measured process may grow past V8's default heap limit (~4 GB here) at 100,000: let it, to see it. */
const HEAP_LIMIT_MB = 16_384;

/** What measure.mjs prints (one JSON line). */
interface Figures {
  live: number;
  startMs: number;
  storeOpenMs: number;
  threadStateOpenMs: number;
  archivedRecords: number;
  rssAfterImport: number;
  peakRssAfterStart: number;
  peakRss: number;
  steadyRss: number;
  heapUsed: number;
  heapAfterStart: number;
  transitions: number;
  transitionsPerS: number;
  lagP50: number;
  lagP99: number;
  lagsMeasured: number;
  storeBytesPerTransition: number;
  allBytesPerTransition: number;
  journalAppends: number;
  journalBytes: number;
  storeCompactions: number;
  recordsPut: number;
  recordBytesPut: number;
  compactions: number;
  compactionMsMax: number;
  compactionMsTotal: number;
  largestWriteInStart: number;
  largestWriteInStartPath: string;
  largestWrite: number;
  largestWritePath: string;
  loopP99: number;
  reminded: number;
  statusMs: number;
  statusCode: number;
  statusError: string;
  threadFolds: number;
  threadFoldMsMax: number;
  gcPauseMsMax: number;
  gcPauseMsTotal: number;
  stateDirBytes: number;
  warnings: string[];
}
interface Populated {
  live: number;
  finished: number;
  threadEntries: Record<string, number>;
  seconds: number;
}
interface Run {
  size: number;
  populated: Populated;
  figures: Figures;
  measureSeconds: number;
}

function node(argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`node ${argv.join(" ")}: ${signal ?? `exit code ${code}`}`)),
    );
  });
}
const lastJson = <T>(out: string): T => JSON.parse(out.trim().split("\n").at(-1) ?? "") as T;

async function newest(dir: string): Promise<number> {
  let latest = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) latest = Math.max(latest, (await stat(join(entry.parentPath, entry.name))).mtimeMs);
  return latest;
}

/** The measured process runs on dist/: built here when missing or older than src/. */
async function ensureBuilt(): Promise<void> {
  const built = await stat(join(root, "dist", "index.js")).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built >= (await newest(join(root, "src")))) return;
  console.log("dist/ is missing or older than src/: npm run build");
  await new Promise<void>((resolve, reject) => {
    const child = spawn("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`npm run build: exit code ${code}`)),
    );
  });
}

async function runSize(size: number): Promise<Run> {
  const dir = await mkdtemp(join(tmpdir(), `a2a-scale-${size}-`));
  try {
    const populated = lastJson<Populated>(
      await node([`--max-old-space-size=${HEAP_LIMIT_MB}`, "bench/scale/populate.mjs", dir, String(size)]),
    );
    const started = performance.now();
    const figures = lastJson<Figures>(
      await node([
        "--expose-gc",
        `--max-old-space-size=${HEAP_LIMIT_MB}`,
        "bench/scale/measure.mjs",
        dir,
        String(size),
        String(SECONDS),
      ]),
    );
    return { size, populated, figures, measureSeconds: (performance.now() - started) / 1000 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const MB = 1024 * 1024;
const int = (v: number) => Math.round(v).toLocaleString("en-US");
const ms = (v: number) => (v >= 100 ? `${int(v)} ms` : `${v.toFixed(1)} ms`);
const mb = (v: number) => `${(v / MB).toFixed(v < 10 * MB ? 1 : 0)} MB`;
const kb = (v: number) => `${(v / 1024).toFixed(1)} KB`;

interface Row {
  label: string;
  value: (f: Figures, r: Run) => number;
  show: (v: number, f: Figures) => string;
  /** The issue's target at a given size, if any: [text, met?]. */
  target?: (size: number, v: number) => [string, boolean] | undefined;
}

const ROWS: Row[] = [
  {
    label: "start()",
    value: (f) => f.startMs,
    show: ms,
    target: (n, v) =>
      n === 10_000 ? ["< 500 ms", v < 500] : n === 100_000 ? ["< 3 s", v < 3000] : undefined,
  },
  { label: "  snapshot store open (read, parse, check)", value: (f) => f.storeOpenMs, show: ms },
  { label: "  thread state open", value: (f) => f.threadStateOpenMs, show: ms },
  {
    label: "peak RSS (start + drive)",
    value: (f) => f.peakRss,
    show: mb,
    target: (n, v) =>
      n === 10_000 ? ["< 250 MB", v < 250 * MB] : n === 100_000 ? ["< 1 GB", v < 1024 * MB] : undefined,
  },
  { label: "  peak RSS by the end of start()", value: (f) => f.peakRssAfterStart, show: mb },
  { label: "  RSS after the root import", value: (f) => f.rssAfterImport, show: mb },
  { label: "steady RSS (after drive + full GC)", value: (f) => f.steadyRss, show: mb },
  { label: "V8 heap used, steady", value: (f) => f.heapUsed, show: mb },
  {
    label: "archived records (on disk, 16 bytes each in memory)",
    value: (f) => f.archivedRecords,
    show: int,
  },
  { label: "transitions/s", value: (f) => f.transitionsPerS, show: int },
  { label: "persistence lag p50", value: (f) => f.lagP50, show: ms },
  {
    label: "persistence lag p99",
    value: (f) => f.lagP99,
    show: ms,
    target: (n, v) => (n === 100_000 ? ["< 100 ms", v < 100] : undefined),
  },
  { label: "bytes written / transition: snapshot store", value: (f) => f.storeBytesPerTransition, show: kb },
  { label: "bytes written / transition: all files", value: (f) => f.allBytesPerTransition, show: kb },
  { label: "  journal appends / transition", value: (f) => f.journalBytes / f.transitions, show: kb },
  {
    label: "  records put / transition",
    value: (f) => f.recordsPut / f.transitions,
    show: (v) => v.toFixed(2),
  },
  { label: "store compactions started in the drive", value: (f) => f.compactions, show: int },
  { label: "  longest compaction", value: (f) => f.compactionMsMax, show: ms },
  { label: "thread-state folds started in the drive", value: (f) => f.threadFolds, show: int },
  { label: "  longest thread-state fold", value: (f) => f.threadFoldMsMax, show: ms },
  { label: "GC pauses in the drive: longest", value: (f) => f.gcPauseMsMax, show: ms },
  { label: "  total", value: (f) => f.gcPauseMsTotal, show: ms },
  {
    label: "largest single write in start()",
    value: (f) => f.largestWriteInStart,
    show: (v, f) => `${mb(v)} (${f.largestWriteInStartPath})`,
    target: (n, v) => (n === 100_000 ? ["≤ 16 MB", v <= 16 * MB] : undefined),
  },
  {
    label: "largest single write in the drive",
    value: (f) => f.largestWrite,
    show: (v, f) => `${mb(v)} (${f.largestWritePath})`,
    target: (n, v) => (n === 100_000 ? ["≤ 16 MB", v <= 16 * MB] : undefined),
  },
  { label: "event-loop delay p99 in the drive", value: (f) => f.loopP99, show: ms },
  {
    label: "status (CLI, child process)",
    value: (f) => f.statusMs,
    show: (v, f) => (f.statusCode === 0 ? ms(v) : `failed after ${ms(v)}`),
  },
  { label: "state dir size", value: (f) => f.stateDirBytes, show: mb },
];

function growth(runs: Run[], row: Row): string[] {
  const cells: string[] = [];
  for (let i = 1; i < runs.length; i++) {
    const [a, b] = [runs[i - 1], runs[i]];
    if (a === undefined || b === undefined) continue;
    const [va, vb] = [row.value(a.figures, a), row.value(b.figures, b)];
    cells.push(va > 0 ? `${(vb / va).toFixed(2)}×` : "");
  }
  return cells;
}

async function main(): Promise<void> {
  await ensureBuilt();
  const runs: Run[] = [];
  for (const size of SIZES) {
    const run = await runSize(size);
    runs.push(run);
    const f = run.figures;
    console.log(
      `${int(size)} live: populated in ${run.populated.seconds.toFixed(0)} s (${int(run.populated.finished)} finished; ` +
        `thread entries ${JSON.stringify(run.populated.threadEntries)}), measured in ${run.measureSeconds.toFixed(0)} s; ` +
        `${int(f.reminded)} reminded, ${int(f.lagsMeasured)} of ${int(f.transitions)} transitions persisted, status exit ${f.statusCode}` +
        (f.statusCode === 0 ? "" : ` (${f.statusError})`) +
        (f.warnings.length > 0 ? `; warnings: ${f.warnings.join(" | ")}` : ""),
    );
  }
  const steps = runs.slice(1).map((r, i) => `${int(r.size / 1000)}k ÷ ${int((runs[i]?.size ?? 1) / 1000)}k`);
  const verdicts = (row: Row) =>
    runs
      .map((r) => [r.size, row.target?.(r.size, row.value(r.figures, r))] as const)
      .filter((t): t is readonly [number, [string, boolean]] => t[1] !== undefined)
      .map(([n, [text, met]]) => `${int(n / 1000)}k ${text}: ${met ? "met" : "MISSED"}`)
      .join("; ");
  const rows = ROWS.map((row) => [
    row.label,
    ...runs.map((r) => row.show(row.value(r.figures, r), r.figures)),
    ...growth(runs, row),
    verdicts(row),
  ]);
  const perTransition = runs.map((r) => r.figures.storeBytesPerTransition);
  const spread = Math.max(...perTransition) / Math.min(...perTransition);
  rows.push([
    "bytes / transition independent of size",
    ...runs.map(() => ""),
    ...steps.map(() => ""),
    `largest ÷ smallest ${spread.toFixed(2)} (store): ${spread <= 1.2 ? "met" : "MISSED"} (within 20%)`,
  ]);
  console.log(
    `\nscale: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB, ` +
      `load average ${loadavg()[0]?.toFixed(2)}; drive ${SECONDS} s at ~1,000 transitions/s`,
  );
  printTable(
    "growth with the live collaborations (10 × as many finished ones, a month of thread state)",
    ["measure", ...runs.map((r) => `${int(r.size)} live`), ...steps, "target"],
    rows,
  );

  const docs = join(root, "docs");
  await writeFile(
    join(docs, "scale.json"),
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, cpus: cpus().length, seconds: SECONDS, runs }, null, 2)}\n`,
  );
  const pick = (label: string, unit: string, value: (f: Figures) => number, scale = 1) => ({
    title: label,
    unit,
    values: runs.map((r) => value(r.figures) / scale),
  });
  await writeFile(
    join(docs, "scale.svg"),
    growthSvg(
      `npm run bench -- scale, ${new Date().toISOString().slice(0, 10)}`,
      runs.map((r) => r.size),
      [
        pick("start()", " ms", (f) => f.startMs),
        pick("peak RSS", " MB", (f) => f.peakRss, MB),
        pick("steady V8 heap used", " MB", (f) => f.heapUsed, MB),
        pick("bytes / transition (store)", " B", (f) => f.storeBytesPerTransition),
        pick("persistence lag p99", " ms", (f) => f.lagP99),
        pick("largest single write", " MB", (f) => f.largestWrite, MB),
        pick("longest compaction", " ms", (f) => f.compactionMsMax),
        pick("status", " ms", (f) => f.statusMs),
        pick("state dir size", " MB", (f) => f.stateDirBytes, MB),
      ],
    ),
  );
  console.log("\nwrote docs/scale.json and docs/scale.svg");
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
