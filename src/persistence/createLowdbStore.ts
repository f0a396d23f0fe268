import type { ActorRecord } from "./actorRecord.js";
import { LowdbSnapshotStore } from "./LowdbSnapshotStore.js";
import { type SnapshotStoreOpenReport, checkOptions } from "./snapshotStoreOptions.js";
import {
  type SnapshotStore,
  type SnapshotStoreOpenOptions,
  SnapshotStoreNotOpenError,
  checkCutoff,
  checkListKind,
} from "./SnapshotStorePort.js";
import { type StateDirLock, acquireStateDirLock } from "./StateDirLock.js";

export interface LowdbStoreOptions {
  /** The state directory: the store keeps `actors/`, `archive/` and `quarantine/` in it, and locks `.lock`. */
  stateDir: string;
  /** Number of live shard files (default 32). Changing it between runs re-homes records at open. */
  shards?: number;
  /** The archive age prune(now) of the lowdb store itself uses; the port's prune takes its cutoff. Default one day. */
  cleanupMaxAgeMs?: number;
  /**
   * Journal size (bytes) past which the journal is folded into the shard files, or the shards' size
   * when that is larger (a fold rewrites them: it waits until as much was appended). Default 8 MiB.
   */
  journalMaxBytes?: number;
}

/**
 * The default store: actor records as JSON files in `stateDir` (shards, an fdatasynced journal, a
 * hourly archive read back when asked for, a quarantine for what cannot be read). open() takes the directory's lock first, so a
 * second holder (another process, or another store in this one) is refused with a StateDirLockedError
 * naming it. A put resolves once its batch is fdatasynced to the journal.
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
  const settings = {
    dir: o.stateDir,
    ...(o.shards === undefined ? {} : { shards: o.shards }),
    ...(o.cleanupMaxAgeMs === undefined ? {} : { cleanupMaxAgeMs: o.cleanupMaxAgeMs }),
    ...(o.journalMaxBytes === undefined ? {} : { journalMaxBytes: o.journalMaxBytes }),
  };
  checkOptions({ ...settings, machineVersions: {} }, "createLowdbStore");
  const name = `lowdb store in ${o.stateDir}`;
  let held: { lock: StateDirLock | undefined; store: LowdbSnapshotStore } | undefined;

  const open = (method: string): LowdbSnapshotStore => {
    if (held === undefined) throw new SnapshotStoreNotOpenError(name, method);
    return held.store;
  };

  return {
    async open(options: SnapshotStoreOpenOptions): Promise<SnapshotStoreOpenReport> {
      // A second open (this store or another on the directory) is refused by the lock, before anything changes.
      const lock = takeLock
        ? await acquireStateDirLock(o.stateDir, { onWarning: options.onWarning, now: options.now })
        : undefined;
      let store: LowdbSnapshotStore;
      try {
        store = await LowdbSnapshotStore.open({
          ...settings,
          now: options.now,
          machineVersions: options.rules.machineVersions,
          ...(options.rules.migrations === undefined ? {} : { migrations: options.rules.migrations }),
          ...(options.rules.validateSnapshot === undefined
            ? {}
            : { validateSnapshot: options.rules.validateSnapshot }),
          onWarning: options.onWarning,
        });
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
    put(records: readonly ActorRecord[]): Promise<void> {
      try {
        return open("put").putAll(records);
      } catch (error) {
        return Promise.reject(error);
      }
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
