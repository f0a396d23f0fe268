import { chmod, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type ActorRecord,
  DEFAULT_SHARDS,
  InvalidActorRecordError,
  LowdbSnapshotStore,
  type SnapshotStoreOptions,
  SnapshotStoreClosedError,
  SnapshotStoreWriteError,
  StateDirNotWritableError,
  readStateDir,
  shardOf,
} from "../../src/persistence/index.js";
import { canWriteIn, tempDirs } from "./tempDirs.js";
import { shardFileText, shardPath, shardRecords } from "../support/shardFiles.js";
import { STORE_T0, archiveLines, storeRecord } from "../support/storeRecords.js";

const dirs = tempDirs();
/** Every store a test opened: closed after it (a test may leave one open to play a crash). */
const opened: LowdbSnapshotStore[] = [];
afterEach(async () => {
  // The latest first: a store reopened on a dir folds in the background, and an earlier one left open
  // (a crash played) must not write beside it.
  for (const store of opened.splice(0).reverse()) await store.close().catch(() => undefined);
  vi.useRealTimers();
  await dirs.cleanup();
});

const T0 = STORE_T0;
const DAY = 86_400_000;
const VERSIONS = { mention: 2, collaborate: 1 };

const rec = storeRecord;
/** The journal segment a store opened on a new directory makes at open, for its appends (empty until one). */
const OWN_SEGMENT = "journal-000001.ndjson";

interface Opened {
  store: LowdbSnapshotStore;
  warnings: string[];
}

async function open(dir: string, options: Partial<SnapshotStoreOptions> = {}): Promise<Opened> {
  const warnings: string[] = [];
  const store = await LowdbSnapshotStore.open({
    dir,
    now: () => T0,
    shards: 4,
    machineVersions: VERSIONS,
    onWarning: (m) => warnings.push(m),
    ...options,
  });
  opened.push(store);
  return { store, warnings };
}

const shardFile = shardPath;

/** Every record found in the live shard files on disk, by id. */
async function onDisk(dir: string, sub = "actors"): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of await readdir(join(dir, sub))) {
    if (!name.endsWith(".ndjson") || name.startsWith("journal-")) continue;
    Object.assign(out, await shardRecords(join(dir, sub, name)));
  }
  return out;
}

describe("LowdbSnapshotStore: durability and coalescing", () => {
  it("has on disk exactly what was put once flush() resolves, and a reopened store loads it", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    const records = Array.from({ length: 20 }, (_, i) => rec(`mention:${i}`, { meta: { n: i } }));
    for (const r of records) void store.put(r);
    await store.flush();
    await store.compact();
    const disk = await onDisk(dir);
    expect(disk).toEqual(Object.fromEntries(records.map((r) => [r.id, r])));
    for (const r of records) expect((await shardRecords(shardFile(dir, r.id, 4)))[r.id]).toEqual(r);
    expect(await readdir(join(dir, "actors"))).not.toContainEqual(expect.stringContaining(".tmp-"));
    await store.close();

    const again = await open(dir);
    expect(again.store.load().sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [...records].sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect(again.warnings).toEqual([]);
  });

  it("puts a list as one journal append, or refuses it whole when one record is invalid", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.putAll([rec("mention:1"), rec("mention:2"), rec("mention:3", { status: "done" })]);
    expect(store.stats()).toMatchObject({ journalAppends: 1, liveRecords: 2, archivedRecords: 1 });
    await expect(store.putAll([rec("mention:4"), rec("mention:5", { machineVersion: 1 })])).rejects.toThrow(
      InvalidActorRecordError,
    );
    expect(await store.get("mention:4")).toBeUndefined();
    await store.putAll([]);
    expect(store.stats().journalAppends).toBe(1);
  });

  it("coalesces 1,000 puts across shards into at most one write per shard", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { shards: 8 });
    const promises = Array.from({ length: 1000 }, (_, i) => store.put(rec(`mention:${i}`)));
    await store.flush();
    await Promise.all(promises);
    expect(store.stats()).toMatchObject({ writes: 1, journalAppends: 1 }); // one journal append
    expect(new Set(promises).size).toBe(1); // every put of the tick joined the same batch
    await store.compact();
    expect(store.stats().writes).toBeLessThanOrEqual(1 + 8);
    expect(Object.keys(await onDisk(dir))).toHaveLength(1000);
  });

  it("collects the puts made while a batch is writing into the next batch", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { shards: 2 });
    const first = store.put(rec("a"));
    await Promise.resolve(); // the first batch has started
    await Promise.resolve();
    const later = Array.from({ length: 50 }, (_, i) => store.put(rec(`b${i}`)));
    expect(new Set(later).size).toBe(1);
    expect(later[0]).not.toBe(first);
    await store.flush();
    expect(store.stats().writes).toBe(2); // two journal appends
    await store.compact();
    expect(Object.keys(await onDisk(dir))).toHaveLength(51);
  });

  it("compacts into only the dirty shard: bytes, write count, contents and mtimes of the others", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { shards: 8 });
    for (let i = 0; i < 200; i++) void store.put(rec(`mention:${i}`));
    await store.compact();
    const names = (await readdir(join(dir, "actors"))).filter((n) => n.startsWith("shard-")).sort();
    expect(names).toHaveLength(8);
    const before = new Map<string, { text: string; mtimeMs: number }>();
    for (const name of names) {
      const path = join(dir, "actors", name);
      before.set(name, { text: await readFile(path, "utf8"), mtimeMs: (await stat(path)).mtimeMs });
    }
    const { bytesWritten, writes } = store.stats();

    const changed = rec("mention:7", { updatedAt: T0 + 1000, snapshot: { value: "reminded" } });
    await store.put(changed);
    const appended = store.stats();
    expect(appended.writes - writes).toBe(1); // the journal append only
    await store.compact();
    const target = shardFile(dir, changed.id, 8);
    const after = store.stats();
    expect(after.writes - appended.writes).toBe(1);
    expect(after.bytesWritten - appended.bytesWritten).toBe((await stat(target)).size);
    expect(after.bytesWritten - bytesWritten).toBeLessThan(bytesWritten / 4);
    for (const name of names) {
      const path = join(dir, "actors", name);
      const was = before.get(name);
      if (path === target) {
        expect((await shardRecords(path))[changed.id]).toEqual(changed);
      } else {
        expect(await readFile(path, "utf8")).toBe(was?.text);
        expect((await stat(path)).mtimeMs).toBe(was?.mtimeMs);
      }
    }
  });

  it("settles put() and flush() with fake timers installed: batching waits on no timer", async () => {
    vi.useFakeTimers();
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.put(rec("x"));
    void store.put(rec("y"));
    await store.flush();
    await store.compact();
    expect(Object.keys(await onDisk(dir)).sort()).toEqual(["x", "y"]);
  });

  it("uses the default shard count when none is given", async () => {
    const dir = await dirs.make();
    const store = await LowdbSnapshotStore.open({ dir, machineVersions: VERSIONS, onWarning: () => {} });
    expect(store.stats().shards).toBe(DEFAULT_SHARDS);
    await store.put(rec("only"));
    await store.compact();
    const file = join(
      dir,
      "actors",
      `shard-${String(shardOf("only", DEFAULT_SHARDS)).padStart(2, "0")}.ndjson`,
    );
    expect((await shardRecords(file)).only).toEqual(rec("only"));
    await store.close();
  });

  it("spreads ids over shards (FNV-1a)", () => {
    const counts = new Array<number>(32).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const shard = shardOf(`mention:${1_000_000_000_000_000 + i}`, 32);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    expect(Math.min(...counts)).toBeGreaterThan(200);
    expect(Math.max(...counts)).toBeLessThan(450);
    expect(shardOf("abc", 32)).toBe(shardOf("abc", 32));
  });

  it("returns copies: changing what get() or load() returned changes nothing stored", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    const original = rec("c", { meta: { k: 1 } });
    await store.put(original);
    original.status = "done";
    const got = await store.get("c");
    if (got === undefined) throw new Error("missing");
    (got.meta as { k: number }).k = 2;
    expect(await store.get("c")).toEqual(rec("c", { meta: { k: 1 } }));
    expect(store.load()).toEqual([rec("c", { meta: { k: 1 } })]);
  });

  it("keeps an id like __proto__ as an ordinary record", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.put(rec("__proto__"));
    await store.close();
    const again = await open(dir);
    expect(await again.store.get("__proto__")).toEqual(rec("__proto__"));
  });
});

describe("LowdbSnapshotStore: archive and prune", () => {
  it("moves a finished record from its live shard to the archive of its hour, and prunes it after cleanupMaxAgeMs", async () => {
    const dir = await dirs.make();
    let now = T0;
    const { store } = await open(dir, { now: () => now, cleanupMaxAgeMs: DAY });
    await store.put(rec("m1"));
    await store.put(rec("m2"));
    await store.compact();
    expect(Object.keys(await shardRecords(shardFile(dir, "m1", 4)))).toContain("m1");

    const finished = rec("m1", { status: "done", updatedAt: T0 + 60_000 });
    await store.put(finished);
    await store.compact();
    expect(await archiveLines(dir)).toEqual({ "archive-2024-05-01T12.ndjson": [finished] });
    expect(await onDisk(dir)).toEqual({ m2: rec("m2") });
    expect(await store.archived()).toEqual([finished]);
    expect(store.load()).toEqual([rec("m2")]);
    expect(await store.get("m1")).toEqual(finished);
    expect(store.stats()).toMatchObject({ liveRecords: 1, archivedRecords: 1 });

    // Not yet older than cleanupMaxAgeMs.
    expect(await store.prune(finished.updatedAt + DAY)).toBe(0);
    expect(await store.archived()).toHaveLength(1);
    // Older: dropped, and the now empty archive file is deleted.
    now = finished.updatedAt + DAY + 1;
    expect(await store.prune()).toBe(1);
    expect(await store.archived()).toEqual([]);
    expect(await store.get("m1")).toBeUndefined();
    expect(await readdir(join(dir, "archive"))).toEqual([]);
    await store.close();

    const again = await open(dir);
    expect(await again.store.archived()).toEqual([]);
    expect(again.store.load()).toEqual([rec("m2")]);
  });

  it("keeps an archive file that still holds younger records", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { cleanupMaxAgeMs: 1000 });
    const old = rec("old", { status: "error", updatedAt: T0 });
    const young = rec("young", { status: "done", updatedAt: T0 + 5000 });
    void store.put(old);
    void store.put(young);
    await store.flush();
    expect(await store.prune(T0 + 5500)).toBe(1);
    expect(await archiveLines(dir)).toEqual({ "archive-2024-05-01T12.ndjson": [young] });
    expect(await store.archived()).toEqual([young]);
  });

  it("leaves the live copy on disk while the archive write fails, and moves it once the archive is written", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.put(rec("m"));
    await store.compact();
    const archiveFile = join(dir, "archive", "archive-2024-05-01T12.ndjson");
    await mkdir(join(archiveFile, "blocker"), { recursive: true }); // opening it fails
    const done = rec("m", { status: "done", updatedAt: T0 + 5 });
    await store.put(done); // durable in the journal
    await expect(store.compact()).rejects.toThrow(`could not write ${archiveFile}`);
    expect(await onDisk(dir)).toEqual({ m: rec("m") }); // not lost: still in its live shard
    expect(await store.archived()).toEqual([done]);

    await rm(archiveFile, { recursive: true });
    await store.compact();
    expect(await archiveLines(dir)).toEqual({ "archive-2024-05-01T12.ndjson": [done] });
    expect(await onDisk(dir)).toEqual({});
  });
});

describe("LowdbSnapshotStore: quarantine at open", () => {
  it("quarantines a truncated shard file, reports it, loads the rest and writes that shard afresh", async () => {
    const dir = await dirs.make();
    const first = await open(dir);
    const ids = Array.from({ length: 40 }, (_, i) => `mention:${i}`);
    for (const id of ids) void first.store.put(rec(id));
    await first.store.close();

    const victim = shardFile(dir, "mention:0", 4);
    const text = await readFile(victim, "utf8");
    await writeFile(victim, text.slice(0, Math.floor(text.length / 2)));
    const lost = ids.filter((id) => shardFile(dir, id, 4) === victim);

    const { store, warnings } = await open(dir);
    const movedTo = `${victim}.corrupt-2024-05-01T12-00-00-000Z`;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`corrupt state file ${victim}`);
    expect(warnings[0]).toContain(movedTo);
    expect(await readFile(movedTo, "utf8")).toBe(text.slice(0, Math.floor(text.length / 2)));
    expect(store.report().quarantinedFiles).toEqual([{ file: victim, movedTo, problem: expect.any(String) }]);
    expect(
      store
        .load()
        .map((r) => r.id)
        .sort(),
    ).toEqual(ids.filter((id) => !lost.includes(id)).sort());

    await store.put(rec("mention:0"));
    await store.compact();
    expect(await shardRecords(victim)).toEqual({ "mention:0": rec("mention:0") });
  });

  it("quarantines a shard file of the wrong shape as corrupt", async () => {
    const dir = await dirs.make();
    await mkdir(join(dir, "actors"), { recursive: true });
    await writeFile(join(dir, "actors", "shard-01.ndjson"), JSON.stringify({ version: 1, records: {} }));
    const { warnings } = await open(dir);
    expect(warnings[0]).toContain("the header line is missing");
    // The segment appends go to is made in the background once open() resolves.
    await vi.waitFor(async () =>
      expect(await readdir(join(dir, "actors"))).toEqual([
        OWN_SEGMENT,
        "shard-01.ndjson.corrupt-2024-05-01T12-00-00-000Z",
      ]),
    );
  });

  it("sets aside a shard of the one-document format of development builds, saying it does not read it", async () => {
    const dir = await dirs.make();
    await mkdir(join(dir, "actors"), { recursive: true });
    const file = join(dir, "actors", "shard-03.json");
    await writeFile(file, JSON.stringify({ version: 1, records: { a: rec("a") } }));
    const { store, warnings } = await open(dir);
    const movedTo = `${file}.corrupt-2024-05-01T12-00-00-000Z`;
    expect(warnings).toEqual([
      expect.stringContaining(`corrupt state file ${file}: a live shard of the one-document format`),
    ]);
    expect(store.report().quarantinedFiles).toEqual([
      { file, movedTo, problem: expect.stringContaining("which this version does not read") },
    ]);
    expect(await readdir(join(dir, "actors"))).toContain("shard-03.json.corrupt-2024-05-01T12-00-00-000Z");
    expect((await readStateDir(dir)).problems).toEqual([]);
    await writeFile(file, "{}");
    expect((await readStateDir(dir)).problems).toEqual([
      {
        file,
        problem: expect.stringContaining("which this version does not read (it reads shard-<nn>.ndjson)"),
      },
    ]);
  });

  it("quarantines an invalid record into quarantine/records-<time>.json with a warning naming it, keeping its neighbours", async () => {
    const dir = await dirs.make();
    const good = rec("good");
    const bad = { ...rec("bad"), timers: "soon" };
    await mkdir(join(dir, "actors"), { recursive: true });
    const file = shardFile(dir, "good", 4);
    await writeFile(file, shardFileText([good, bad]));

    const { store, warnings } = await open(dir);
    expect(store.load()).toEqual([good]);
    const quarantineFile = join(dir, "quarantine", "records-2024-05-01T12-00-00-000Z.json");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('record "bad"');
    expect(warnings[0]).toContain(file);
    expect(warnings[0]).toContain("timers");
    expect(warnings[0]).toContain(quarantineFile);
    const kept = JSON.parse(await readFile(quarantineFile, "utf8")) as {
      records: Array<{ key: string; record: unknown }>;
    };
    expect(kept.records).toEqual([expect.objectContaining({ key: "bad", file, record: bad })]);
    expect(await shardRecords(file)).toEqual({ good });
    expect(store.report()).toMatchObject({
      quarantinedRecords: [{ id: "bad", file, problem: expect.stringContaining("timers") }],
      recordQuarantineFile: quarantineFile,
    });
  });

  it("quarantines a record of another machine version when no migration is registered, naming id, machine and versions", async () => {
    const dir = await dirs.make();
    const old = rec("v1", { machineVersion: 1 });
    await mkdir(join(dir, "actors"), { recursive: true });
    await writeFile(shardFile(dir, "v1", 4), shardFileText([old]));
    const { store, warnings } = await open(dir);
    expect(store.load()).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('record "v1"');
    expect(warnings[0]).toContain('machine "mention" is at version 2, the snapshot is version 1');
    expect(warnings[0]).toContain("no migration");
    const [name] = await readdir(join(dir, "quarantine"));
    const kept = await readFile(join(dir, "quarantine", name ?? ""), "utf8");
    expect(JSON.parse(kept)).toMatchObject({ records: [{ key: "v1", record: old }] });
  });

  it("migrates a record of an older version when the migration returns a snapshot, and stores the result", async () => {
    const dir = await dirs.make();
    const old = rec("v1", { machineVersion: 1, snapshot: { value: "waiting", context: { tries: 1 } } });
    await mkdir(join(dir, "actors"), { recursive: true });
    await writeFile(shardFile(dir, "v1", 4), shardFileText([old]));
    const seen: Array<[unknown, number]> = [];
    const { store, warnings } = await open(dir, {
      migrations: {
        mention: (snapshot, from) => {
          seen.push([snapshot, from]);
          return { value: "waiting", context: { attempts: 1 } };
        },
      },
    });
    expect(warnings).toEqual([]);
    expect(seen).toEqual([[old.snapshot, 1]]);
    const migrated = { ...old, machineVersion: 2, snapshot: { value: "waiting", context: { attempts: 1 } } };
    expect(store.load()).toEqual([migrated]);
    expect(store.report().migrated).toEqual([
      { id: "v1", machineId: "mention", fromVersion: 1, toVersion: 2 },
    ]);
    expect(await shardRecords(shardFile(dir, "v1", 4))).toEqual({ v1: migrated });
  });

  it("quarantines when the migration cannot convert (undefined) or throws, and a record of an unknown machine", async () => {
    const dir = await dirs.make();
    const records = {
      nope: rec("nope", { machineVersion: 0 }),
      boom: rec("boom", { machineId: "collaborate", machineVersion: 0 }),
      alien: rec("alien", { machineId: "alien", machineVersion: 1 }),
    };
    await mkdir(join(dir, "actors"), { recursive: true });
    await writeFile(join(dir, "actors", "shard-00.ndjson"), shardFileText(Object.values(records)));
    const { store, warnings } = await open(dir, {
      migrations: {
        mention: () => undefined,
        collaborate: () => {
          throw new Error("context shape unknown");
        },
      },
    });
    expect(store.load()).toEqual([]);
    expect(warnings).toHaveLength(3);
    expect(warnings.join("\n")).toContain("the migration cannot convert it");
    expect(warnings.join("\n")).toContain("the migration failed: context shape unknown");
    expect(warnings.join("\n")).toContain('unknown machine "alien"');
    expect(
      store
        .report()
        .quarantinedRecords.map((r) => r.id)
        .sort(),
    ).toEqual(["alien", "boom", "nope"]);
  });

  it("quarantines a record whose snapshot validateSnapshot refuses (after migration), or whose check throws", async () => {
    const dir = await dirs.make();
    const records = {
      fine: rec("fine"),
      nonsense: rec("nonsense", { snapshot: { status: "active", value: "noSuchState" } }),
      migrated: rec("migrated", { machineVersion: 1, snapshot: { status: "active", value: "old" } }),
      odd: rec("odd", { snapshot: { status: "active", value: "odd" } }),
    };
    await mkdir(join(dir, "actors"), { recursive: true });
    await writeFile(join(dir, "actors", "shard-00.ndjson"), shardFileText(Object.values(records)));
    const seen: unknown[] = [];
    const { store, warnings } = await open(dir, {
      migrations: { mention: (snapshot) => ({ ...(snapshot as object), value: "renamed" }) },
      validateSnapshot: (machineId, snapshot) => {
        seen.push(snapshot);
        const value = (snapshot as { value: string }).value;
        if (value === "odd") throw new Error("cannot tell");
        return value === "waiting" ? undefined : `${machineId} has no state ${value}`;
      },
    });
    expect(store.load().map((r) => r.id)).toEqual(["fine"]);
    expect(seen).toContainEqual({ status: "active", value: "renamed" }); // checked after the migration
    const problems = Object.fromEntries(store.report().quarantinedRecords.map((r) => [r.id, r.problem]));
    expect(problems).toEqual({
      nonsense: "its snapshot cannot be restored: mention has no state noSuchState",
      migrated: "its snapshot cannot be restored: mention has no state renamed",
      odd: "its snapshot cannot be restored: the snapshot check failed: cannot tell",
    });
    expect(warnings).toHaveLength(3);
    const kept = await readFile(store.report().recordQuarantineFile ?? "", "utf8");
    expect(kept).toContain("noSuchState");
    // Only at open: put() takes what the runtime itself produced.
    await store.put(rec("later", { snapshot: { status: "active", value: "noSuchState" } }));
    expect(await store.get("later")).toBeDefined();
  });

  it("does not overwrite an earlier record quarantine made at the same instant", async () => {
    const dir = await dirs.make();
    await mkdir(join(dir, "actors"), { recursive: true });
    for (const id of ["q1", "q2"]) {
      await writeFile(join(dir, "actors", "shard-00.ndjson"), shardFileText([{ id }]));
      await (await open(dir)).store.close();
    }
    expect((await readdir(join(dir, "quarantine"))).sort()).toEqual([
      "records-2024-05-01T12-00-00-000Z-1.json",
      "records-2024-05-01T12-00-00-000Z.json",
    ]);
  });
});

describe("LowdbSnapshotStore: bad input and failures", () => {
  it("rejects an invalid put with an error naming the id and the problem, and keeps everything else", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.put(rec("keep"));
    const bad = { ...rec("bad"), status: "paused" } as unknown as ActorRecord;
    const error = await store.put(bad).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidActorRecordError);
    expect((error as Error).message).toContain('record "bad" is invalid: status');
    await expect(store.put({ ...rec("big"), snapshot: { n: 1n } })).rejects.toThrow(
      'record "big" is invalid: it is not JSON data',
    );
    await expect(store.put(rec("old", { machineVersion: 1 }))).rejects.toThrow(
      'machine "mention" is at version 2, the snapshot is version 1',
    );
    await expect(store.put(rec("who", { machineId: "ghost" }))).rejects.toThrow('unknown machine "ghost"');
    await expect(store.put({ ...rec("nosnap"), snapshot: undefined })).rejects.toThrow(
      "the snapshot is missing",
    );
    await store.compact();
    expect(store.load()).toEqual([rec("keep")]);
    expect(await onDisk(dir)).toEqual({ keep: rec("keep") });
  });

  it("refuses puts after close() with a clear error, after flushing what came before", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    void store.put(rec("before"));
    await store.close();
    expect(await onDisk(dir)).toEqual({ before: rec("before") });
    const error = await store.put(rec("after")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotStoreClosedError);
    expect((error as Error).message).toBe(
      `snapshot store of ${dir} is closed: put of record "after" refused`,
    );
    await expect(store.prune()).rejects.toBeInstanceOf(SnapshotStoreClosedError);
  });

  it("rejects compact() naming the file when a write fails, keeps the data and retries on the next compaction", async () => {
    const dir = await dirs.make();
    const { store, warnings } = await open(dir);
    await store.put(rec("a"));
    await store.compact();
    const file = shardFile(dir, "a", 4);
    // A non-empty directory where the shard file should be: rename() over it fails, even as root.
    await rm(file);
    await mkdir(join(file, "blocker"), { recursive: true });
    const other =
      Array.from({ length: 30 }, (_, i) => `o${i}`).find((id) => shardFile(dir, id, 4) !== file) ?? "";

    const ignored = store.put(rec("a", { updatedAt: T0 + 1 })); // ignoring this promise must not crash
    void store.put(rec(other));
    const error = await store.compact().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotStoreWriteError);
    expect((error as Error).message).toContain(`could not write ${file}`);
    expect(warnings.some((w) => w.includes(file))).toBe(true);
    await expect(ignored).resolves.toBeUndefined(); // durable in the journal, which is kept
    expect((await readdir(join(dir, "actors"))).filter((n) => n.startsWith("journal-"))).not.toEqual([]);
    expect(await store.get("a")).toEqual(rec("a", { updatedAt: T0 + 1 }));
    expect((await shardRecords(shardFile(dir, other, 4)))[other]).toEqual(rec(other)); // others were written

    await rm(file, { recursive: true });
    await store.compact();
    expect((await shardRecords(file)).a).toEqual(rec("a", { updatedAt: T0 + 1 }));
    // The folded segments are gone; the one made for the next appends is left.
    expect((await readdir(join(dir, "actors"))).filter((n) => n.startsWith("journal-"))).toEqual([
      "journal-000003.ndjson",
    ]);
  });

  it("rejects at open a file it cannot read, naming it, rather than starting without it", async () => {
    const dir = await dirs.make();
    await mkdir(join(dir, "actors", "shard-00.ndjson"), { recursive: true });
    await expect(open(dir)).rejects.toThrow(
      `cannot read state file ${join(dir, "actors", "shard-00.ndjson")}`,
    );
  });

  it("rejects bad options clearly", async () => {
    const dir = await dirs.make();
    await expect(open(dir, { shards: 0 })).rejects.toThrow(
      "LowdbSnapshotStore.open: shards must be a whole number",
    );
    await expect(open(dir, { machineVersions: { mention: 1.5 } })).rejects.toThrow("machineVersions.mention");
  });

  it("fails clearly on a state directory it cannot write, and a flush there keeps the data", async (ctx) => {
    const parent = await dirs.make();
    const dir = join(parent, "state");
    await mkdir(dir);
    await chmod(dir, 0o500);
    try {
      if (await canWriteIn(dir)) ctx.skip(); // root ignores the mode
      const error = await open(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateDirNotWritableError);
      expect((error as Error).message).toContain(`state directory ${dir} is not writable`);

      await chmod(dir, 0o700);
      const { store } = await open(dir);
      await chmod(join(dir, "actors"), 0o500);
      void store.put(rec("r"));
      await expect(store.flush()).rejects.toThrow(`could not write ${join(dir, "actors", "journal-")}`);
      expect(await store.get("r")).toEqual(rec("r"));
      await chmod(join(dir, "actors"), 0o700);
      await store.compact();
      expect(await onDisk(dir)).toEqual({ r: rec("r") });
    } finally {
      await chmod(dir, 0o700);
      await chmod(join(dir, "actors"), 0o700).catch(() => undefined);
    }
  });

  it("removes temp files left by a dead writer", async () => {
    const dir = await dirs.make();
    await mkdir(join(dir, "actors"), { recursive: true });
    await writeFile(join(dir, "actors", "shard-00.ndjson.tmp-999999999"), "partial");
    await open(dir);
    // The segment appends go to is made in the background once open() resolves.
    await vi.waitFor(async () => expect(await readdir(join(dir, "actors"))).toEqual([OWN_SEGMENT]));
  });
});

describe("LowdbSnapshotStore: changing the shard count", () => {
  it.each([
    [4, 8],
    [8, 3],
  ])("re-homes every record from %i to %i shards and deletes the old-layout files", async (from, to) => {
    const dir = await dirs.make();
    const first = await open(dir, { shards: from });
    const ids = Array.from({ length: 100 }, (_, i) => `mention:${i}`);
    for (const id of ids) void first.store.put(rec(id));
    await first.store.close();

    const { store, warnings } = await open(dir, { shards: to });
    expect(warnings).toEqual([]);
    expect(
      store
        .load()
        .map((r) => r.id)
        .sort(),
    ).toEqual([...ids].sort());
    // Re-homed after open(), with no call: each record only in its shard of the new layout.
    await vi.waitFor(async () => {
      const names = (await readdir(join(dir, "actors"))).filter((n) => !n.startsWith("journal-")).sort();
      expect(names.every((n) => n.startsWith("shard-") && Number(/\d+/.exec(n)?.[0]) < to)).toBe(true);
      for (const name of names) {
        const records = await shardRecords(join(dir, "actors", name));
        for (const id of Object.keys(records)) expect(shardFile(dir, id, to)).toBe(join(dir, "actors", name));
      }
    });
    expect(Object.keys(await onDisk(dir)).sort()).toEqual([...ids].sort());
  });
});

describe("LowdbSnapshotStore: a record in two shards", () => {
  // What a crash during a move leaves: the record in its new shard and still in its old one. The
  // shards are read in the order of their numbers; the record's own is shard 1 of 4.
  const id = ["a", "b", "c", "d", "e", "f", "g", "h"].find((name) => shardOf(name, 4) === 1) ?? "";
  it.each([
    [0, 1],
    [0, 2],
    [2, 0],
  ])(
    "keeps the newer copy (the older in shard %i, the newer in shard %i), and no other file keeps one",
    async (olderIn, newerIn) => {
      const dir = await dirs.make();
      await mkdir(join(dir, "actors"), { recursive: true });
      const shard = (i: number) => join(dir, "actors", `shard-0${i}.ndjson`);
      const older = rec(id, { updatedAt: T0 - 100, meta: { copy: "older" } });
      const newer = rec(id, { updatedAt: T0 - 50, meta: { copy: "newer" } });
      await writeFile(shard(olderIn), shardFileText([older]));
      await writeFile(shard(newerIn), shardFileText([newer]));

      const { store, warnings } = await open(dir);
      expect(warnings).toEqual([]);
      expect(await store.get(id)).toEqual(newer);
      expect(store.load()).toEqual([newer]);
      await vi.waitFor(async () => {
        expect(await shardRecords(shard(1))).toEqual({ [id]: newer });
        for (const i of [olderIn, newerIn].filter((i) => i !== 1))
          expect(await shardRecords(shard(i))).toEqual({});
      });
    },
  );
});
