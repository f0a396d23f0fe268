// How many shards should the snapshot store use? 10,000 live records of ~1 KB, then 1,000
// single-record updates, each flushed durably on its own (a journal append: the same for every shard
// count), then the compaction that folds them into the shard files (where the shard count matters: it
// bounds the largest single file written, i.e. the longest event-loop block of one stringify), then
// cold open time and one burst of 1,000 puts in a tick (coalesced: one journal append).
// Run: npx tsx bench/snapshotStore.bench.ts [--updates N] [--records N] [--shards 1,8,32,128]
import { statSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { type ActorRecord, LowdbSnapshotStore } from "../src/persistence/index.js";

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return (at >= 0 ? process.argv[at + 1] : undefined) ?? fallback;
}

const RECORDS = Number(option("records", "10000"));
const UPDATES = Number(option("updates", "1000"));
const SHARD_COUNTS = option("shards", "1,8,32,128").split(",").map(Number);
const MACHINE = "mention";

function record(i: number, updatedAt: number): ActorRecord {
  // ~1 KB once serialised: a snapshot shaped like an XState persisted snapshot with some context text.
  return {
    id: `mention:${String(1_000_000_000_000_000 + i * 7919)}`,
    machineId: MACHINE,
    machineVersion: 1,
    snapshot: {
      status: "active",
      value: "waiting",
      context: { attempts: 1, threadId: "1234567890123456789", text: "x".repeat(760), sentAt: updatedAt },
      children: {},
      historyValue: {},
    },
    delayed: [
      { id: "remind", source: [], target: [], event: { type: "REMIND" }, dueAt: updatedAt + 300_000 },
    ],
    status: "active",
    updatedAt,
  };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

interface Row {
  shards: number;
  bytesPerUpdate: number;
  medianMs: number;
  p95Ms: number;
  openMs: number;
  burstMs: number;
  burstWrites: number;
  compactMs: number;
  compactBytes: number;
  largestFileBytes: number;
}

async function measure(shards: number): Promise<Row> {
  const dir = await mkdtemp(join(tmpdir(), "a2a-bench-"));
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const open = () =>
    LowdbSnapshotStore.open({ dir, now, shards, machineVersions: { [MACHINE]: 1 }, onWarning: () => {} });
  try {
    const seed = await open();
    for (let i = 0; i < RECORDS; i++) void seed.put(record(i, clock));
    await seed.close();

    const openStart = performance.now();
    const store = await open();
    const openMs = performance.now() - openStart;

    const before = store.stats().bytesWritten;
    const times: number[] = [];
    let pick = 12345;
    for (let u = 0; u < UPDATES; u++) {
      pick = (pick * 1103515245 + 12345) % 2147483648; // deterministic spread over the ids
      clock += 1000;
      const start = performance.now();
      void store.put(record(pick % RECORDS, clock));
      await store.flush();
      times.push(performance.now() - start);
    }
    const bytesPerUpdate = (store.stats().bytesWritten - before) / UPDATES;

    // Folding those updates into the shard files: every dirty shard written whole, one at a time.
    const compactBefore = store.stats().bytesWritten;
    const compactStart = performance.now();
    await store.compact();
    const compactMs = performance.now() - compactStart;
    const compactBytes = store.stats().bytesWritten - compactBefore;
    const largestFileBytes = Math.max(
      ...(await readdir(join(dir, "actors")))
        .filter((name) => name.endsWith(".json"))
        .map((name) => statSync(join(dir, "actors", name)).size),
    );

    // A burst: 1,000 records updated in one tick coalesce into one batch, one write per touched shard.
    const writesBefore = store.stats().writes;
    clock += 1000;
    const burstStart = performance.now();
    for (let i = 0; i < 1000; i++) void store.put(record(i * 7, clock));
    await store.flush();
    const burstMs = performance.now() - burstStart;
    const burstWrites = store.stats().writes - writesBefore;
    await store.close();
    times.sort((a, b) => a - b);
    return {
      shards,
      bytesPerUpdate,
      medianMs: quantile(times, 0.5),
      p95Ms: quantile(times, 0.95),
      openMs,
      burstMs,
      burstWrites,
      compactMs,
      compactBytes,
      largestFileBytes,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const shards of SHARD_COUNTS) rows.push(await measure(shards));
const base = rows[0];
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
console.log(
  `snapshot store: ${RECORDS} records of ~1 KB, ${UPDATES} single-record updates, each flushed (journal append, fdatasync), then compacted`,
);
console.table(
  rows.map((r) => ({
    shards: r.shards,
    "bytes/update": kb(r.bytesPerUpdate),
    "× bytes vs first": base === undefined ? "" : (r.bytesPerUpdate / base.bytesPerUpdate).toFixed(3),
    "median flush ms": r.medianMs.toFixed(2),
    "× time vs first": base === undefined ? "" : (r.medianMs / base.medianMs).toFixed(3),
    "p95 flush ms": r.p95Ms.toFixed(2),
    "open ms": r.openMs.toFixed(1),
    "1,000-put burst ms": r.burstMs.toFixed(1),
    "burst writes": r.burstWrites,
    "compaction ms": r.compactMs.toFixed(1),
    "compaction bytes": kb(r.compactBytes),
    "largest shard": kb(r.largestFileBytes),
  })),
);
