import { type ActorRecord, checkActorRecord, ownRules, recordForPut } from "./actorRecord.js";
import { emptyRecords } from "./snapshotLayout.js";
import {
  type SnapshotStoreOpenReport,
  checkMachineVersions,
  emptyOpenReport,
} from "./snapshotStoreOptions.js";
import {
  type SnapshotStore,
  type SnapshotStoreOpenOptions,
  SnapshotStoreInUseError,
  SnapshotStoreNotOpenError,
  checkCutoff,
  checkListKind,
} from "./SnapshotStorePort.js";

/** The memory store's one document: live and archived records by id, and what open() set aside. */
interface MemoryDoc {
  live: Record<string, ActorRecord>;
  archive: Record<string, ActorRecord>;
  quarantine: Array<{ id: string; problem: string; record: unknown; at: number }>;
}

const NAME = "memory store";

/**
 * A store in this process's memory, for tests and examples: it outlives a host, so a host started
 * again on it resumes its actors. The lowdb store's rules (checked puts, refused whole; archiving;
 * migration at open; one holder, else SnapshotStoreInUseError). Records are copied in and out;
 * list() hands out frozen copies and kept() the frozen record, so a caller changing one fails in tests.
 */
export function createMemoryStore(): SnapshotStore {
  // Prototype-less maps: an id like "__proto__" or "toString" is an ordinary key.
  const doc: MemoryDoc = { live: emptyRecords(), archive: emptyRecords(), quarantine: [] };
  let rules: SnapshotStoreOpenOptions["rules"] | undefined;

  const held = (method: string): SnapshotStoreOpenOptions["rules"] => {
    if (rules === undefined) throw new SnapshotStoreNotOpenError(NAME, method);
    return rules;
  };

  return {
    async open(options: SnapshotStoreOpenOptions): Promise<SnapshotStoreOpenReport> {
      // Nothing here awaits: a second open() always finds the first one done.
      if (rules !== undefined) throw new SnapshotStoreInUseError(NAME);
      checkMachineVersions(options.rules.machineVersions, `${NAME}: open`);
      const report = checkStored(doc, options);
      rules = ownRules(options.rules);
      return report;
    },
    async get(id: string): Promise<ActorRecord | undefined> {
      held("get");
      const record = doc.live[id] ?? doc.archive[id];
      return record === undefined ? undefined : structuredClone(record);
    },
    async put(records: readonly ActorRecord[]): Promise<void> {
      const current = held("put");
      // Every record checked before any is stored: a refused batch changes nothing.
      const clean = records.map((record) => recordForPut(record, current));
      for (const { record } of clean) place(doc, record);
    },
    async list(which: "live" | "archive"): Promise<Array<Readonly<ActorRecord>>> {
      held("list");
      checkListKind(NAME, which);
      return Object.values(doc[which]).map((record) => deepFreeze(structuredClone(record)));
    },
    kept(id: string): Readonly<ActorRecord> | undefined {
      held("kept");
      const record = doc.live[id];
      return record === undefined ? undefined : deepFreeze(record);
    },
    async prune(olderThan: number): Promise<number> {
      held("prune");
      checkCutoff(NAME, olderThan);
      let dropped = 0;
      for (const [id, record] of Object.entries(doc.archive)) {
        if (record.updatedAt >= olderThan) continue;
        Reflect.deleteProperty(doc.archive, id);
        dropped++;
      }
      return dropped;
    },
    async close(): Promise<void> {
      rules = undefined;
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** A live record in `live`, a finished one in `archive`, never in both. */
function place(doc: MemoryDoc, record: ActorRecord): void {
  const [to, from] = record.status === "active" ? [doc.live, doc.archive] : [doc.archive, doc.live];
  Reflect.deleteProperty(from, record.id);
  to[record.id] = record;
}

/** The open-time check of every stored record: migrated to the current version, or set aside and reported. */
function checkStored(doc: MemoryDoc, options: SnapshotStoreOpenOptions): SnapshotStoreOpenReport {
  const report = emptyOpenReport();
  for (const which of ["live", "archive"] as const) {
    for (const [id, value] of Object.entries(doc[which])) {
      // A copy: a migration may change the snapshot it is given, and a record kept() handed out is frozen.
      const checked = checkActorRecord(id, structuredClone(value), options.rules, true, report.migrated);
      if (!checked.ok) {
        Reflect.deleteProperty(doc[which], id);
        doc.quarantine.push({ id, problem: checked.problem, record: value, at: options.now() });
        report.quarantinedRecords.push({ id, file: `${NAME} (${which})`, problem: checked.problem });
        options.onWarning(`${NAME}: record ${JSON.stringify(id)} was set aside: ${checked.problem}`);
        continue;
      }
      doc[which][id] = checked.record;
    }
  }
  return report;
}
