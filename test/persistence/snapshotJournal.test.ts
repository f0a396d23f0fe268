import { type FileHandle, mkdir, open as fsOpen, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type ActorRecord,
  JOURNAL_BLOCK_BYTES,
  JOURNAL_HEADER,
  LowdbSnapshotStore,
  type SnapshotStoreOptions,
  readStateDir,
  type StoredActor,
} from "../../src/persistence/index.js";
import { ArchiveFiles } from "../../src/persistence/archive/ArchiveFiles.js";
import { HashSet53 } from "../../src/persistence/archive/idHashes.js";
import { StoreJournal } from "../../src/persistence/journal/StoreJournal.js";
import { recordLine } from "../../src/persistence/recordLine.js";
import { shardHeader } from "../../src/persistence/shardFormat.js";
import { tempDirs } from "./tempDirs.js";
import { CAN_LIST_OPEN_FILES, openFilesUnder } from "../support/openFiles.js";
import { shardFileText, shardPath, shardRecords } from "../support/shardFiles.js";
import { STORE_T0, archiveLines, storeRecord } from "../support/storeRecords.js";

const dirs = tempDirs();
/** Every store a test opened: closed after it (a test may leave one open to play a crash). */
const opened: LowdbSnapshotStore[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  // The latest first: a store reopened on a dir folds in the background, and an earlier one left open
  // (a crash played) must not write beside it.
  for (const store of opened.splice(0).reverse()) await store.close().catch(() => undefined);
  await dirs.cleanup();
});

const T0 = STORE_T0;
const VERSIONS = { mention: 2 };

const rec = storeRecord;

async function open(
  dir: string,
  options: Partial<SnapshotStoreOptions> = {},
): Promise<{ store: LowdbSnapshotStore; warnings: string[] }> {
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

const shardFile = (dir: string, id: string): string => shardPath(dir, id, 4);

async function journals(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "actors"))).filter((n) => n.startsWith("journal-")).sort();
}

/** The segments that hold anything: an open store's own segment is made at open, all zeros. */
async function journalsWithData(dir: string): Promise<string[]> {
  const names: string[] = [];
  for (const name of await journals(dir))
    if (dataOf(await readFile(join(dir, "actors", name))) !== "") names.push(name);
  return names;
}

/** What the shard files of `dir` hold, by id. */
async function shards(dir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const name of await readdir(join(dir, "actors"))) {
    if (name.startsWith("shard-")) Object.assign(out, await shardRecords(join(dir, "actors", name)));
  }
  return out;
}

/**
 * The state a crash leaves: shards as `files` says, a journal segment with `lines` (after its header,
 * zeros to a whole number of blocks, as the writer leaves it), no store open.
 */
async function crashState(
  dir: string,
  files: Record<string, ActorRecord>,
  lines: string,
  segment = "journal-000001.ndjson",
): Promise<void> {
  await mkdir(join(dir, "actors"), { recursive: true });
  const byShard = new Map<string, ActorRecord[]>();
  for (const record of Object.values(files)) {
    const file = shardFile(dir, record.id);
    byShard.set(file, [...(byShard.get(file) ?? []), record]);
  }
  // As the store writes them: each record's line id, time and status first.
  for (const [file, records] of byShard)
    await writeFile(file, shardHeader(records.length) + records.map(line).join(""));
  const data = Buffer.from(JOURNAL_HEADER + lines, "utf8");
  const bytes = Buffer.alloc(Math.ceil((data.length + 1) / JOURNAL_BLOCK_BYTES) * JOURNAL_BLOCK_BYTES);
  data.copy(bytes);
  await writeFile(join(dir, "actors", segment), bytes);
}

const line = (record: ActorRecord): string => `${recordLine(record)}\n`;

/** A segment's data: what comes before its zero padding. */
function dataOf(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end < 0 ? bytes.length : end).toString("utf8");
}

describe("LowdbSnapshotStore journal", () => {
  it("makes a put durable in the journal when it resolves, without rewriting any shard", async () => {
    const dir = await dirs.make();
    const first = await open(dir);
    for (let i = 0; i < 40; i++) void first.store.put(rec(`m${i}`));
    await first.store.close(); // folds into the shards
    const names = (await readdir(join(dir, "actors"))).filter((n) => n.startsWith("shard-")).sort();
    const before = new Map<string, number>();
    for (const name of names) before.set(name, (await stat(join(dir, "actors", name))).mtimeMs);

    const { store } = await open(dir);
    const stats0 = store.stats();
    const changed = rec("m7", { updatedAt: T0 + 1000, snapshot: { value: "reminded" } });
    await store.put(changed);
    const stats1 = store.stats();
    expect(stats1.writes - stats0.writes).toBe(1);
    expect(stats1.journalAppends - stats0.journalAppends).toBe(1);
    // The segment's first append writes its header too.
    expect(stats1.bytesWritten - stats0.bytesWritten).toBe(Buffer.byteLength(JOURNAL_HEADER + line(changed)));
    for (const name of names) expect((await stat(join(dir, "actors", name))).mtimeMs).toBe(before.get(name));
    const [segment] = await journals(dir);
    const bytes = await readFile(join(dir, "actors", segment ?? ""));
    expect(bytes.length % JOURNAL_BLOCK_BYTES).toBe(0); // preallocated in whole blocks, zero after the data
    expect(dataOf(bytes)).toBe(JOURNAL_HEADER + line(changed));
    // The journal holds message text: private to the owner, as are the store's folders.
    expect((await stat(join(dir, "actors", segment ?? ""))).mode & 0o777).toBe(0o600);
    for (const sub of ["actors", "archive"]) expect((await stat(join(dir, sub))).mode & 0o777).toBe(0o700);

    // A crash now (no close): a new store sees the put.
    const again = await open(dir);
    expect(await again.store.get("m7")).toEqual(changed);
    expect(again.warnings).toEqual([]);
  });

  it("stringifies a record once from its put to its journal line, and a record put twice in a batch is journaled as the later", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    const stringify = vi.spyOn(JSON, "stringify");
    const records = Array.from({ length: 50 }, (_, i) => rec(`m${i}`));
    const later = rec("m3", { updatedAt: T0 + 5, snapshot: { value: "reminded" } });
    // A call given the record or its snapshot serializes the snapshot.
    const put = new Set<unknown>([...records, later].flatMap((r) => [r, r.snapshot]));
    const ofRecord = () => stringify.mock.calls.filter(([value]) => put.has(value)).length;
    await Promise.all([store.putAll(records), store.put(later)]);
    expect(ofRecord()).toBe(51);
    stringify.mockRestore();
    const [segment] = await journals(dir);
    const data = dataOf(await readFile(join(dir, "actors", segment ?? "")));
    expect(data).toBe(JOURNAL_HEADER + records.map((r) => line(r.id === "m3" ? later : r)).join(""));
  });

  it("replays the journal over stale shards after a crash: the latest record of each id wins", async () => {
    const dir = await dirs.make();
    const a0 = rec("a");
    const a1 = rec("a", { updatedAt: T0 + 1, snapshot: { v: 1 } });
    const a2 = rec("a", { updatedAt: T0 + 1, snapshot: { v: 2 } }); // same millisecond: the later line wins
    const b1 = rec("b", { status: "done", updatedAt: T0 + 5 }); // finished: moves to the archive
    const c1 = rec("c", { updatedAt: T0 + 9 });
    await crashState(dir, { a: a0, b: rec("b") }, line(a1) + line(b1) + line(a2) + line(c1));
    const { store, warnings } = await open(dir);
    expect(warnings).toEqual([]);
    expect(await store.get("a")).toEqual(a2);
    expect(await store.get("b")).toEqual(b1);
    expect(await store.get("c")).toEqual(c1);
    expect(await store.archived()).toEqual([b1]);
    // After open(), with no call, the journal is folded into the files and removed.
    await vi.waitFor(async () => expect(await journalsWithData(dir)).toEqual([]));
    expect(await shards(dir)).toEqual({ a: a2, c: c1 });
    expect(await archiveLines(dir)).toEqual({ "archive-2024-05-01T12.ndjson": [b1] });
  });

  it("parses each record once after a crash: a shard line the journal holds a newer copy of is skipped unparsed", async () => {
    // A crash under load leaves nearly every shard record superseded by the journal. Parses are counted.
    const dir = await dirs.make();
    const stale = Array.from({ length: 300 }, (_, i) => rec(`m${i}`, { snapshot: { v: "old copy" } }));
    const latest = stale.map((r) => ({ ...r, updatedAt: T0 + 1, snapshot: { v: "journal" } }));
    const finished = rec("f", { status: "done", updatedAt: T0 + 2 });
    const shardNewer = rec("k", { updatedAt: T0 + 9, snapshot: { v: "old copy" } }); // a fold wrote it, then the crash
    await crashState(
      dir,
      Object.fromEntries(
        [...stale, rec("f", { snapshot: { v: "old copy" } }), shardNewer].map((r) => [r.id, r]),
      ),
      [...latest, finished, rec("k", { updatedAt: T0 + 3 })].map(line).join(""),
    );
    const parse = vi.spyOn(JSON, "parse");
    const { store, warnings } = await open(dir);
    const oldCopiesParsed = parse.mock.calls.filter(([text]) => String(text).includes("old copy")).length;
    parse.mockRestore();
    expect(warnings).toEqual([]);
    expect(oldCopiesParsed).toBe(1); // k's, newer in its shard than in the journal
    const byId = (records: ActorRecord[]) => Object.fromEntries(records.map((r) => [r.id, r]));
    expect(byId(store.load())).toEqual(byId([...latest, shardNewer]));
    expect(await store.get("f")).toEqual(finished);
    // Folded: the shards hold no skipped copy, the archive the finished record.
    await vi.waitFor(async () => expect(await journalsWithData(dir)).toEqual([]));
    expect(await shards(dir)).toEqual(byId([...latest, shardNewer]));
    expect(await archiveLines(dir)).toEqual({ "archive-2024-05-01T12.ndjson": [finished] });
  });

  it("parses a shard line whose time it cannot read from its first bytes, and the journal's newer copy wins all the same", async () => {
    const dir = await dirs.make();
    const stale = Array.from({ length: 20 }, (_, i) => rec(`m${i}`, { snapshot: { v: "old copy" } }));
    const latest = stale.map((r) => ({ ...r, updatedAt: T0 + 1, snapshot: { v: "journal" } }));
    await crashState(dir, {}, latest.map(line).join(""));
    // Written in the record's own field order (machineId before the time), not the store's.
    const byShard = new Map<string, ActorRecord[]>();
    for (const r of stale)
      byShard.set(shardFile(dir, r.id), [...(byShard.get(shardFile(dir, r.id)) ?? []), r]);
    for (const [file, records] of byShard) await writeFile(file, shardFileText(records));
    const parse = vi.spyOn(JSON, "parse");
    const { store, warnings } = await open(dir);
    const oldCopiesParsed = parse.mock.calls.filter(([text]) => String(text).includes("old copy")).length;
    parse.mockRestore();
    expect(warnings).toEqual([]);
    expect(oldCopiesParsed).toBe(20);
    expect(store.load().sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      latest.sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  it("makes its segment for appends at open and at each seal, before the fold writes: no append waits for a directory sync", async () => {
    const dir = await dirs.make();
    await crashState(dir, { a: rec("a") }, line(rec("a", { updatedAt: T0 + 1 })));
    const { store } = await open(dir);
    // Made as open() reads the files: the first put after a restart does not make a file and sync the directory.
    await vi.waitFor(async () =>
      expect(await journals(dir)).toEqual(["journal-000001.ndjson", "journal-000002.ndjson"]),
    );
    await store.idle(); // the compaction open() started has folded journal-000001 in, and left 000002 to appends
    expect(await journals(dir)).toEqual(["journal-000002.ndjson"]);
    expect(await readFile(join(dir, "actors", "journal-000002.ndjson"))).toEqual(
      Buffer.alloc(JOURNAL_BLOCK_BYTES), // its first block too: a first append only writes and syncs
    );
    const later = rec("b", { updatedAt: T0 + 2 });
    await store.put(later);
    expect(dataOf(await readFile(join(dir, "actors", "journal-000002.ndjson")))).toBe(
      JOURNAL_HEADER + line(later),
    );
    // A seal makes the next segment before the fold writes the files.
    await store.compact();
    expect(await journals(dir)).toEqual(["journal-000003.ndjson"]);
    // Closed with nothing in it, a segment is removed; closing makes none.
    await store.close();
    expect(await journals(dir)).toEqual([]);
    expect(await shards(dir)).toEqual({ a: rec("a", { updatedAt: T0 + 1 }), b: later });
  });

  it("removes the segment it made when open() fails", async () => {
    const dir = await dirs.make();
    await crashState(dir, { a: rec("a") }, line(rec("a", { updatedAt: T0 + 1 })));
    await mkdir(join(dir, "actors", "shard-03.ndjson")); // a file it cannot read: open() rejects
    await expect(open(dir)).rejects.toThrow(/shard-03\.ndjson/);
    expect(await journals(dir)).toEqual(["journal-000001.ndjson"]);
  });

  it("takes read segments only after the one it was started after: appends never go to a segment being folded", async () => {
    const dir = await dirs.make();
    const journal = new StoreJournal({
      actorsDir: dir,
      lineOf: () => undefined,
      onWrite: () => {},
      warn: () => {},
      appended: () => {},
    });
    journal.startAfter(["journal-000001.ndjson"]);
    expect(() => journal.resume([1, 2])).toThrow(
      "journal segment 2 was read, but appends go to 2: startAfter() was not given its name",
    );
    journal.resume([1]);
    expect(journal.sealed.map((s) => s.seq)).toEqual([1]);
    await journal.close();
    expect(await readdir(dir)).toEqual([]);
  });

  it("ignores a torn last line with a warning and keeps the lines before it", async () => {
    const dir = await dirs.make();
    const a1 = rec("a", { updatedAt: T0 + 1 });
    const torn = line(rec("b", { updatedAt: T0 + 2 })).slice(0, 40);
    await crashState(dir, { b: rec("b") }, line(a1) + torn);
    const { store, warnings } = await open(dir);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("torn last line");
    expect(await store.get("a")).toEqual(a1);
    expect(await store.get("b")).toEqual(rec("b"));
    expect(store.report().quarantinedFiles).toEqual([]);
  });

  it("reports a journal with a corrupt line in the middle loudly, keeps a copy, and loads the lines around it", async () => {
    const dir = await dirs.make();
    await crashState(
      dir,
      { a: rec("a") },
      `${line(rec("a", { updatedAt: T0 + 1 }))}{oops\n${line(rec("b"))}`,
    );
    const { store, warnings } = await open(dir);
    const path = join(dir, "actors", "journal-000001.ndjson");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`ACKNOWLEDGED RECORDS MAY BE LOST: corrupt journal ${path}: line 3`);
    const keptAt = join(dir, "quarantine", "journal-000001.ndjson.damaged-2024-05-01T12-00-00-000Z");
    expect(store.report().damagedJournals).toEqual([
      { file: path, keptAt, kind: "corrupt", problem: expect.stringContaining("line 3"), linesLost: 1 },
    ]);
    expect(store.report().quarantinedFiles).toEqual([]);
    // Both valid lines were appended and acknowledged: the one after the damage is kept too.
    expect(store.load()).toEqual([rec("a", { updatedAt: T0 + 1 }), rec("b")]);
    // The segment is folded into the files; its copy stays for good, private to the owner.
    await vi.waitFor(async () => expect(await journalsWithData(dir)).toEqual([]));
    expect(await readFile(keptAt, "utf8")).toContain("{oops\n");
    expect((await stat(keptAt)).mode & 0o777).toBe(0o600);
    await store.close();
    const again = await open(dir);
    expect(again.store.load()).toHaveLength(2);
    expect(again.warnings).toEqual([]);
    expect((await readStateDir(dir)).problems).toEqual([
      { file: keptAt, problem: expect.stringContaining("acknowledged records may have been lost") },
    ]);
  });

  it("quarantines an invalid journal record and migrates an old-version one, as for the files", async () => {
    const dir = await dirs.make();
    const bad = { ...rec("bad"), status: "paused" };
    const old = rec("old", { machineVersion: 1 });
    await crashState(dir, {}, `${JSON.stringify(bad)}\n${line(old)}`);
    const { store, warnings } = await open(dir, {
      migrations: { mention: (snapshot) => ({ migrated: snapshot }) },
    });
    expect(warnings.some((w) => w.includes('record "bad"') && w.includes("quarantined"))).toBe(true);
    expect(store.report().quarantinedRecords).toMatchObject([{ id: "bad" }]);
    expect(store.report().migrated).toEqual([
      { id: "old", machineId: "mention", fromVersion: 1, toVersion: 2 },
    ]);
    expect(await store.get("old")).toMatchObject({ machineVersion: 2, snapshot: { migrated: old.snapshot } });
    expect(await store.get("bad")).toBeUndefined();
  });

  it("replays idempotently: lines already folded into the shards, or older than them, change nothing", async () => {
    const dir = await dirs.make();
    const newer = rec("a", { updatedAt: T0 + 50, snapshot: { v: "shard" } });
    const same = rec("b", { updatedAt: T0 + 3 });
    await crashState(
      dir,
      { a: newer, b: same },
      line(rec("a", { updatedAt: T0 + 10 })) + line(same) + line(same),
    );
    const shardTexts = new Map<string, string>();
    for (const id of ["a", "b"]) shardTexts.set(id, await readFile(shardFile(dir, id), "utf8"));
    const { store } = await open(dir);
    expect(await store.get("a")).toEqual(newer);
    expect(await store.get("b")).toEqual(same);
    // Nothing to fold: once the journal is removed (after open()), the shard files are as they were.
    await vi.waitFor(async () => expect(await journalsWithData(dir)).toEqual([]));
    for (const id of ["a", "b"]) expect(await readFile(shardFile(dir, id), "utf8")).toBe(shardTexts.get(id));
  });

  it("loses nothing when a crash comes after the compaction wrote the shards but before it removed the journal", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    const records = Array.from({ length: 30 }, (_, i) => rec(`m${i}`, { updatedAt: T0 + i }));
    for (const r of records) void store.put(r);
    await store.flush();
    const segment = (await journals(dir))[0] ?? "";
    const journalText = await readFile(join(dir, "actors", segment), "utf8");
    await store.compact();
    expect(await journalsWithData(dir)).toEqual([]);
    // Put the journal back: the state of a crash between the shard writes and the journal's removal.
    await writeFile(join(dir, "actors", segment), journalText);
    const again = await open(dir);
    expect(again.warnings).toEqual([]);
    expect(again.store.load().sort((a, b) => a.updatedAt - b.updatedAt)).toEqual(records);
  });

  it("replaying finished records the archive holds reads each archive hour once, however many there are", async () => {
    const hourReads = async (finished: number) => {
      const dir = await dirs.make();
      const { store } = await open(dir);
      // Finished within one hour: the compaction archives them all in that hour's file.
      for (let i = 0; i < finished; i += 1)
        void store.put(rec(`m${i}`, { status: "done", updatedAt: T0 + i }));
      await store.flush();
      const segment = (await journals(dir))[0] ?? "";
      const journalText = await readFile(join(dir, "actors", segment), "utf8");
      await store.compact();
      await store.close();
      // A crash between the compaction's writes and the journal's removal.
      await writeFile(join(dir, "actors", segment), journalText);
      const lines = vi.spyOn(
        ArchiveFiles.prototype as unknown as { readHour: () => Promise<unknown> },
        "readHour",
      );
      const again = await open(dir);
      expect(again.warnings).toEqual([]);
      expect(again.store.load()).toEqual([]);
      expect(await again.store.get(`m${finished - 1}`)).toMatchObject({ status: "done" });
      const reads = lines.mock.calls.length;
      lines.mockRestore();
      return reads;
    };
    // One read for the whole replay and one for get() above, not one per replayed record.
    expect(await hourReads(10)).toBe(2);
    expect(await hourReads(300)).toBe(2);
  });

  it("replaying looks for newer archived copies only in the hours from each journal line's on, however many there are", async () => {
    const HOUR = 3_600_000;
    const last = (hours: number, ms: number) => T0 + (hours - 1) * HOUR + ms;
    const lookups = async (hours: number) => {
      const dir = await dirs.make();
      const first = await open(dir);
      // One finished record in each of `hours` hours, and 20 more in the last, archived by the compaction.
      for (let h = 0; h < hours; h += 1)
        void first.store.put(rec(`done${h}`, { status: "done", updatedAt: T0 + h * HOUR }));
      for (let i = 0; i < 20; i += 1)
        void first.store.put(rec(`late${i}`, { status: "done", updatedAt: last(hours, 2) }));
      await first.store.compact();
      await first.store.close();
      // Then in the journal: records new since, and older copies of the 20 (left by a crash). A crash.
      const second = await open(dir);
      const news = Array.from({ length: 30 }, (_, i) => rec(`new${i}`, { updatedAt: last(hours, 1) }));
      const olds = Array.from({ length: 20 }, (_, i) => rec(`late${i}`, { updatedAt: last(hours, 1) }));
      await second.store.putAll([...news, ...olds]);
      const has = vi.spyOn(HashSet53.prototype, "has");
      const again = await open(dir);
      const count = has.mock.calls.length;
      has.mockRestore();
      expect(again.warnings).toEqual([]);
      const live = again.store.load().map((r) => r.id);
      expect(live.sort()).toEqual(news.map((r) => r.id).sort());
      expect(await again.store.get("late7")).toMatchObject({ status: "done" }); // the archive's newer copy wins
      return count;
    };
    // One look in one hour for each of the 20; none for the new ones, which no hour holds.
    expect(await lookups(3)).toBe(20);
    expect(await lookups(60)).toBe(20);
  });

  it("compacts by itself once the journal passes journalMaxBytes, and puts made meanwhile stay durable", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir, { journalMaxBytes: 2000 });
    let last: Promise<void> = Promise.resolve();
    for (let i = 0; i < 200; i++) {
      last = store.put(rec(`m${i % 50}`, { updatedAt: T0 + i }));
      if (i % 10 === 9) await last;
    }
    await last;
    expect(store.stats().compactions).toBeGreaterThan(0);
    // Let a compaction still running finish (open() assumes no other writer), then crash: no close().
    await store.idle();
    // A crash now: the shards and whatever journal is left give the latest of every record.
    const again = await open(dir);
    expect(again.store.load()).toHaveLength(50);
    for (let id = 0; id < 50; id++) expect((await again.store.get(`m${id}`))?.updatedAt).toBe(T0 + 150 + id);
    await again.store.close(); // its fold of the journal left, before the crashed store is closed after the test
  });

  it("never acknowledges a put whose append was written short: after a reopen every acknowledged put is there", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    const acknowledged: ActorRecord[] = [];
    const put = async (record: ActorRecord): Promise<void> => {
      await store.put(record);
      acknowledged.push(record);
    };
    await put(rec("a"));
    const probe = await fsOpen(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const realWrite = proto.write;
    type Write = (buffer: Buffer, offset?: number, length?: number, position?: number) => Promise<unknown>;
    const write = vi.spyOn(proto, "write") as unknown as { mockImplementationOnce(fn: Write): unknown };
    // The disk fills up mid-append: half the bytes land, then the next write fails.
    write.mockImplementationOnce(function (this: FileHandle, buffer, offset = 0, length, position) {
      const rest = (length ?? buffer.byteLength - offset) >> 1;
      return (realWrite as unknown as Write).call(this, buffer, offset, rest, position);
    });
    write.mockImplementationOnce(() => Promise.reject(new Error("ENOSPC: no space left on device, write")));
    await Promise.allSettled([put(rec("b")), put(rec("c"))]);
    vi.restoreAllMocks();
    await store.flush(); // the retry lands
    await put(rec("d"));
    expect(acknowledged.map((r) => r.id)).toEqual(["a", "d"]);

    // A crash now: the reopened store has every acknowledged put and finds no damage.
    const again = await open(dir);
    for (const record of acknowledged) expect(await again.store.get(record.id)).toEqual(record);
    expect(await again.store.get("b")).toEqual(rec("b")); // flush() wrote the failed batch again
    expect(again.warnings).toEqual([]);
    expect(again.store.report().damagedJournals).toEqual([]);
  });

  it("seals a segment whose failed append cannot be undone and goes on in a new one; the leftover reads as a torn tail", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.put(rec("a"));
    const probe = await fsOpen(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    type Write = (buffer: Buffer, offset?: number, length?: number, position?: number) => Promise<unknown>;
    const realWrite = proto.write as unknown as Write;
    const write = vi.spyOn(proto, "write") as unknown as { mockImplementationOnce(fn: Write): unknown };
    write.mockImplementationOnce(function (this: FileHandle, buffer, offset = 0, length, position) {
      return realWrite.call(this, buffer, offset, (length ?? buffer.byteLength - offset) >> 1, position);
    });
    const eio = () => Promise.reject(new Error("EIO: i/o error"));
    write.mockImplementationOnce(eio); // the rest of the append
    write.mockImplementationOnce(eio); // zeroing it
    vi.spyOn(proto, "truncate").mockImplementationOnce(eio); // cutting it off
    await expect(store.put(rec("b"))).rejects.toThrow(/EIO/);
    vi.restoreAllMocks();
    await store.put(rec("c"));
    expect(await journals(dir)).toEqual(["journal-000001.ndjson", "journal-000002.ndjson"]);
    if (CAN_LIST_OPEN_FILES)
      expect(openFilesUnder(dir).map((f) => f.slice(dir.length))).toEqual(["/actors/journal-000002.ndjson"]);

    const again = await open(dir);
    expect(again.store.load().map((r) => r.id)).toEqual(["a", "b", "c"]);
    expect(again.warnings).toEqual([expect.stringContaining("torn last line of")]);
    expect(again.store.report().damagedJournals).toEqual([]);
  });

  it("tells a journal cut short after it was written from a torn append: reported, a copy kept, the records before the cut loaded", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    for (let i = 0; i < 10; i++) await store.put(rec(`m${i}`, { updatedAt: T0 + i }));
    const path = join(dir, "actors", "journal-000001.ndjson");
    const bytes = await readFile(path);
    const data = dataOf(bytes);
    // Another dir, as a crash and a truncation to half the data leave it.
    const cut = await dirs.make();
    await crashState(cut, {}, "");
    await writeFile(join(cut, "actors", "journal-000001.ndjson"), bytes.subarray(0, data.length >> 1));
    expect((await readStateDir(cut)).problems).toEqual([
      {
        file: join(cut, "actors", "journal-000001.ndjson"),
        problem: expect.stringMatching(/^truncated journal: /),
      },
    ]);
    const { store: reopened, warnings } = await open(cut);
    const keptAt = join(cut, "quarantine", "journal-000001.ndjson.damaged-2024-05-01T12-00-00-000Z");
    expect(reopened.report().damagedJournals).toEqual([
      {
        file: join(cut, "actors", "journal-000001.ndjson"),
        keptAt,
        kind: "truncated",
        problem: expect.stringContaining("cut short"),
        linesLost: 1,
      },
    ]);
    expect(warnings).toEqual([
      expect.stringContaining("ACKNOWLEDGED RECORDS MAY BE LOST: truncated journal"),
    ]);
    expect(warnings.join("\n")).not.toContain("never acknowledged");
    // Every whole line before the cut is loaded; the copy holds exactly what was found.
    const whole = data.slice(0, data.length >> 1).split("\n").length - 2; // minus the header and the cut line
    expect(whole).toBeGreaterThan(2);
    expect(reopened.load().map((r) => r.id)).toEqual(Array.from({ length: whole }, (_, i) => `m${i}`));
    expect(await readFile(keptAt)).toEqual(bytes.subarray(0, data.length >> 1));
    await reopened.close();
    expect(await readFile(keptAt)).toEqual(bytes.subarray(0, data.length >> 1)); // never deleted
    expect((await readStateDir(cut)).quarantined.map(({ file }) => file)).toContain(keptAt);
  });

  it("drops a torn last append (a partial line before the zero padding) with a brief warning only", async () => {
    const dir = await dirs.make();
    const { store } = await open(dir);
    await store.put(rec("a"));
    const path = join(dir, "actors", "journal-000001.ndjson");
    const bytes = await readFile(path);
    const end = bytes.indexOf(0);
    const crashed = await dirs.make();
    await crashState(crashed, {}, "");
    const torn = Buffer.from(bytes);
    torn.write(line(rec("b")).slice(0, 30), end, "utf8"); // an append a crash cut short
    await writeFile(join(crashed, "actors", "journal-000001.ndjson"), torn);
    expect((await readStateDir(crashed)).problems).toEqual([]);
    const { store: reopened, warnings } = await open(crashed);
    expect(warnings).toEqual([expect.stringContaining("torn last line")]);
    expect(warnings[0]).toContain("never acknowledged");
    expect(reopened.report().damagedJournals).toEqual([]);
    expect(reopened.load()).toEqual([rec("a")]);
    await expect(readdir(join(crashed, "quarantine"))).rejects.toThrow(/ENOENT/);
  });

  it.skipIf(!CAN_LIST_OPEN_FILES)(
    "undoes a failed append and goes on in the same segment; closes it at close()",
    async () => {
      const dir = await dirs.make();
      const { store, warnings } = await open(dir);
      const probe = await fsOpen(join(dir, "probe"), "w");
      const fileHandle = Object.getPrototypeOf(probe) as FileHandle;
      await probe.close();
      vi.spyOn(fileHandle, "datasync").mockRejectedValueOnce(new Error("EIO: i/o error, fdatasync"));
      await expect(store.put(rec("a"))).rejects.toThrow(/EIO/);
      expect(warnings.join("\n")).toMatch(/journal-000001/);
      // The append was zeroed out again, so the segment holds only whole batches: later ones go on in it.
      await store.put(rec("b"));
      expect(openFilesUnder(dir).map((f) => f.slice(dir.length))).toEqual(["/actors/journal-000001.ndjson"]);
      expect(dataOf(await readFile(join(dir, "actors", "journal-000001.ndjson")))).toBe(
        JOURNAL_HEADER + line(rec("a")) + line(rec("b")),
      );
      await store.close();
      expect(openFilesUnder(dir)).toEqual([]);
    },
  );

  it("status (readStateDir) replays the journal read-only and shows the latest records", async () => {
    const dir = await dirs.make();
    const a1 = rec("a", { updatedAt: T0 + 1 });
    const b1 = rec("b", { status: "done", updatedAt: T0 + 2 });
    await crashState(dir, { a: rec("a"), b: rec("b") }, line(a1) + line(b1) + line(rec("c")).slice(0, 10));
    const segment = join(dir, "actors", "journal-000001.ndjson");
    const text = await readFile(segment, "utf8");
    const reading = await readStateDir(dir, { machineVersions: VERSIONS });
    expect(reading.problems).toEqual([]);
    const byId = new Map(reading.actors.map((a) => [a.record.id, a]));
    expect(byId.get("a")).toMatchObject({ record: a1, file: segment, location: "live" });
    expect(byId.get("b")).toMatchObject({ record: b1, file: segment, location: "archive" });
    expect(byId.has("c")).toBe(false);
    expect(await readFile(segment, "utf8")).toBe(text);

    // A corrupt line (the header is line 1) is reported; nothing is moved.
    await crashState(dir, {}, `${line(a1)}{oops\n${line(b1)}`);
    expect((await readStateDir(dir)).problems).toEqual([
      { file: segment, problem: expect.stringContaining("line 3") },
    ]);
  });

  it("status (readStateDir with keep) keeps what keep makes of the copy it would keep whole", async () => {
    const dir = await dirs.make();
    const a1 = rec("a", { updatedAt: T0 + 1 });
    const tie = rec("t", { updatedAt: T0 + 1 });
    const x = rec("x", { updatedAt: T0 + 1 });
    const changed = { ...x, snapshot: { status: "active", value: "reminded", context: { id: "x" } } };
    // a: the journal's is newer; t: a tie of the same data (the file's copy is kept); x: a tie of
    // other data (the journal's line is the later); f: the file's alone; j: the journal's alone.
    await crashState(
      dir,
      { a: rec("a"), t: tie, x, f: rec("f") },
      line(a1) + line(tie) + line(changed) + line(rec("j")),
    );
    const said = ({ record, file }: StoredActor) => `${record.id} ${record.updatedAt - T0} ${basename(file)}`;
    const whole = await readStateDir(dir, { machineVersions: VERSIONS });
    const kept = await readStateDir(dir, { machineVersions: VERSIONS, keep: said });
    expect(kept.actors).toEqual(whole.actors.map(said));
    const segment = "journal-000001.ndjson";
    expect([...kept.actors].sort()).toEqual([
      `a 1 ${segment}`,
      `f 0 ${basename(shardFile(dir, "f"))}`,
      `j 0 ${segment}`,
      `t 1 ${basename(shardFile(dir, "t"))}`,
      `x 1 ${segment}`,
    ]);
  });

  it("status (readStateDir with keep) holds no record of a file once it reads the next", async () => {
    const dir = await dirs.make();
    const ids = Array.from({ length: 40 }, (_, i) => `r${i}`);
    await crashState(dir, Object.fromEntries(ids.map((id) => [id, rec(id)])), "");
    // Each record's file, told once a collection frees the record. (A WeakRef would keep its target
    // until the microtasks run out, and the files are read within one run of them.)
    const freed: string[] = [];
    const collected = new FinalizationRegistry<string>((file) => freed.push(file));
    const files: string[] = [];
    await readStateDir(dir, {
      keep: ({ record, file }) => {
        collected.register(record, file);
        files.push(file);
        if (files.length === ids.length) (globalThis as { gc: () => void }).gc();
        return record.id;
      },
    });
    const last = files.at(-1);
    const earlier = files.filter((file) => file !== last);
    expect(new Set(earlier).size).toBe(3);
    // What that collection freed is told in the tasks after it; nothing else collects the old generation meanwhile.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(freed.filter((file) => file !== last).length).toBe(earlier.length);
  });
});
