// The SnapshotStore port's contract, run against both implementations: the lowdb store (files in a
// state directory) and the in-memory one. A durable host relies on every behaviour asserted here.
import { afterEach, describe, expect, it } from "vitest";
import {
  type ActorRecord,
  type ActorRecordRules,
  InvalidActorRecordError,
  type SnapshotStore,
  SnapshotStoreInUseError,
  SnapshotStoreNotOpenError,
  type SnapshotStoreOpenOptions,
  StateDirLockedError,
  createLowdbStore,
  createMemoryStore,
} from "../../src/persistence/index.js";
import { STORE_T0, storeRecord } from "../support/storeRecords.js";
import { tempDir } from "../support/tempDir.js";

const RULES: ActorRecordRules = { machineVersions: { mention: 2 } };

interface Subject {
  store: SnapshotStore;
  /** The same store as another host would open it: a new instance on the directory (lowdb), the same one (memory). */
  again(): SnapshotStore;
}

const implementations: Array<{ name: string; make(): Subject; heldError: new (...args: never[]) => Error }> =
  [
    {
      name: "lowdb",
      make() {
        const stateDir = tempDir("a2a-store-contract-");
        return { store: createLowdbStore({ stateDir }), again: () => createLowdbStore({ stateDir }) };
      },
      heldError: StateDirLockedError,
    },
    {
      name: "memory",
      make() {
        const store = createMemoryStore();
        return { store, again: () => store };
      },
      heldError: SnapshotStoreInUseError,
    },
  ];

const toClose: SnapshotStore[] = [];
afterEach(async () => {
  for (const store of toClose.splice(0)) await store.close();
});

function openOptions(rules: ActorRecordRules = RULES, warnings: string[] = []): SnapshotStoreOpenOptions {
  return { now: () => STORE_T0, rules, onWarning: (message) => warnings.push(message) };
}

async function opened(store: SnapshotStore, rules?: ActorRecordRules): Promise<SnapshotStore> {
  await store.open(openOptions(rules));
  toClose.push(store);
  return store;
}

const byId = (records: ActorRecord[]): string[] => records.map((r) => r.id).sort();

describe.each(implementations)("SnapshotStore contract: $name", ({ make, heldError }) => {
  it("refuses a second open while held, and serves the first holder on", async () => {
    const { store, again } = make();
    await opened(store);
    await store.put([storeRecord("a")]);
    await expect(again().open(openOptions())).rejects.toBeInstanceOf(heldError);
    await expect(store.open(openOptions())).rejects.toThrow(/locked by process|already open/);
    expect(await store.get("a")).toEqual(storeRecord("a"));
  });

  it("round-trips a record with its pending delayed events", async () => {
    const { store } = make();
    await opened(store);
    const record = storeRecord("a", {
      delayed: [
        {
          id: "xstate.after.3000.m.wait",
          source: ["child"],
          target: ["child"],
          event: { type: "xstate.after.3000.m.wait", extra: 1 },
          dueAt: STORE_T0 + 3_000,
        },
      ],
      meta: { note: "kept" },
    });
    await store.put([record]);
    expect(await store.get("a")).toEqual(record);
    expect(await store.list("live")).toEqual([record]);
    expect(await store.get("missing")).toBeUndefined();
  });

  it("takes any string as an id, Object.prototype's names included", async () => {
    const { store } = make();
    await opened(store);
    expect(await store.get("toString")).toBeUndefined();
    await store.put([storeRecord("__proto__"), storeRecord("constructor", { status: "done" })]);
    expect(await store.get("__proto__")).toEqual(storeRecord("__proto__"));
    expect(byId(await store.list("live"))).toEqual(["__proto__"]);
    expect(byId(await store.list("archive"))).toEqual(["constructor"]);
  });

  it("keeps the rules it was opened with, whatever the caller changes later", async () => {
    const { store } = make();
    const rules = { machineVersions: { mention: 2 } };
    await opened(store, rules);
    rules.machineVersions.mention = 3;
    await store.put([storeRecord("a")]);
    expect((await store.get("a"))?.machineVersion).toBe(2);
  });

  it("copies in and out: changing a put or a returned record never changes what is stored", async () => {
    const { store } = make();
    await opened(store);
    const record = storeRecord("a");
    await store.put([record]);
    (record.snapshot as { value: string }).value = "changed after put";
    record.delayed?.push({ id: "late", source: [], target: [], event: { type: "LATE" }, dueAt: 1 });
    const read = await store.get("a");
    (read?.snapshot as { value: string }).value = "changed after get";
    expect(await store.get("a")).toEqual(storeRecord("a"));
  });

  it("kept() is the live record as last put, the store's own and the same at each call; undefined once archived", async () => {
    const { store } = make();
    await opened(store);
    const kept = (id: string) => store.kept?.(id);
    await store.put([storeRecord("a"), storeRecord("done", { status: "done" })]);
    expect(kept("a")).toEqual(storeRecord("a"));
    expect(kept("a")).toBe(kept("a"));
    expect(kept("done")).toBeUndefined();
    expect(kept("never put")).toBeUndefined();
    const before = kept("a");
    await store.put([storeRecord("a", { updatedAt: STORE_T0 + 1 })]);
    expect(kept("a")?.updatedAt).toBe(STORE_T0 + 1);
    expect(before?.updatedAt).toBe(STORE_T0); // a later put replaces the record, never changes it
    await store.put([storeRecord("a", { status: "done", updatedAt: STORE_T0 + 2 })]);
    expect(kept("a")).toBeUndefined();
    await store.close();
    expect(() => kept("a")).toThrow(SnapshotStoreNotOpenError);
  });

  it("refuses a batch whole when one record is invalid, naming it", async () => {
    const { store } = make();
    await opened(store);
    const stale = storeRecord("b", { machineVersion: 1 });
    const failure = store.put([storeRecord("a"), stale]);
    await expect(failure).rejects.toBeInstanceOf(InvalidActorRecordError);
    await expect(failure).rejects.toThrow(/record "b" is invalid: machine "mention" is at version 2/);
    expect(await store.get("a")).toBeUndefined();
    expect(await store.list("live")).toEqual([]);
  });

  it("archives a finished record on put, and a later live put brings it back", async () => {
    const { store } = make();
    await opened(store);
    await store.put([storeRecord("live"), storeRecord("done", { status: "done" })]);
    await store.put([storeRecord("failed", { status: "error" })]);
    expect(byId(await store.list("live"))).toEqual(["live"]);
    expect(byId(await store.list("archive"))).toEqual(["done", "failed"]);
    expect((await store.get("done"))?.status).toBe("done");
    await store.put([storeRecord("done", { updatedAt: STORE_T0 + 1 })]);
    expect(byId(await store.list("live"))).toEqual(["done", "live"]);
    expect(byId(await store.list("archive"))).toEqual(["failed"]);
  });

  it("prunes archived records last updated before the cutoff, and only those", async () => {
    const { store } = make();
    await opened(store);
    await store.put([
      storeRecord("old", { status: "done", updatedAt: STORE_T0 - 10_000 }),
      storeRecord("edge", { status: "done", updatedAt: STORE_T0 }),
      storeRecord("live", { updatedAt: STORE_T0 - 10_000 }),
    ]);
    expect(await store.prune(STORE_T0)).toBe(1);
    expect(byId(await store.list("archive"))).toEqual(["edge"]);
    expect(await store.get("old")).toBeUndefined();
    expect(byId(await store.list("live"))).toEqual(["live"]);
    expect(await store.prune(STORE_T0)).toBe(0);
  });

  it("keeps its data across close and a new open", async () => {
    const { store, again } = make();
    await store.open(openOptions());
    await store.put([storeRecord("a"), storeRecord("z", { status: "done" })]);
    await store.close();
    const next = await opened(again());
    expect(await next.get("a")).toEqual(storeRecord("a"));
    expect(byId(await next.list("archive"))).toEqual(["z"]);
  });

  it("migrates a record of an older machine version at open, and sets aside one it cannot use", async () => {
    const { store, again } = make();
    await store.open(openOptions({ machineVersions: { mention: 1, old: 1 } }));
    await store.put([
      storeRecord("a", { machineVersion: 1, snapshot: { step: 1 } }),
      storeRecord("gone", { machineId: "old", machineVersion: 1 }),
    ]);
    await store.close();

    const warnings: string[] = [];
    const rules: ActorRecordRules = {
      machineVersions: { mention: 2, old: 2 },
      migrations: { mention: (snapshot, from) => ({ ...(snapshot as object), migratedFrom: from }) },
    };
    const next = again();
    const report = await next.open(openOptions(rules, warnings));
    toClose.push(next);
    expect(report.migrated).toEqual([{ id: "a", machineId: "mention", fromVersion: 1, toVersion: 2 }]);
    expect(report.quarantinedRecords).toEqual([
      expect.objectContaining({ id: "gone", problem: expect.stringMatching(/no migration is registered/) }),
    ]);
    expect(warnings.join("\n")).toMatch(/"gone"/);
    expect(await next.get("a")).toMatchObject({ machineVersion: 2, snapshot: { step: 1, migratedFrom: 1 } });
    expect(await next.get("gone")).toBeUndefined();
    expect(byId(await next.list("live"))).toEqual(["a"]);
  });

  it("rejects every call before open and after close, naming the method; a second close does nothing", async () => {
    const { store } = make();
    const calls = {
      get: () => store.get("a"),
      put: () => store.put([storeRecord("a")]),
      list: () => store.list("live"),
      prune: () => store.prune(STORE_T0),
    };
    for (const [method, call] of Object.entries(calls)) {
      await expect(call()).rejects.toBeInstanceOf(SnapshotStoreNotOpenError);
      await expect(call()).rejects.toThrow(`${method}() refused: the store is not open`);
    }
    await store.open(openOptions());
    await store.put([storeRecord("a")]);
    await store.close();
    await store.close();
    for (const [method, call] of Object.entries(calls)) {
      await expect(call()).rejects.toThrow(`${method}() refused: the store is not open`);
    }
  });

  it("refuses a bad machine version at open, naming it, and can then be opened", async () => {
    const { store } = make();
    const bad = openOptions({ machineVersions: { mention: -1 } });
    await expect(store.open(bad)).rejects.toThrow(
      /machineVersions\.mention must be a whole number ≥ 0, got -1/,
    );
    await expect(store.get("a")).rejects.toBeInstanceOf(SnapshotStoreNotOpenError);
    await opened(store);
  });

  it("refuses a bad list kind or prune cutoff with a clear error", async () => {
    const { store } = make();
    await opened(store);
    await expect(store.list("all" as "live")).rejects.toThrow(
      /list\(\) takes "live" or "archive", got "all"/,
    );
    await expect(store.prune(Number.NaN)).rejects.toThrow(
      /prune\(\) takes a time in ms since the epoch, got NaN/,
    );
  });
});

describe("createMemoryStore", () => {
  it("hands out frozen records from list(), so a caller that changes one fails in tests", async () => {
    const store = await opened(createMemoryStore());
    await store.put([storeRecord("a")]);
    const [listed] = await store.list("live");
    expect(() => (listed?.delayed as unknown[]).push({ id: "x" })).toThrow(TypeError);
    expect(() => ((listed?.snapshot as { value: string }).value = "changed")).toThrow(TypeError);
    expect(await store.get("a")).toEqual(storeRecord("a"));
  });

  it("hands out the frozen record from kept(), so a caller that changes it fails in tests", async () => {
    const store = await opened(createMemoryStore());
    await store.put([storeRecord("a")]);
    const kept = store.kept?.("a");
    expect(kept).toEqual(storeRecord("a"));
    expect(() => ((kept?.snapshot as { value: string }).value = "changed")).toThrow(TypeError);
    expect(await store.get("a")).toEqual(storeRecord("a"));
  });

  it("migrates a record kept() froze with a migration that changes the snapshot it is given", async () => {
    const store = createMemoryStore();
    await store.open(openOptions({ machineVersions: { mention: 1 } }));
    await store.put([storeRecord("a", { machineVersion: 1, snapshot: { step: 1 } })]);
    store.kept?.("a");
    await store.close();
    const migrations = {
      mention: (snapshot: unknown) => Object.assign(snapshot as object, { migrated: true }),
    };
    const report = await store.open(openOptions({ machineVersions: { mention: 2 }, migrations }));
    toClose.push(store);
    expect(report.quarantinedRecords).toEqual([]);
    expect(await store.get("a")).toMatchObject({ machineVersion: 2, snapshot: { step: 1, migrated: true } });
  });
});

describe("createLowdbStore", () => {
  it("names the holding process when the directory is held", async () => {
    const stateDir = tempDir("a2a-store-contract-");
    await opened(createLowdbStore({ stateDir }));
    const refusal = createLowdbStore({ stateDir }).open(openOptions());
    await expect(refusal).rejects.toThrow(`locked by process ${process.pid}`);
  });

  it("refuses bad options at once, naming the option", () => {
    expect(() => createLowdbStore({ stateDir: "" })).toThrow(
      "createLowdbStore: stateDir must be a non-empty path",
    );
    expect(() => createLowdbStore({ stateDir: "/tmp/x", shards: 0 })).toThrow(
      "createLowdbStore: shards must be a whole number from 1 to 4096, got 0",
    );
  });
});
