// The measured process of the scale benchmark: `node --expose-gc bench/scale/measure.mjs <dir> <live>`
// on a state dir populate.mjs wrote. Plain node on the built dist/, importing what a gateway imports
// (the package root) plus, for instrumentation only, the snapshot store's module, which the root has
// loaded already. Prints one JSON line of figures.
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { dirname, join } from "node:path";
import { PerformanceObserver, monitorEventLoopDelay, performance } from "node:perf_hooks";
import { clearInterval, setInterval, setTimeout } from "node:timers";
import { fileURLToPath } from "node:url";
import { getHeapStatistics } from "node:v8";
import { CountingDiscord, FIRST_DUE, config } from "./common.mjs";

const [dir, liveArg, secondsArg] = process.argv.slice(2);
const LIVE = Number(liveArg);
const DRIVE_MS = Number(secondsArg ?? "10") * 1000;
const LEAD_MS = 1_000;
const SETTLE_MS = 60_000;
if (dir === undefined || !(LIVE > 0) || !(DRIVE_MS > 0))
  throw new Error("usage: measure.mjs <dir> <live> [seconds]");
if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist");

// ---- every file write, by file handle: the largest single write, whatever wrote it. A file written
// whole (opened "w": a shard, an archive hour rewritten by prune) counts from open to close; a file
// appended to (a journal segment, the store's or the thread state's, an archive hour) counts per call.
const handlePath = new WeakMap();
const wholeFile = new WeakSet();
const handleBytes = new WeakMap();
const files = { bytes: 0, largest: 0, largestPath: "" };
const noteLargest = (handle, bytes) => {
  if (bytes <= files.largest) return;
  files.largest = bytes;
  files.largestPath = handlePath.get(handle) ?? "?";
};
const realOpen = fsp.open;
fsp.open = async function open(path, ...rest) {
  const handle = await realOpen.call(this, path, ...rest);
  handlePath.set(handle, String(path));
  // A journal segment is created "w" too, then appended to.
  const created = typeof rest[0] === "string" && rest[0].startsWith("w");
  if (created && !/journal-\d+\.ndjson$/.test(String(path))) wholeFile.add(handle);
  return handle;
};
syncBuiltinESMExports();
{
  const probe = await realOpen(fileURLToPath(import.meta.url), "r");
  const proto = Object.getPrototypeOf(probe);
  await probe.close();
  const count = (handle, bytes) => {
    files.bytes += bytes;
    handleBytes.set(handle, (handleBytes.get(handle) ?? 0) + bytes);
    noteLargest(handle, bytes); // one call (a journal append: its handle stays open)
  };
  const { write, writeFile, close } = proto;
  proto.write = async function (...args) {
    const result = await write.apply(this, args);
    count(this, result.bytesWritten);
    return result;
  };
  proto.writeFile = async function (data, ...rest) {
    await writeFile.call(this, data, ...rest);
    count(this, typeof data === "string" ? Buffer.byteLength(data) : data.byteLength);
  };
  proto.close = async function () {
    if (wholeFile.has(this)) noteLargest(this, handleBytes.get(this) ?? 0); // written whole, in pieces
    return close.call(this);
  };
}

const rssAtLaunch = process.memoryUsage().rss;
const { createA2ARuntime } = await import(join(dist, "index.js"));
const { LowdbSnapshotStore } = await import(join(dist, "persistence", "LowdbSnapshotStore.js"));
const { ThreadStateStore } = await import(join(dist, "runtime", "threadStatePersistence.js"));
const rssAfterImport = process.memoryUsage().rss;

// ---- instrumentation: store open, thread-state open, compactions, put() for the persistence lag.
const phases = { storeOpenMs: 0, threadStateOpenMs: 0 };
const compactions = [];
let store;
const open = LowdbSnapshotStore.open.bind(LowdbSnapshotStore);
LowdbSnapshotStore.open = async (options) => {
  const started = performance.now();
  store = await open(options);
  phases.storeOpenMs += performance.now() - started;
  return store;
};
const openThreads = ThreadStateStore.open.bind(ThreadStateStore);
ThreadStateStore.open = async (options) => {
  const started = performance.now();
  try {
    return await openThreads(options);
  } finally {
    phases.threadStateOpenMs += performance.now() - started;
  }
};
// The thread state's folds (each writes the whole state into a new journal segment).
const threadFolds = [];
const foldThreads = ThreadStateStore.prototype.fold;
/** Compactions and folds the drive started, awaited after it: a long one may end after the window. */
const driveRuns = [];
function timedRun(list, fn) {
  return function (...args) {
    const at = performance.now();
    const inDrive = measuring;
    const run = fn.apply(this, args).finally(() => {
      if (inDrive) list.push(performance.now() - at);
    });
    if (inDrive) driveRuns.push(run.catch(() => undefined));
    return run;
  };
}
ThreadStateStore.prototype.fold = timedRun(threadFolds, foldThreads);
// Garbage-collection pauses in the drive.
const gcPauses = [];
new PerformanceObserver((list) => {
  if (measuring) for (const entry of list.getEntries()) gcPauses.push(entry.duration);
}).observe({ entryTypes: ["gc"] });
const runCompaction = LowdbSnapshotStore.prototype.runCompaction;
LowdbSnapshotStore.prototype.runCompaction = timedRun(compactions, runCompaction);
const unpersisted = new Map();
const lags = [];
let recordsPut = 0;
let recordBytesPut = 0;
const putAll = LowdbSnapshotStore.prototype.putAll;
LowdbSnapshotStore.prototype.putAll = function (records) {
  const promise = putAll.call(this, records);
  if (measuring) {
    recordsPut += records.length;
    for (const record of records) recordBytesPut += JSON.stringify(record).length;
  }
  for (const record of records) {
    const pending = unpersisted.get(record.id);
    if (pending === undefined) continue;
    unpersisted.delete(record.id);
    promise.then(
      () => {
        const durable = performance.now();
        for (const at of pending) lags.push(durable - at);
      },
      () => undefined,
    );
  }
  return promise;
};

let measuring = false;
let transitions = 0;
let firstAt = Number.NaN;
let lastAt = Number.NaN;
const lastValue = new WeakMap();
const rootIds = new Map();
function inspect(event) {
  if (event.type === "@xstate.actor") {
    if (event.actorRef.sessionId === event.rootId) rootIds.set(event.rootId, event.actorRef.id);
    return;
  }
  if (event.type !== "@xstate.snapshot" || event.snapshot.value === undefined) return;
  const value = `${event.snapshot.status}:${JSON.stringify(event.snapshot.value)}`;
  const previous = lastValue.get(event.actorRef);
  lastValue.set(event.actorRef, value);
  if (!measuring || previous === undefined || previous === value) return;
  const id = rootIds.get(event.rootId);
  if (id === undefined) return;
  const at = performance.now();
  transitions++;
  if (Number.isNaN(firstAt)) firstAt = at;
  lastAt = at;
  const pending = unpersisted.get(id);
  if (pending === undefined) unpersisted.set(id, [at]);
  else pending.push(at);
}

const quantile = (values, q) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let peakRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 20);

// The clock stands still LEAD_MS before the first due time until the drive starts.
let frozen = FIRST_DUE - LEAD_MS;
let base = frozen;
let realAt = 0;
const end = FIRST_DUE + DRIVE_MS;
const now = () => frozen ?? Math.min(end, base + (performance.now() - realAt));
const warnings = [];
const discord = new CountingDiscord(1_500_000_000_000_000_000n);
const runtime = createA2ARuntime({
  stateDir: dir,
  config,
  discord,
  now,
  onWarning: (w) => warnings.push(w),
  inspect,
});

const startedAt = performance.now();
await runtime.start();
const startMs = performance.now() - startedAt;
const peakRssAfterStart = Math.max(peakRss, process.resourceUsage().maxRSS * 1024);
// mentions() would read the whole archive (it lists finished mentions too): count the live records.
const counts0 = store.stats();
if (counts0.liveRecords !== LIVE)
  throw new Error(`expected ${LIVE} live collaborations after start, found ${counts0.liveRecords}`);
globalThis.gc();
const heapAfterStart = process.memoryUsage().heapUsed;

// ---- the drive: from FIRST_DUE on, one mention falls due every 2 ms (pending → reminding → reminded).
const stats0 = store.stats();
const files0 = files.bytes;
const largestInStart = { bytes: files.largest, path: files.largestPath };
files.largest = 0;
files.largestPath = "";
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
measuring = true;
base = frozen;
realAt = performance.now();
frozen = undefined;
await sleep(LEAD_MS + DRIVE_MS);
const settleBy = performance.now() + SETTLE_MS;
const reminded = async () => {
  let count = 0;
  store.forEachLive((record) => {
    if (record.meta?.mention?.status === "reminded") count++;
  });
  return count;
};
while (unpersisted.size > 0 && performance.now() < settleBy) await sleep(50);
measuring = false;
await store.flush();
await Promise.all(driveRuns);
await sleep(50);
loop.disable();
const stats1 = store.stats();
const filesWindow = files.bytes - files0;
const largestInDrive = { bytes: files.largest, path: files.largestPath };
clearInterval(sampler);
const peak = Math.max(peakRss, process.resourceUsage().maxRSS * 1024);
const remindedCount = await reminded();

globalThis.gc();
globalThis.gc();
const steady = process.memoryUsage();
const heap = getHeapStatistics();
await runtime.stop();

// ---- status, as a user runs it, on the state dir the runtime left.
const statusStarted = performance.now();
let statusError = "";
const statusCode = await new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [join(dist, "cli", "bin.js"), "status", "--state-dir", dir], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr.on("data", (chunk) => (statusError += chunk.toString()));
  child.on("error", reject);
  child.on("exit", resolve);
});
const statusMs = performance.now() - statusStarted;

async function du(path) {
  const info = await fsp.stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const name of await fsp.readdir(path)) total += await du(join(path, name));
  return total;
}

console.log(
  JSON.stringify({
    live: LIVE,
    startMs,
    storeOpenMs: phases.storeOpenMs,
    threadStateOpenMs: phases.threadStateOpenMs,
    hostedAfterStart: counts0.liveRecords,
    archivedRecords: counts0.archivedRecords,
    rssAtLaunch,
    rssAfterImport,
    peakRssAfterStart,
    peakRss: peak,
    steadyRss: steady.rss,
    heapUsed: steady.heapUsed,
    heapAfterStart,
    heapLimit: heap.heap_size_limit,
    transitions,
    transitionsPerS: transitions / ((lastAt - firstAt) / 1000),
    lagP50: quantile(lags, 0.5),
    lagP99: quantile(lags, 0.99),
    lagsMeasured: lags.length,
    storeBytesPerTransition: (stats1.bytesWritten - stats0.bytesWritten) / transitions,
    allBytesPerTransition: filesWindow / transitions,
    journalAppends: stats1.journalAppends - stats0.journalAppends,
    journalBytes: stats1.journalBytes - stats0.journalBytes,
    storeCompactions: stats1.compactions - stats0.compactions,
    recordsPut,
    recordBytesPut,
    compactions: compactions.length,
    compactionMsMax: compactions.length === 0 ? 0 : Math.max(...compactions),
    compactionMsTotal: compactions.reduce((a, b) => a + b, 0),
    largestWriteInStart: largestInStart.bytes,
    largestWriteInStartPath: largestInStart.path.slice(dir.length + 1).replace(/\.tmp-\d+$/, ""),
    largestWrite: largestInDrive.bytes,
    largestWritePath: largestInDrive.path.slice(dir.length + 1).replace(/\.tmp-\d+$/, ""),
    loopP99: loop.percentile(99) / 1e6,
    reminded: remindedCount,
    statusMs,
    statusCode,
    statusError: statusError.split("\n").find((line) => /error/i.test(line)) ?? statusError.slice(0, 200),
    threadFolds: threadFolds.length,
    threadFoldMsMax: threadFolds.length === 0 ? 0 : Math.max(...threadFolds),
    gcPauseMsMax: gcPauses.length === 0 ? 0 : Math.max(...gcPauses),
    gcPauseMsTotal: gcPauses.reduce((a, b) => a + b, 0),
    stateDirBytes: await du(dir),
    warnings: warnings.slice(0, 5),
  }),
);
