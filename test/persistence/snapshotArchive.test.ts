import { appendFile, mkdir, readFile, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LowdbSnapshotStore, type SnapshotStoreOptions } from "../../src/persistence/index.js";
import { ArchiveFiles } from "../../src/persistence/archive/ArchiveFiles.js";
import { HashSet53 } from "../../src/persistence/archive/idHashes.js";
import { recordLine } from "../../src/persistence/recordLine.js";
import { tempDirs } from "./tempDirs.js";
import { STORE_T0, archiveLines, storeRecord } from "../support/storeRecords.js";

const dirs = tempDirs();
const opened: LowdbSnapshotStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => undefined);
  await dirs.cleanup();
});

const T0 = STORE_T0; // 2024-05-01T12:00Z
const HOUR = 3_600_000;
const rec = storeRecord;
const done = (id: string, updatedAt: number) => rec(id, { status: "done", updatedAt });

async function open(dir: string, options: Partial<SnapshotStoreOptions> = {}) {
  const warnings: string[] = [];
  const store = await LowdbSnapshotStore.open({
    dir,
    now: () => T0,
    shards: 4,
    machineVersions: { mention: 2 },
    onWarning: (m) => warnings.push(m),
    ...options,
  });
  opened.push(store);
  return { store, warnings };
}

/** The archive files of `dir` alone, as a store opens them; any warning fails the test. */
async function openArchive(dir: string): Promise<ArchiveFiles> {
  await mkdir(join(dir, "archive"));
  return ArchiveFiles.open({
    dir: join(dir, "archive"),
    rules: { machineVersions: { mention: 2 } },
    onWrite: () => {},
    warn: (m) => expect.fail(m),
  });
}

async function archiveNames(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "archive"))).sort();
}

describe("LowdbSnapshotStore: the archive, on disk by the hour", () => {
  it("journals a finished record before any compaction, so a crash right after its put loses nothing", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.put(rec("a"));
    await store.compact();
    const finished = done("a", T0 + 5);
    await store.put(finished); // acknowledged: in the journal, not yet in the archive
    expect(await archiveLines(dir)).toEqual({});

    // A second store on the directory is what a restart after `kill -9` sees.
    const { store: again } = await open(dir);
    expect(again.load()).toEqual([]);
    expect(await again.get("a")).toEqual(finished);
    expect(await again.archived()).toEqual([finished]);
  });

  it("get() finds each id of an hour, whatever its characters, and never another id that contains it", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    const ids = ["m1", "m10", "xm1", 'a"b', "a\\b", "ü-🙂", "a\nb"];
    await store.putAll(ids.map((id, i) => done(id, T0 + i)));
    await store.compact();
    const { store: again } = await open(dir);
    for (const [i, id] of ids.entries()) expect(await again.get(id)).toEqual(done(id, T0 + i));
    expect(await again.get("m")).toBeUndefined();
  });

  it("keeps no archived record in memory: get() and archived() read the hour files, which are appended to", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.putAll([0, 1, 2].map((i) => done(`d${i}`, T0 + i * HOUR)));
    await store.compact();
    expect(await archiveNames(dir)).toEqual([
      "archive-2024-05-01T12.ids",
      "archive-2024-05-01T12.ndjson",
      "archive-2024-05-01T13.ids",
      "archive-2024-05-01T13.ndjson",
      "archive-2024-05-01T14.ids",
      "archive-2024-05-01T14.ndjson",
    ]);
    // Changed on disk behind the store's back: the store reads it back from there.
    const file = join(dir, "archive", "archive-2024-05-01T13.ndjson");
    const changed = { ...done("d1", T0 + HOUR), meta: { changed: true } };
    await appendFile(file, `${JSON.stringify(changed)}\n`);
    expect(await store.get("d1")).toEqual(changed);
    expect((await store.archived()).map((r) => r.id).sort()).toEqual(["d0", "d1", "d2"]);
    expect(store.stats()).toMatchObject({ liveRecords: 0, archivedRecords: 3 });
    // A later finish of the same id appends; nothing is rewritten.
    const before = (await stat(file)).size;
    await store.put(done("d1", T0 + HOUR + 1));
    await store.compact();
    expect((await stat(file)).size).toBeGreaterThan(before);
    expect(await store.get("d1")).toEqual(done("d1", T0 + HOUR + 1));
    expect(await store.get("nobody")).toBeUndefined();
  });

  it("makes an append's text 200 records at a time, the event loop running between them", async () => {
    const dir = await dirs.make();
    const archive = await openArchive(dir);
    // Each record's line made is counted (its meta serialised), and read at each turn of the event loop.
    let made = 0;
    const counted = { toJSON: () => (made += 1) };
    const finished = Array.from({ length: 1_000 }, (_, i) => ({
      ...done(`d${i}`, T0 + i),
      meta: { counted },
    }));
    let mostInATurn = 0;
    let appending = true;
    let before = 0;
    const turn = () => {
      mostInATurn = Math.max(mostInATurn, made - before);
      before = made;
      if (appending) setImmediate(turn);
    };
    setImmediate(turn);
    await archive.append(finished);
    appending = false;
    turn(); // what was made since the last turn counted
    expect(made).toBe(1_000);
    expect(mostInATurn).toBe(200); // one text of them all was made in one turn
    const lines = (await archiveLines(dir))["archive-2024-05-01T12.ndjson"];
    expect(lines).toEqual(finished.map((r, i) => ({ ...r, meta: { counted: i + 1 } })));
  });

  it("appends each record to the UTC hour of its time, naming each hour once", async () => {
    const dir = await dirs.make();
    const archive = await openArchive(dir);
    const start = T0 + 3 * HOUR; // 15:00
    const records = [done("a", start - 1), done("b", start), done("c", start + HOUR - 1), done("d", T0)];
    // An hour's name is made once per hour, not per record (it cost a fold of 36,000 records 70 ms).
    const named = vi.spyOn(Date.prototype, "toISOString");
    await archive.append([...records, ...Array.from({ length: 100 }, (_, i) => done(`e${i}`, T0 + i))]);
    expect(named).toHaveBeenCalledTimes(3);
    named.mockRestore();
    expect(await archiveLines(dir)).toEqual({
      "archive-2024-05-01T12.ndjson": [
        records[3],
        ...Array.from({ length: 100 }, (_, i) => done(`e${i}`, T0 + i)),
      ],
      "archive-2024-05-01T14.ndjson": [records[0]],
      "archive-2024-05-01T15.ndjson": [records[1], records[2]],
    });
  });

  it("prunes whole hours by deleting them and rewrites only the hour the cutoff falls in", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { cleanupMaxAgeMs: HOUR });
    await store.putAll([
      done("h0a", T0),
      done("h0b", T0 + 10),
      done("h1a", T0 + HOUR + 100),
      done("h1b", T0 + HOUR + 900),
      done("h2", T0 + 2 * HOUR),
    ]);
    await store.compact();
    // Cutoff T0 + 1h + 500 ms: hour 12 goes whole, hour 13 loses h1a.
    expect(await store.pruneBefore(T0 + HOUR + 500)).toBe(3);
    expect(await archiveLines(dir)).toEqual({
      "archive-2024-05-01T13.ndjson": [done("h1b", T0 + HOUR + 900)],
      "archive-2024-05-01T14.ndjson": [done("h2", T0 + 2 * HOUR)],
    });
    expect(await archiveNames(dir)).not.toContain("archive-2024-05-01T12.ids");
    expect(await store.get("h1a")).toBeUndefined();
    expect(await store.get("h1b")).toEqual(done("h1b", T0 + HOUR + 900));
    expect(await store.pruneBefore(T0 + HOUR + 500)).toBe(0);
    expect(store.stats().archivedRecords).toBe(2);
  });

  it("tells an id no hour holds without visiting the hours, however many there are (a spawn asks for each)", async () => {
    const lookups = async (hours: number) => {
      const dir = await dirs.make();
      const { store } = await open(dir);
      await store.putAll(Array.from({ length: hours }, (_, h) => done(`h${h}`, T0 + h * HOUR)));
      await store.compact();
      await store.get("first"); // the index of every hour is made at the first lookup
      const has = vi.spyOn(HashSet53.prototype, "has");
      for (let i = 0; i < 20; i++) expect(await store.get(`new${i}`)).toBeUndefined();
      const count = has.mock.calls.length;
      has.mockRestore();
      expect(await store.get(`h${hours - 1}`)).toEqual(done(`h${hours - 1}`, T0 + (hours - 1) * HOUR));
      return count;
    };
    expect(await lookups(3)).toBe(0);
    expect(await lookups(60)).toBe(0);
  });

  it("sorts no hour's hashes at open; a new id's lookup sorts only the index, an archived id's the hours once", async () => {
    const dir = await dirs.make();
    const first = await open(dir);
    await first.store.putAll(Array.from({ length: 30 }, (_, h) => done(`h${h}`, T0 + h * HOUR)));
    await first.store.compact();
    await first.store.close();
    const sort = vi.spyOn(Float64Array.prototype, "sort");
    const { store } = await open(dir);
    expect(sort).toHaveBeenCalledTimes(0);
    expect(await store.get("new")).toBeUndefined();
    expect(sort).toHaveBeenCalledTimes(1); // the index of every hour
    expect(await store.get("new2")).toBeUndefined();
    expect(sort).toHaveBeenCalledTimes(1);
    expect(await store.get("h7")).toEqual(done("h7", T0 + 7 * HOUR));
    expect(sort).toHaveBeenCalledTimes(31); // and each hour, looked in for h7
    expect(await store.get("h8")).toEqual(done("h8", T0 + 8 * HOUR));
    expect(sort).toHaveBeenCalledTimes(31);
    sort.mockRestore();
  });

  it("finds what is archived after its first lookup, past the index's remaking, and nothing a prune dropped", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { cleanupMaxAgeMs: HOUR });
    await store.putAll([done("early", T0), done("kept", T0 + 2 * HOUR)]);
    await store.compact();
    expect(await store.get("later0")).toBeUndefined(); // the index is made now
    // Enough appends that it goes stale and is made again, and one after that.
    for (let i = 0; i < 300; i += 100) {
      await store.putAll(Array.from({ length: 100 }, (_, j) => done(`later${i + j}`, T0 + HOUR + i + j)));
      await store.compact();
      expect(await store.get(`later${i}`)).toEqual(done(`later${i}`, T0 + HOUR + i));
    }
    for (let i = 0; i < 300; i += 37) expect((await store.get(`later${i}`))?.id).toBe(`later${i}`);
    await store.putAll([done("last", T0 + 2 * HOUR + 1)]);
    await store.compact();
    expect((await store.get("last"))?.id).toBe("last");
    expect(await store.pruneBefore(T0 + HOUR + 150)).toBe(151);
    expect(await store.get("early")).toBeUndefined();
    expect(await store.get("later149")).toBeUndefined();
    expect((await store.get("later150"))?.id).toBe("later150");
    expect((await store.get("kept"))?.id).toBe("kept");
  });

  it("skips a torn last line and starts the next append on a line of its own", async () => {
    const dir = await dirs.make();
    const first = await open(dir);
    await first.store.put(done("a", T0));
    await first.store.close();
    const file = join(dir, "archive", "archive-2024-05-01T12.ndjson");
    await appendFile(file, JSON.stringify(done("torn", T0)).slice(0, 30)); // an append cut short by a crash

    const { store, warnings } = await open(dir);
    expect(await store.archived()).toEqual([done("a", T0)]);
    await store.put(done("b", T0 + 1));
    await store.compact();
    expect(await archiveLines(dir)).toEqual({
      "archive-2024-05-01T12.ndjson": [done("a", T0), done("b", T0 + 1)],
    });
    expect(warnings).toEqual([]);
  });

  it("reports a damaged line once, skips it, and keeps it in the file, even through a prune of its hour", async () => {
    const dir = await dirs.make();
    const first = await open(dir);
    await first.store.putAll([done("old", T0), done("young", T0 + 5_000)]);
    await first.store.close();
    const file = join(dir, "archive", "archive-2024-05-01T12.ndjson");
    await appendFile(file, "{not json\n");

    const { store, warnings } = await open(dir);
    expect((await store.archived()).map((r) => r.id).sort()).toEqual(["old", "young"]);
    await store.archived();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /archive-2024-05-01T12\.ndjson:3 cannot be used and is skipped \(kept in the file\): not JSON/,
    );
    expect(await store.pruneBefore(T0 + 1_000)).toBe(1);
    expect(await readFile(file, "utf8")).toBe(`${recordLine(done("young", T0 + 5_000))}\n{not json\n`);
  });

  it("rebuilds a missing or torn .ids file at open, so get() still finds every record", async () => {
    const dir = await dirs.make();
    const first = await open(dir);
    await first.store.putAll([done("a", T0), done("b", T0 + 1), done("c", T0 + 2)]);
    await first.store.close();
    const ids = join(dir, "archive", "archive-2024-05-01T12.ids");
    await rm(ids);
    let { store } = await open(dir);
    expect(await store.get("b")).toEqual(done("b", T0 + 1));
    expect((await stat(ids)).size).toBe(3 * 8);
    await store.close();

    // A torn last hash (a crash mid-append) is cut off before the next append.
    await appendFile(ids, Buffer.from([1, 2, 3]));
    ({ store } = await open(dir));
    await store.put(done("d", T0 + 3));
    await store.compact();
    expect((await stat(ids)).size).toBe(4 * 8);
    for (const id of ["a", "b", "c", "d"]) expect((await store.get(id))?.id).toBe(id);
  });
});

describe("LowdbSnapshotStore: when the journal is folded", () => {
  it("waits until the journal holds as much as the live shards, so a fold costs what was appended, not what lives", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { journalMaxBytes: 1_000 });
    await store.putAll(Array.from({ length: 40 }, (_, i) => rec(`live-${i}`)));
    await store.compact();
    const live = store.stats();
    const shardBytes = live.bytesWritten - live.journalBytes;
    expect(shardBytes).toBeGreaterThan(5_000);

    // Far past journalMaxBytes, still short of the shards' size: appended, not folded.
    let n = 0;
    const update = async () => {
      n++;
      await store.put(rec("live-0", { updatedAt: T0 + n }));
    };
    while (store.stats().journalBytes - live.journalBytes < shardBytes / 2) await update();
    await store.flush();
    expect(store.stats().compactions).toBe(live.compactions);
    while (store.stats().journalBytes - live.journalBytes < shardBytes * 1.5) await update();
    await store.flush();
    await store.compact(); // the one a put started by itself runs to its end first
    expect(store.stats().compactions).toBeGreaterThan(live.compactions + 1);
  });
});
