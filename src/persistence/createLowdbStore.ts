import type { ActorRecord } from "./actorRecord.js";
import { LowdbSnapshotStore } from "./LowdbSnapshotStore.js";
import {
  type SnapshotStoreOpenReport,
  type SnapshotStoreOptions,
  checkOptions,
} from "./snapshotStoreOptions.js";
import {
  type SnapshotStore,
  type SnapshotStoreOpenOptions,
  SnapshotStoreNotOpenError,
  checkCutoff,
  checkListKind,
} from "./SnapshotStorePort.js";
import { type StateDirLock, acquireStateDirLock } from "./StateDirLock.js";

export interface LowdbStoreOptions extends Pick<
  SnapshotStoreOptions,
  "shards" | "cleanupMaxAgeMs" | "journalMaxBytes"
> {
  /** The state directory: the store keeps its files in it, and locks `.lock`. */
  stateDir: string;
}

/**
 * The default store: actor records as JSON files in `stateDir` (LowdbSnapshotStore). open() takes the
 * directory's lock first, so a second holder (any process, this one included) is refused with a
 * StateDirLockedError naming it. A put resolves once its batch is fdatasynced to the journal.
 *
 * @throws TypeError at once when an option is not valid.
 */
export function createLowdbStore(o: LowdbStoreOptions): SnapshotStore {
  return lowdbStore(o, true);
}

/**
 * The lowdb store; `takeLock` false: the caller holds the directory's lock already (the A2A runtime,
 * which keeps its other files there too).
 */
export function lowdbStore(o: LowdbStoreOptions, takeLock: boolean): SnapshotStore {
  if (typeof o !== "object" || o === null) throw new TypeError("createLowdbStore: options must be an object");
  if (typeof o.stateDir !== "string" || o.stateDir === "") {
    throw new TypeError("createLowdbStore: stateDir must be a non-empty path");
  }
  const { shards, cleanupMaxAgeMs, journalMaxBytes } = o;
  const settings = { dir: o.stateDir, shards, cleanupMaxAgeMs, journalMaxBytes };
  checkOptions({ ...settings, machineVersions: {} }, "createLowdbStore");
  const name = `lowdb store in ${o.stateDir}`;
  let held: { lock: StateDirLock | undefined; store: LowdbSnapshotStore } | undefined;

  const open = (method: string): LowdbSnapshotStore => {
    if (held === undefined) throw new SnapshotStoreNotOpenError(name, method);
    return held.store;
  };

  return {
    async open(options: SnapshotStoreOpenOptions): Promise<SnapshotStoreOpenReport> {
      const lock = takeLock
        ? await acquireStateDirLock(o.stateDir, { onWarning: options.onWarning, now: options.now })
        : undefined;
      let store: LowdbSnapshotStore;
      try {
        const { now, onWarning } = options;
        store = await LowdbSnapshotStore.open({ ...settings, ...options.rules, now, onWarning });
      } catch (error) {
        await lock?.release();
        throw error;
      }
      held = { lock, store };
      return store.report();
    },
    async get(id: string): Promise<ActorRecord | undefined> {
      return open("get").get(id);
    },
    async put(records: readonly ActorRecord[]): Promise<void> {
      return open("put").putAll(records);
    },
    async list(which: "live" | "archive"): Promise<Array<Readonly<ActorRecord>>> {
      const store = open("list");
      checkListKind(name, which);
      if (which === "archive") return store.archived();
      // The store's own records, not copies: copying 10,000 of them took ~300 ms of a start.
      const records: Array<Readonly<ActorRecord>> = [];
      store.forEachLive((record) => records.push(record));
      return records;
    },
    kept(id: string): Readonly<ActorRecord> | undefined {
      return open("kept").liveRecord(id);
    },
    async prune(olderThan: number): Promise<number> {
      const store = open("prune");
      checkCutoff(name, olderThan);
      return store.pruneBefore(olderThan);
    },
    async close(): Promise<void> {
      if (held === undefined) return;
      const { lock, store } = held;
      held = undefined;
      try {
        await store.close();
      } finally {
        await lock?.release();
      }
    },
  };
}
