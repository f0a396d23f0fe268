// LowdbSnapshotStore's options, report, stats and errors, and the check of its options.
import { A2AError } from "../errors/A2AError.js";
import { type MigratedRecord, isPlainObject } from "./actorRecord.js";
import { errorText } from "./DurableJsonFile.js";

export interface SnapshotStoreOptions {
  /** The state directory: `actors/`, `archive/` and `quarantine/` inside it. */
  dir: string;
  now?: () => number;
  /** Number of live shard files (default DEFAULT_SHARDS). Changing it between runs re-homes records at open. */
  shards?: number;
  /** The current version of each machine; a record of another version is migrated or quarantined at open. */
  machineVersions: Record<string, number>;
  /** Per machine: turns a snapshot of `fromVersion` into one of the current version, or returns undefined if it cannot. */
  migrations?: Record<string, (snapshot: unknown, fromVersion: number) => unknown>;
  /** Age (by updatedAt) after which prune() drops an archived record. Default one day. */
  cleanupMaxAgeMs?: number;
  /**
   * Journal bytes past which it is folded into the files, or the live shards' size when larger (a fold
   * rewrites them). Default 8 MiB.
   */
  journalMaxBytes?: number;
  /**
   * At open: a problem text when a (migrated) snapshot cannot be restored; that record is quarantined.
   * It is given the snapshot's outline (no `context` anywhere): judge the state, not the context.
   */
  validateSnapshot?: (machineId: string, snapshot: unknown) => string | undefined;
  onWarning?: (message: string) => void;
}

/** What open() found that was not plain loading. */
export interface SnapshotStoreOpenReport {
  quarantinedFiles: Array<{ file: string; movedTo: string; problem: string }>;
  quarantinedRecords: Array<{ id: string; file: string; problem: string }>;
  /** Where the quarantined records were kept, when there were any. */
  recordQuarantineFile?: string;
  migrated: MigratedRecord[];
  /** Journal segments that lost acknowledged records; their readable records loaded, a copy `keptAt`. */
  damagedJournals: Array<{
    file: string;
    keptAt: string;
    kind: "truncated" | "corrupt";
    problem: string;
    /** Lines that could not be read, when known. */
    linesLost?: number;
  }>;
}

export function emptyOpenReport(): SnapshotStoreOpenReport {
  return { quarantinedFiles: [], quarantinedRecords: [], migrated: [], damagedJournals: [] };
}

export interface SnapshotStoreStats {
  shards: number;
  liveRecords: number;
  archivedRecords: number;
  /** Every byte this store has written (journal appends, shards, archives, quarantine files), for benchmarks. */
  bytesWritten: number;
  /** Number of writes: journal appends plus whole files written by compaction. */
  writes: number;
  /** Journal appends (one per batch) and the bytes they wrote. */
  journalAppends: number;
  journalBytes: number;
  /** Compactions that folded the journal into the files. */
  compactions: number;
}

/**
 * From bench/snapshotStore.bench.ts (10,000 records of ~1 KB): 32 shards write 3% of the bytes of one
 * at 0.06× its flush time; past 32 an update gains ~3 ms but a burst pays 4× the fsyncs.
 */
export const DEFAULT_SHARDS = 32;
export const DEFAULT_CLEANUP_MAX_AGE_MS = 86_400_000;
export const MAX_SHARDS = 4096;
export const DEFAULT_JOURNAL_MAX_BYTES = 8 * 1024 * 1024;

/** Writing some files failed; their records stay in memory, and a later flush() retries. */
export class SnapshotStoreWriteError extends A2AError {
  override readonly code = "SNAPSHOT_STORE_WRITE_FAILED";
  override readonly name = "SnapshotStoreWriteError";

  constructor(readonly failures: Array<{ file: string; cause: unknown }>) {
    super(
      `could not write ${failures.map((f) => `${f.file} (${errorText(f.cause)})`).join(", ")}; ` +
        "the records are kept in memory and written again at the next write",
    );
  }
}

/** A write or prune reached a store that close() had already closed: it changed nothing. */
export class SnapshotStoreClosedError extends A2AError {
  override readonly code = "SNAPSHOT_STORE_CLOSED";
  override readonly name = "SnapshotStoreClosedError";

  constructor(
    readonly dir: string,
    readonly operation: string,
  ) {
    super(`snapshot store of ${dir} is closed: ${operation} refused`);
  }
}

/** Throws a TypeError naming `caller` and the first option that is not valid. */
export function checkOptions(options: SnapshotStoreOptions, caller = "LowdbSnapshotStore.open"): void {
  const fail = (message: string): never => {
    throw new TypeError(`${caller}: ${message}`);
  };
  if (typeof options.dir !== "string" || options.dir === "") fail("dir must be a non-empty path");
  const { shards, cleanupMaxAgeMs, journalMaxBytes, machineVersions } = options;
  wholeOption(caller, "shards", shards, 0, 1, MAX_SHARDS);
  if (journalMaxBytes !== undefined && !(Number.isFinite(journalMaxBytes) && journalMaxBytes >= 0)) {
    fail(`journalMaxBytes must be a number of bytes ≥ 0, got ${String(journalMaxBytes)}`);
  }
  if (cleanupMaxAgeMs !== undefined && !(Number.isFinite(cleanupMaxAgeMs) && cleanupMaxAgeMs >= 0)) {
    fail(`cleanupMaxAgeMs must be a number of milliseconds ≥ 0, got ${String(cleanupMaxAgeMs)}`);
  }
  checkMachineVersions(machineVersions, caller);
}

/** `value`, or `fallback` when undefined; a TypeError naming `caller` and `name` unless a whole number from `min` to `max`. */
export function wholeOption(
  caller: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(
      `${caller}: ${name} must be a whole number from ${min} to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

/** Throws a TypeError naming `caller` when `machineVersions` is not an object of machine id → version ≥ 0. */
export function checkMachineVersions(machineVersions: unknown, caller: string): void {
  if (!isPlainObject(machineVersions)) {
    throw new TypeError(`${caller}: machineVersions must be an object of machine id → version`);
  }
  for (const [machineId, version] of Object.entries(machineVersions)) {
    if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
      throw new TypeError(
        `${caller}: machineVersions.${machineId} must be a whole number ≥ 0, got ${String(version)}`,
      );
    }
  }
}
