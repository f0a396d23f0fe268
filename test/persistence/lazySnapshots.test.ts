// The lowdb store reads what a start needs of each live record (ids, due times, meta, the states to
// check) and leaves its snapshot in the file, read and parsed when it is read: once its actor wakes.
import { readdirSync, readlinkSync } from "node:fs";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { setup } from "xstate";
import {
  type ActorRecord,
  CorruptSnapshotError,
  createDurableHost,
  createLowdbStore,
  type DurableHost,
} from "../../src/durable/index.js";
import { DEFAULT_SHARDS, LowdbSnapshotStore } from "../../src/persistence/index.js";
import { StateFileReadError } from "../../src/persistence/DurableJsonFile.js";
import { MAX_SNAPSHOT_FILES } from "../../src/persistence/SnapshotFile.js";
import { recordLine } from "../../src/persistence/recordLine.js";
import { shardHeader } from "../../src/persistence/shardFormat.js";
import { shardPath } from "../support/shardFiles.js";
import { STORE_T0, storeRecord } from "../support/storeRecords.js";
import { tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
const stores: LowdbSnapshotStore[] = [];
const hosts: DurableHost[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const host of hosts.splice(0)) await host.stop();
  for (const store of stores.splice(0).reverse()) await store.close().catch(() => undefined);
  await dirs.cleanup();
});

const CONTEXT = "the context of";
/** Makes a snapshot large enough to be kept apart (a small one is written whole, and parsed at open). */
const PAGE = "p".repeat(1_100);

/** The texts JSON.parse is given from now on that hold a context of these tests. */
function contextsParsed(): () => string[] {
  const parse = vi.spyOn(JSON, "parse");
  return () => parse.mock.calls.map(([text]) => text).filter((text) => text.includes(CONTEXT));
}

async function openStore(dir: string, validated: unknown[] = []): Promise<LowdbSnapshotStore> {
  const store = await LowdbSnapshotStore.open({
    dir,
    now: () => STORE_T0,
    shards: 4,
    machineVersions: { mention: 2 },
    validateSnapshot: (_machine, snapshot) => void validated.push(snapshot),
    onWarning: () => {},
  });
  stores.push(store);
  return store;
}

const IDS = ["a", "b", "c", "d", "e", "f"];
const waiting = (id: string): ActorRecord =>
  storeRecord(id, {
    snapshot: { status: "active", value: "waiting", context: { note: `${CONTEXT} ${id}`, page: PAGE } },
  });

it("open() parses no live snapshot, from the shards or from a journal a crash left: a snapshot is parsed when read", async () => {
  for (const crash of [false, true]) {
    const dir = await dirs.make();
    const first = await openStore(dir);
    await first.putAll(IDS.map(waiting));
    // A crash leaves the records in the journal only; a close folds them into the shards.
    if (crash) await first.flush();
    else await first.close();

    const parsed = contextsParsed();
    const validated: unknown[] = [];
    const store = await openStore(dir, validated);
    const live: Array<Readonly<ActorRecord>> = [];
    store.forEachLive((record) => live.push(record));
    expect(live.map((r) => r.id).sort()).toEqual(IDS);
    expect(parsed(), crash ? "from the journal" : "from the shards").toEqual([]);
    // Each record's state was checked, from its outline.
    expect(validated).toEqual(IDS.map(() => ({ status: "active", value: "waiting" })));

    const b = live.find((r) => r.id === "b");
    expect(b?.snapshot).toEqual(waiting("b").snapshot);
    expect(parsed()).toEqual([JSON.stringify(waiting("b").snapshot)]);
    // get() gives a copy the caller owns.
    const copy = await store.get("c");
    (copy?.snapshot as { value: string }).value = "changed";
    expect((await store.get("c"))?.snapshot).toEqual(waiting("c").snapshot);
    vi.restoreAllMocks();
  }
});

/** The store files of `dir` this process holds open. */
function openFiles(dir: string): string[] {
  const open: string[] = [];
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`${dir}/actors/`)) open.push(target.slice(dir.length + 1));
    } catch {
      // closed meanwhile (the fd of the listing itself)
    }
  }
  return open.sort();
}

it("open() holds no large snapshot: each is read from the file open() read, a shard rewritten or a segment folded since too", async () => {
  for (const crash of [false, true]) {
    const written = await dirs.make();
    const first = await openStore(written);
    await first.putAll(IDS.map(waiting));
    // A crash leaves the records in the journal only (the files as they are after the put resolved).
    const dir = await dirs.make();
    if (crash) await first.flush();
    else await first.close();
    await cp(written, dir, { recursive: true });
    await first.close();

    const store = await openStore(dir);
    const held = new Map<string, Readonly<ActorRecord>>();
    store.forEachLive((record) => held.set(record.id, record));
    // The files read stay open for the snapshots in them: the shards, or the segment a crash left.
    const kind = crash ? "actors/journal-000001" : "actors/shard-";
    expect(openFiles(dir).filter((file) => file.startsWith(kind)).length, kind).toBeGreaterThan(0);

    // Every shard is rewritten (renamed over) and the segment folded and deleted; a's snapshot changes.
    await store.putAll(
      IDS.map((id) => (id === "a" ? storeRecord(id) : waiting(id))).filter((r) => r.id === "a"),
    );
    for (const id of IDS.slice(1))
      await store.put({ ...(held.get(id) as ActorRecord), updatedAt: STORE_T0 + 1 });
    await store.compact();
    for (const id of IDS.slice(1)) expect(held.get(id)?.snapshot, id).toEqual(waiting(id).snapshot);
    expect((await store.get("b"))?.snapshot).toEqual(waiting("b").snapshot);

    // Once the store is closed, its records read nothing more: their snapshots were never in memory.
    await store.close();
    expect(openFiles(dir)).toEqual([]);
    expect(() => held.get("b")?.snapshot).toThrow(StateFileReadError);
    expect(() => held.get("b")?.snapshot).toThrow(/its store is closed/);
    // And they were written whole where they moved: a new open reads them all.
    const again = await openStore(dir);
    for (const id of IDS.slice(1)) expect((await again.get(id))?.snapshot, id).toEqual(waiting(id).snapshot);
  }
});

it("a file whose records keep no snapshot in it is not held open", async () => {
  const dir = await dirs.make();
  const first = await openStore(dir);
  // Small snapshots are written whole, parsed at open: nothing to read later.
  await first.putAll(IDS.map((id) => storeRecord(id)));
  await first.flush();
  const store = await openStore(dir);
  expect(openFiles(dir).filter((file) => !file.startsWith("actors/journal-"))).toEqual([]);
  await store.compact();
  expect(openFiles(dir).filter((file) => file.startsWith("actors/shard-"))).toEqual([]);
});

it("keeps at most MAX_SNAPSHOT_FILES files open: the records of the others hold their snapshots", async () => {
  const dir = await dirs.make();
  const shards = MAX_SNAPSHOT_FILES + 44;
  const open = (d: string) =>
    LowdbSnapshotStore.open({ dir: d, shards, machineVersions: { mention: 2 }, onWarning: () => {} });
  const first = await open(dir);
  const ids = Array.from({ length: 3 * shards }, (_, i) => `w${i}`);
  await first.putAll(ids.map(waiting));
  await first.close();

  const store = await open(dir);
  stores.push(store);
  const held: Array<Readonly<ActorRecord>> = [];
  store.forEachLive((record) => held.push(record));
  expect(openFiles(dir).filter((file) => file.startsWith("actors/shard-"))).toHaveLength(MAX_SNAPSHOT_FILES);
  await store.close();
  const readable = held.filter((record) => {
    try {
      expect(record.snapshot).toEqual(waiting(record.id).snapshot);
      return true;
    } catch (error) {
      expect(error).toBeInstanceOf(StateFileReadError);
      return false;
    }
  });
  // The records of the files not kept open hold their snapshots; every shard holds some of the ids.
  expect(readable.length).toBeGreaterThan(0);
  expect(readable.length).toBeLessThan(ids.length);
});

/** Waits for PING; a reminder an hour later. */
const waiter = setup({
  types: { context: {} as { note: string; page: string }, input: {} as { note: string } },
}).createMachine({
  context: ({ input }) => ({ note: input.note, page: PAGE }),
  initial: "waiting",
  states: {
    waiting: { on: { PING: "pinged" }, after: { 3_600_000: "reminded" } },
    pinged: { after: { 3_600_000: "reminded" } },
    reminded: { type: "final" },
  },
});

function host(stateDir: string, warnings: string[] = []): DurableHost {
  const h = createDurableHost({
    store: createLowdbStore({ stateDir }),
    machines: { waiter: { machine: waiter, version: 1 } },
    logger: { warn: (message) => warnings.push(message) },
  });
  hosts.push(h);
  return h;
}

it("a host's start and list() parse no waiting actor's snapshot; send() and get() parse only their actor's", async () => {
  const dir = await dirs.make();
  const first = host(dir);
  await first.start();
  for (const id of IDS) await first.spawn("waiter", id, { note: `${CONTEXT} ${id}` });
  await first.stop();

  const parsed = contextsParsed();
  const again = host(dir);
  await again.start();
  expect(again.counts()).toMatchObject({ live: 0, dormant: IDS.length });
  expect((await again.list()).map(({ id, value }) => [id, value]).sort()).toEqual(
    IDS.map((id) => [id, "waiting"]),
  );
  expect(parsed()).toEqual([]);

  await again.send("b", { type: "PING" });
  expect(await again.get("b")).toMatchObject({ value: "pinged", context: { note: `${CONTEXT} b` } });
  expect(await again.get("d")).toMatchObject({ value: "waiting", context: { note: `${CONTEXT} d` } });
  const read = parsed().join("\n");
  for (const id of IDS) expect(read.includes(`${CONTEXT} ${id}"`), id).toBe(id === "b" || id === "d");
});

it("a snapshot damaged on disk is found when its actor wakes: it stays stored, and send() and get() name it", async () => {
  const dir = await dirs.make();
  const record: ActorRecord = {
    id: "w1",
    machineId: "waiter",
    machineVersion: 1,
    snapshot: { status: "active", value: "waiting", context: { page: PAGE }, children: {}, historyValue: {} },
    status: "active",
    updatedAt: Date.now(),
  };
  const line = recordLine(record);
  const damaged = `${line.slice(0, line.lastIndexOf("\t") + 1)}{"status":"active","val`;
  const file = shardPath(dir, "w1", DEFAULT_SHARDS);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${shardHeader(1)}${damaged}\n`);

  const warnings: string[] = [];
  const h = host(dir, warnings);
  await h.start();
  expect(await h.list()).toEqual([{ id: "w1", kind: "waiter", status: "active", value: "waiting" }]);
  await expect(h.send("w1", { type: "PING" })).rejects.toThrow(CorruptSnapshotError);
  expect(warnings.join("\n")).toMatch(
    /could not resume actor w1 \(waiter\); it stays stored: .*stored snapshot of actor "w1" is not JSON/,
  );
  await expect(h.get("w1")).rejects.toMatchObject({ code: "CORRUPT_SNAPSHOT", id: "w1" });
  await h.stop();
  // Nothing lost: the damaged bytes are still on disk, for an operator to mend.
  expect(await readFile(file, "utf8")).toContain(damaged);
});

it("a damaged snapshot that a migration reads is quarantined with its text as it was: open() goes on", async () => {
  const dir = await dirs.make();
  const line = recordLine(waiting("old"));
  const damaged = `${line.slice(0, line.lastIndexOf("\t") + 1)}{"status":"active","val`;
  const file = shardPath(dir, "old", 4);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${shardHeader(1)}${damaged}\n`);
  const store = await LowdbSnapshotStore.open({
    dir,
    now: () => STORE_T0,
    shards: 4,
    machineVersions: { mention: 3 },
    migrations: { mention: (snapshot) => snapshot },
    onWarning: () => {},
  });
  stores.push(store);
  const [quarantined] = store.report().quarantinedRecords;
  expect(quarantined).toMatchObject({
    id: "old",
    problem: expect.stringMatching(/migration failed: .*not JSON/),
  });
  const kept = await readFile(store.report().recordQuarantineFile ?? "", "utf8");
  expect(JSON.parse(kept).records[0].record.snapshot).toBe('{"status":"active","val');
  expect(await store.get("old")).toBeUndefined();
});
