import { readFile, readdir, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import {
  CorruptStateFileError,
  DurableJsonFile,
  StateFileReadError,
  errorCode,
  errorText,
} from "./DurableJsonFile.js";
import {
  type ActorRecord,
  ActorRecordSchema,
  newerRecord,
  parseRawDoc,
  type RawStoreDoc,
} from "./actorRecord.js";
import { A2AError } from "../errors/A2AError.js";
import { wholeLines } from "./archive/archiveFormat.js";
import { DAMAGED_JOURNAL_FILE } from "./journal/keepDamagedJournal.js";
import { journalSegments, readJournalSegment } from "./journal/segmentFormat.js";
import { ARCHIVE_HOUR_FILE, SHARD_FILE } from "./LowdbSnapshotStore.js";
import { isProcessAlive, readLockFile } from "./StateDirLock.js";
import { listQuarantined, type QuarantinedFile } from "./listQuarantined.js";

/** Who holds the state directory's `.lock`, as the file says (acquireStateDirLock's format). */
export type StateDirLockInfo =
  | { kind: "none"; lockFile: string }
  | { kind: "held"; lockFile: string; pid: number; startedAt?: number; alive: boolean }
  | { kind: "unreadable"; lockFile: string; problem: string };

/** One persisted actor and where it was read. */
export interface StoredActor {
  record: ActorRecord;
  /** The file it was read from (absolute): a shard, an archive hour, or a journal segment not yet folded in. */
  file: string;
  /** `actors/` (live shards) or `archive/` (finished records, until pruned). */
  location: "live" | "archive";
  /** Set when the record is valid but the runtime would not load it as is (unknown machine, other version). */
  problem?: string;
}

/** A file or record that could not be read; `id` is set for a record. Nothing is moved or changed. */
export interface StateDirProblem {
  file: string;
  id?: string;
  problem: string;
}

export interface StateDirReading {
  /** The state directory, absolute. */
  dir: string;
  lock: StateDirLockInfo;
  /** Every readable record, one per id (of two copies a crash left, the one LowdbSnapshotStore would keep). */
  actors: StoredActor[];
  problems: StateDirProblem[];
  /** Files set aside earlier (`*.corrupt-<time>` anywhere, everything in `quarantine/`), oldest first. */
  quarantined: QuarantinedFile[];
}

export interface ReadStateDirOptions {
  /** The current version of each machine (the runtime's MACHINE_VERSIONS): other records are flagged. */
  machineVersions?: Record<string, number>;
}

/** The state directory does not exist or is not a directory. */
export class StateDirNotFoundError extends A2AError {
  override readonly code = "STATE_DIR_NOT_FOUND";
  override readonly name = "StateDirNotFoundError";

  constructor(
    readonly dir: string,
    readonly reason: string,
  ) {
    super(`state directory ${dir} ${reason}`);
  }
}

/**
 * Reads a state directory's persisted actors without touching it: no lock is taken, nothing is
 * written, moved, quarantined or deleted (not even a dead writer's temp file), so it is safe next to
 * a running runtime. Every shard is replaced atomically (DurableJsonFile), so each read sees a whole
 * file, and the archive's hourly files are appended to (a last line without its newline is an append
 * in progress, skipped); live shards are read before the archive, so a record moving to the archive
 * meanwhile is seen at least once. The journal segments (`actors/journal-<n>.ndjson`) are read first and replayed over
 * the files as LowdbSnapshotStore.open does (the last line per id, unless a file holds a newer copy), so
 * the latest acknowledged records show; a segment that a compaction removed meanwhile was folded into
 * the files read after it. A torn last line (an append in progress) is skipped. A file or record
 * that cannot be used is reported in `problems` and the rest is read.
 * Throws StateDirNotFoundError when `dir` is missing or not a directory.
 */
export async function readStateDir(dir: string, options: ReadStateDirOptions = {}): Promise<StateDirReading> {
  const root = resolve(dir);
  try {
    if (!(await stat(root)).isDirectory()) throw new StateDirNotFoundError(root, "is not a directory");
  } catch (error) {
    if (error instanceof StateDirNotFoundError) throw error;
    const code = errorCode(error);
    if (code === "ENOENT") throw new StateDirNotFoundError(root, "does not exist");
    if (code === "ENOTDIR") throw new StateDirNotFoundError(root, "is not a directory");
    throw error;
  }

  const problems: StateDirProblem[] = [];
  const copies = new Map<string, StoredActor[]>();
  const journal = await readJournal(join(root, "actors"), options, problems);

  for (const location of ["live", "archive"] as const) {
    const folder = join(root, location === "live" ? "actors" : "archive");
    for (const name of await listFolder(folder, problems)) {
      const file = join(folder, name);
      let entries: Array<[string, unknown]>;
      if (location === "archive" && ARCHIVE_HOUR_FILE.test(name)) entries = await readLines(file, problems);
      else if (location === "live" && SHARD_FILE.test(name))
        entries = Object.entries((await readRecords(file, problems)) ?? {});
      else continue;
      for (const [key, value] of entries) {
        const actor = checkRecord(key, value, file, location, options, problems);
        if (actor === undefined) continue;
        const held = copies.get(key);
        if (held === undefined) copies.set(key, [actor]);
        else held.push(actor);
      }
    }
  }
  const { files: quarantined, problems: unlisted } = await listQuarantined(root);
  problems.push(...unlisted);
  for (const { file } of quarantined) {
    if (DAMAGED_JOURNAL_FILE.test(basename(file)))
      problems.push({
        file,
        problem: "a damaged journal segment was kept here: acknowledged records may have been lost",
      });
  }

  const fromFiles = new Map(
    [...copies].map(([id, candidates]) => [
      id,
      candidates.reduce((best, c) => (newerRecord(c.record, best.record) ? c : best)),
    ]),
  );
  for (const [id, entry] of journal) {
    const current = fromFiles.get(id);
    // LowdbSnapshotStore.open's rule: the journal's copy, unless a file holds a newer (or the same) one.
    if (
      current !== undefined &&
      (newerRecord(current.record, entry.record) || sameData(current.record, entry.record))
    )
      continue;
    fromFiles.set(id, entry);
  }
  const actors = [...fromFiles.values()];
  return { dir: root, lock: await readLockInfo(join(root, ".lock")), actors, problems, quarantined };
}

/** The journal segments, in order: the last readable record per id (checked as the files' are). */
async function readJournal(
  folder: string,
  options: ReadStateDirOptions,
  problems: StateDirProblem[],
): Promise<Map<string, StoredActor>> {
  const latest = new Map<string, StoredActor>();
  for (const { name } of journalSegments(await listFolder(folder, []))) {
    const file = join(folder, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      // Removed by a compaction since the listing: its records are in the files, read after this.
      if (errorCode(error) !== "ENOENT") problems.push({ file, problem: errorText(error) });
      continue;
    }
    const parsed = readJournalSegment(bytes);
    if (parsed.damage !== undefined) {
      // LowdbSnapshotStore loads what can be read and keeps a copy in quarantine/ at its next open.
      problems.push({ file, problem: `${parsed.damage.kind} journal: ${parsed.damage.problem}` });
    }
    for (const value of parsed.values) {
      const key = isRecordLike(value) && typeof value.id === "string" ? value.id : "";
      const record = ActorRecordSchema.safeParse(value);
      const location = record.success && record.data.status !== "active" ? "archive" : "live";
      const actor = checkRecord(key, value, file, location, options, problems);
      if (actor === undefined) continue;
      latest.delete(key);
      latest.set(key, actor);
    }
  }
  return latest;
}

function isRecordLike(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameData(a: ActorRecord, b: ActorRecord): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A folder's entries, sorted; a missing folder has none (nothing was persisted there yet). */
async function listFolder(folder: string, problems: StateDirProblem[]): Promise<string[]> {
  try {
    return (await readdir(folder)).sort();
  } catch (error) {
    if (errorCode(error) !== "ENOENT") problems.push({ file: folder, problem: errorText(error) });
    return [];
  }
}

/** A file's records; undefined when it vanished meanwhile (a writer moved it) or cannot be used. */
async function readRecords(
  file: string,
  problems: StateDirProblem[],
): Promise<Record<string, unknown> | undefined> {
  try {
    const doc = await new DurableJsonFile<RawStoreDoc>(file, { parse: parseRawDoc }).read();
    return doc?.records;
  } catch (error) {
    if (error instanceof CorruptStateFileError) problems.push({ file, problem: error.reason });
    else if (error instanceof StateFileReadError) problems.push({ file, problem: errorText(error.cause) });
    else problems.push({ file, problem: errorText(error) });
    return undefined;
  }
}

/** An archive hour's lines as [id, record]; a line that is not JSON is reported, a torn last line skipped. */
async function readLines(file: string, problems: StateDirProblem[]): Promise<Array<[string, unknown]>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    // Pruned since the listing: nothing of it is current.
    if (errorCode(error) !== "ENOENT") problems.push({ file, problem: errorText(error) });
    return [];
  }
  const out: Array<[string, unknown]> = [];
  for (const { line, lineNo } of wholeLines(text)) {
    try {
      const value: unknown = JSON.parse(line);
      out.push([isRecordLike(value) && typeof value.id === "string" ? value.id : "", value]);
    } catch (error) {
      problems.push({ file, problem: `line ${lineNo} is not JSON: ${errorText(error)}` });
    }
  }
  return out;
}

/** The checks LowdbSnapshotStore makes at open, reported instead of quarantined. */
function checkRecord(
  key: string,
  value: unknown,
  file: string,
  location: StoredActor["location"],
  options: ReadStateDirOptions,
  problems: StateDirProblem[],
): StoredActor | undefined {
  const parsed = ActorRecordSchema.safeParse(value);
  if (!parsed.success) {
    const problem = parsed.error.issues
      .map((i) => `${i.path.map(String).join(".") || "(record)"}: ${i.message}`)
      .join("; ");
    problems.push({ file, id: key, problem });
    return undefined;
  }
  const record: ActorRecord = parsed.data;
  if (record.id !== key) {
    problems.push({ file, id: key, problem: `its id ${JSON.stringify(record.id)} differs from its key` });
    return undefined;
  }
  const versions = options.machineVersions;
  if (versions === undefined) return { record, file, location };
  const expected = Object.hasOwn(versions, record.machineId) ? versions[record.machineId] : undefined;
  let problem: string | undefined;
  if (expected === undefined) {
    problem = `unknown machine ${JSON.stringify(record.machineId)}: the runtime quarantines it at its next start`;
  } else if (expected !== record.machineVersion) {
    problem =
      `machine ${JSON.stringify(record.machineId)} is at version ${expected}, the snapshot is version ` +
      `${record.machineVersion}: the runtime migrates or quarantines it at its next start`;
  }
  if (problem === undefined) return { record, file, location };
  problems.push({ file, id: key, problem });
  return { record, file, location, problem };
}

/** The lock file as acquireStateDirLock writes it: `{ pid, startedAt, token }`. */
async function readLockInfo(lockFile: string): Promise<StateDirLockInfo> {
  const lock = await readLockFile(lockFile);
  if (lock.kind === "missing") return { kind: "none", lockFile };
  if (lock.kind === "unreadable") return { kind: "unreadable", lockFile, problem: lock.problem };
  const { pid, startedAt } = lock.content;
  return { kind: "held", lockFile, pid, ...(startedAt > 0 ? { startedAt } : {}), alive: isProcessAlive(pid) };
}
