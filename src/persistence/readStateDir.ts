import { readdir, stat } from "node:fs/promises";
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
  type RecordFate,
  idOf,
  inspectRecord,
  journalCopyWins,
  newerRecord,
  type RecordTime,
} from "./actorRecord.js";
import { A2AError } from "../errors/A2AError.js";
import { hourLines } from "./archive/ArchiveFiles.js";
import { DAMAGED_JOURNAL_FILE } from "./quarantine.js";
import { replayJournal } from "./journal/replayJournal.js";
import { ARCHIVE_HOUR_FILE } from "./archive/archiveFormat.js";
import {
  DOCUMENT_SHARD_FILE,
  DOCUMENT_SHARD_PROBLEM,
  type RawShard,
  SHARD_FILE,
  readShard,
} from "./shardFormat.js";
import { parseRecordLine, plainRecord } from "./recordLine.js";
import { readLockFile, type StateDirLockInfo } from "./StateDirLock.js";
import { listQuarantined, type QuarantinedFile } from "./stateDirFiles.js";

/** One persisted actor and where it was read. */
export interface StoredActor {
  record: ActorRecord;
  /** The file it was read from (absolute): a shard, an archive hour, or a journal segment. */
  file: string;
  /** `actors/` (live shards) or `archive/` (finished records, until pruned). */
  location: "live" | "archive";
  /** Why the runtime would not load a valid record as is (unknown machine, other version). */
  problem?: string;
}

/** A file or record that could not be read; `id` is set for a record. Nothing is moved or changed. */
export interface StateDirProblem {
  file: string;
  id?: string;
  problem: string;
}

export interface StateDirReading<T = StoredActor> {
  /** The state directory, absolute. */
  dir: string;
  lock: StateDirLockInfo;
  /** Every readable record, one per id (of two copies, the one LowdbSnapshotStore would keep), as `keep` made it. */
  actors: T[];
  problems: StateDirProblem[];
  /** Files set aside earlier (`*.corrupt-<time>` anywhere, everything in `quarantine/`), oldest first. */
  quarantined: QuarantinedFile[];
}

export interface ReadStateDirOptions<T = StoredActor> {
  /** The current version of each machine (the runtime's MACHINE_VERSIONS): other records are flagged. */
  machineVersions?: Record<string, number>;
  /**
   * What is kept of each actor (by default all of it), made as its copy is read: what it leaves out is
   * not held while the rest of the directory is read. `status` keeps a row, not a million records.
   */
  keep?: (actor: StoredActor) => T;
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

const FATE: RecordFate = {
  unknown: "the runtime quarantines it at its next start",
  otherVersion: "the runtime migrates or quarantines it at its next start",
};

/**
 * Reads a state directory's persisted actors without changing anything (no lock, no clean-up), so it
 * is safe beside a running runtime; what the store would set aside is in `problems`. The journal is
 * read first (a segment a compaction removes meanwhile is in the files read after it), and live shards
 * before the archive, so a record moving meanwhile is still seen.
 * Throws StateDirNotFoundError when `dir` is missing or not a directory.
 */
export async function readStateDir<T = StoredActor>(
  dir: string,
  options: ReadStateDirOptions<T> = {},
): Promise<StateDirReading<T>> {
  const keepOf = options.keep ?? ((actor: StoredActor) => actor as T);
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
  // A file gone since the listing (a compaction, a prune) is no problem: its records are read elsewhere.
  const readable = (file: string, error: unknown): void => {
    if (errorCode(error) !== "ENOENT") problems.push({ file, problem: errorText(error) });
  };
  const inspect = (key: string, value: unknown, file: string, location?: StoredActor["location"]) => {
    const { record, problem } = inspectRecord(key, value, options.machineVersions, FATE);
    if (problem !== undefined) problems.push({ file, id: key, problem });
    if (record === undefined) return undefined;
    let plain: ActorRecord;
    try {
      plain = plainRecord(record);
    } catch (error) {
      problems.push({ file, id: key, problem: errorText(error) });
      return undefined;
    }
    const where = location ?? (plain.status === "active" ? "live" : "archive");
    return { record: plain, file, location: where, ...(problem === undefined ? {} : { problem }) };
  };

  const actorsDir = join(root, "actors");
  const { latest: journal } = await replayJournal({
    actorsDir,
    names: await listFolder(actorsDir, () => undefined),
    check: (key, value, file) => inspect(key, value, file),
    damaged: (file, _bytes, damage) => {
      problems.push({ file, problem: `${damage.kind} journal: ${damage.problem}` });
    },
    unreadable: readable,
  });

  // Of each id, the newest copy the files hold (its time) and what is kept of it, or of the journal's
  // line that replaces it. The journal is read first, so that is decided as the copy is read.
  const newest = new Map<string, RecordTime & { kept: T }>();
  const take = (actor: StoredActor | undefined): void => {
    if (actor === undefined) return;
    const { record } = actor;
    const held = newest.get(record.id);
    if (held !== undefined && !newerRecord(record, held)) return;
    const line = journal.get(record.id);
    const shown = line !== undefined && journalCopyWins(line.record, record) ? line : actor;
    newest.set(record.id, { updatedAt: record.updatedAt, status: record.status, kept: keepOf(shown) });
  };
  for (const name of await listFolder(actorsDir, readable)) {
    if (DOCUMENT_SHARD_FILE.test(name))
      problems.push({ file: join(actorsDir, name), problem: DOCUMENT_SHARD_PROBLEM });
    if (!SHARD_FILE.test(name)) continue;
    const file = join(actorsDir, name);
    for (const [key, value] of (await readLiveShard(file, problems)) ?? [])
      take(inspect(key, value, file, "live"));
  }
  const archiveDir = join(root, "archive");
  for (const name of await listFolder(archiveDir, readable)) {
    if (!ARCHIVE_HOUR_FILE.test(name)) continue;
    const file = join(archiveDir, name);
    let lines: Awaited<ReturnType<typeof hourLines>> = [];
    try {
      lines = await hourLines(file);
    } catch (error) {
      readable(file, error);
    }
    for (const { line, lineNo } of lines) {
      let value: unknown;
      try {
        value = parseRecordLine(line);
      } catch (error) {
        problems.push({ file, problem: `line ${lineNo} is not JSON: ${errorText(error)}` });
        continue;
      }
      take(inspect(idOf(value) ?? "", value, file, "archive"));
    }
  }
  const actors = [...newest.values()].map(({ kept }) => kept);
  for (const [id, line] of journal) if (!newest.has(id)) actors.push(keepOf(line));

  const { files: quarantined, problems: unlisted } = await listQuarantined(root);
  problems.push(...unlisted);
  for (const { file } of quarantined) {
    if (DAMAGED_JOURNAL_FILE.test(basename(file)))
      problems.push({
        file,
        problem: "a damaged journal segment was kept here: acknowledged records may have been lost",
      });
  }
  const lock = await readLockFile(join(root, ".lock"));
  return { dir: root, lock, actors, problems, quarantined };
}

/** A folder's entries, sorted; a missing folder has none (nothing was persisted there yet). */
async function listFolder(
  folder: string,
  unreadable: (file: string, error: unknown) => void,
): Promise<string[]> {
  try {
    return (await readdir(folder)).sort();
  } catch (error) {
    unreadable(folder, error);
    return [];
  }
}

/** A shard's records; undefined when it is gone or cannot be used. */
async function readLiveShard(
  file: string,
  problems: StateDirProblem[],
): Promise<RawShard["entries"] | undefined> {
  try {
    return (await new DurableJsonFile<RawShard>(file, { decode: readShard }).read())?.entries;
  } catch (error) {
    const problem =
      error instanceof CorruptStateFileError
        ? error.reason
        : errorText(error instanceof StateFileReadError ? error.cause : error);
    problems.push({ file, problem });
    return undefined;
  }
}
