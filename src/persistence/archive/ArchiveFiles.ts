import { readFileSync } from "node:fs";
import { readFile, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { A2AError } from "../../errors/A2AError.js";
import {
  type ActorRecord,
  type ActorRecordRules,
  checkActorRecord,
  idOf,
  leadingId,
  newerRecord,
} from "../actorRecord.js";
import { errorCode, errorText, syncDirectory, writeFileDurably } from "../DurableJsonFile.js";
import { parseRecordLine, recordLinePieces } from "../recordLine.js";
import { DurableAppender } from "./DurableAppender.js";
import {
  ARCHIVE_HOUR_FILE,
  ARCHIVE_IDS_FILE,
  HOUR_MS,
  hourEnd,
  hourOf,
  hourStart,
  idsFileName,
  recordsFileName,
  wholeLines,
} from "./archiveFormat.js";
import { HASH_BYTES, HashIndex, HashSet53, decodeHashes, encodeHashes, idHash } from "./idHashes.js";

export interface ArchiveFilesOptions {
  /** The `archive/` folder (it exists). */
  dir: string;
  /** How a stored record is checked and migrated as it is read. */
  rules: ActorRecordRules;
  onWrite: (bytes: number) => void;
  warn: (message: string) => void;
}

/** An archive file could not be written; what was being appended is still where it came from. */
export class ArchiveWriteError extends A2AError {
  override readonly code = "ARCHIVE_WRITE_FAILED";
  override readonly name = "ArchiveWriteError";
  /** What the file system said. */
  declare readonly cause: unknown;

  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`could not append to ${file}: ${errorText(cause)}`, { cause });
  }
}

interface Hour {
  hour: string;
  records: string;
  ids: string;
  hashes: HashSet53;
}

/**
 * The finished records, on disk only: appended to the file of their UTC hour, read back when asked
 * for, pruned by whole hours (one hour rewritten). Memory holds 16 bytes per record: its id's hash, in
 * its hour's set and in the index of every hour.
 * Reads check each record as open() does (migrating); an unusable line is reported once and kept. A
 * record appended twice reads once, its newest copy winning. Appends and prunes run one at a time.
 */
export class ArchiveFiles {
  private readonly hours = new Map<string, Hour>();
  private readonly appender: DurableAppender;
  /** Appends and prunes, one after another. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Lines already reported as unusable: each is told once. */
  private readonly reported = new Set<string>();
  /**
   * Every hour's hashes, so that an id no hour holds is told in one lookup: a spawn asks for each new
   * id, and a month of hours is 720 to visit. Made when first asked, and again once stale.
   */
  private index: HashIndex | undefined;

  private constructor(private readonly o: ArchiveFilesOptions) {
    this.appender = new DurableAppender(o.onWrite);
  }

  /** Lists the hours and reads their id hashes (rebuilding a missing or unusable `.ids` file). */
  static async open(o: ArchiveFilesOptions): Promise<ArchiveFiles> {
    const archive = new ArchiveFiles(o);
    const names = new Set(await readdir(o.dir));
    const entries: Hour[] = [];
    for (const name of names) {
      const hour = ARCHIVE_HOUR_FILE.exec(name)?.[1];
      if (hour === undefined) continue;
      const entry = archive.newHour(hour);
      archive.hours.set(hour, entry);
      entries.push(entry);
    }
    // Read synchronously: a month is 720 files of a few KB, and open() has nothing else to do meanwhile.
    // Each read through the thread pool costs four round trips (open, stat, read, close): 60-80 ms for
    // a month against 10-20 ms read in turn here.
    const unread: Hour[] = [];
    for (const entry of entries) {
      const hashes = names.has(idsFileName(entry.hour)) ? readHashes(entry.ids) : undefined;
      if (hashes !== undefined) entry.hashes = new HashSet53(hashes);
      else unread.push(entry);
    }
    for (const entry of unread)
      await archive.writeHashes(entry, [...(await archive.readHour(entry)).keys()].map(idHash));
    // An `.ids` file without its records: a crash between the two appends of a new hour.
    for (const name of names) {
      const hour = ARCHIVE_IDS_FILE.exec(name)?.[1];
      if (hour !== undefined && !archive.hours.has(hour)) await rm(join(o.dir, name), { force: true });
    }
    return archive;
  }

  /** Records held, a record appended twice counted twice. */
  count(): number {
    let count = 0;
    for (const hour of this.hours.values()) count += hour.hashes.size;
    return count;
  }

  /** The newest archived copy of a record, read from the hours that may hold it. */
  async get(id: string): Promise<ActorRecord | undefined> {
    return (await this.getEach([id])).get(id);
  }

  /**
   * The newest archived copy of each of `ids` the archive holds: each hour that may hold one is read
   * once. With `after`, only the hours ending after `after(id)` are looked at for an id: a caller that
   * wants only copies updated at or after a time skips the rest of a month of hours.
   */
  async getEach(
    ids: Iterable<string>,
    after: (id: string) => number = () => Number.NEGATIVE_INFINITY,
  ): Promise<Map<string, ActorRecord>> {
    const hashed = [...new Set(ids)]
      .map((id) => ({ id, hash: idHash(id), after: after(id) }))
      .filter(({ hash }) => this.mayHold(hash));
    const found = new Map<string, ActorRecord>();
    if (hashed.length === 0) return found;
    const earliest = hashed.reduce((least, h) => Math.min(least, h.after), Number.POSITIVE_INFINITY);
    for (const hour of [...this.hours.values()]) {
      const end = hourEnd(hour.hour);
      if (end <= earliest) continue;
      const wanted = new Set(
        hashed.filter((h) => !(end <= h.after) && hour.hashes.has(h.hash)).map((h) => h.id),
      );
      if (wanted.size === 0) continue;
      for (const [id, record] of await this.readHour(hour, wanted)) {
        const held = found.get(id);
        if (held === undefined || newerRecord(record, held)) found.set(id, record);
      }
    }
    return found;
  }

  /** False when no hour holds the hash; true when one may. */
  private mayHold(hash: number): boolean {
    if (this.index === undefined || this.index.stale)
      this.index = HashIndex.of([...this.hours.values()].map((hour) => hour.hashes));
    return this.index.has(hash);
  }

  /** Every archived record, newest hour first, one copy per id (the latest hour's), but `skip`'s; an hour at a time. */
  async *records(skip: (id: string) => boolean = () => false): AsyncGenerator<ActorRecord> {
    const given = new Set<string>();
    const hours = [...this.hours.values()].sort((a, b) => (a.hour < b.hour ? 1 : -1));
    for (const hour of hours) {
      for (const [id, record] of await this.readHour(hour)) {
        if (given.has(id) || skip(id)) continue;
        given.add(id);
        yield record;
      }
    }
  }

  /** Appends finished records to their hours' files, durably; resolves once all are on disk. */
  append(records: readonly ActorRecord[]): Promise<void> {
    return this.serial(async () => {
      // By the hour's number: a date formatted for each record took 63-76 ms of a fold of 36,000.
      const byHour = new Map<number, ActorRecord[]>();
      for (const record of records) {
        const hour = Math.floor(record.updatedAt / HOUR_MS);
        const batch = byHour.get(hour);
        if (batch === undefined) byHour.set(hour, [record]);
        else batch.push(record);
      }
      for (const [number, batch] of byHour) {
        const name = hourOf(number * HOUR_MS);
        const hour = this.hours.get(name) ?? this.newHour(name);
        const hashes = batch.map((record) => idHash(record.id));
        // Hashes first: a hash without its record costs a read, a record without its hash is lost to get().
        let file = hour.ids;
        try {
          await this.appender.append(hour.ids, [encodeHashes(hashes)], HASH_BYTES);
          file = hour.records;
          await this.appender.append(hour.records, recordLinePieces(batch), "line");
        } catch (cause) {
          throw new ArchiveWriteError(file, cause);
        }
        hour.hashes.add(hashes);
        this.index?.add(hashes);
        this.hours.set(name, hour);
      }
    });
  }

  /** Drops the records updated before `cutoff` (deleting whole hours, rewriting the one it falls in); resolves how many. */
  pruneBefore(cutoff: number): Promise<number> {
    return this.serial(async () => {
      let dropped = 0;
      let deleted = false;
      for (const hour of [...this.hours.values()]) {
        if (hourEnd(hour.hour) <= cutoff) {
          dropped += hour.hashes.distinct();
          await this.remove(hour);
          deleted = true;
        } else if (hourStart(hour.hour) < cutoff) {
          dropped += await this.cut(hour, cutoff);
        }
      }
      if (deleted) await syncDirectory(this.o.dir);
      return dropped;
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private newHour(hour: string): Hour {
    return {
      hour,
      records: join(this.o.dir, recordsFileName(hour)),
      ids: join(this.o.dir, idsFileName(hour)),
      hashes: new HashSet53(),
    };
  }

  /** An hour's usable records, newest copy per id (only `only`'s ids, when given). */
  private async readHour(hour: Hour, only?: ReadonlySet<string>): Promise<Map<string, ActorRecord>> {
    const out = new Map<string, ActorRecord>();
    for (const { line, lineNo } of await hourLines(hour.records)) {
      // A line of another id is skipped unread: checking a record costs a parse and a validation.
      const id = leadingId(line);
      if (only !== undefined && id !== undefined && !only.has(id)) continue;
      const record = this.check(hour, lineNo, line);
      if (record === undefined || (only !== undefined && !only.has(record.id))) continue;
      const held = out.get(record.id);
      if (held === undefined || !newerRecord(held, record)) out.set(record.id, record);
    }
    return out;
  }

  private check(hour: Hour, lineNo: number, line: Buffer): ActorRecord | undefined {
    let problem: string;
    try {
      const value = parseRecordLine(line);
      const checked = checkActorRecord(idOf(value) ?? "", value, this.o.rules, true);
      if (checked.ok) return checked.record;
      problem = checked.problem;
    } catch (error) {
      problem = `not JSON (${errorText(error)})`;
    }
    const where = `${hour.records}:${lineNo}`;
    if (!this.reported.has(where)) {
      this.reported.add(where);
      this.o.warn(
        `snapshot store: archived record at ${where} cannot be used and is skipped (kept in the file): ${problem}`,
      );
    }
    return undefined;
  }

  /** Rewrites an hour without its records updated before `cutoff` (keeping unreadable lines); returns how many went. */
  private async cut(hour: Hour, cutoff: number): Promise<number> {
    const dropped = new Set<string>();
    const keptLines: Buffer[] = [];
    const keptHashes: number[] = [];
    for (const { line, lineNo } of await hourLines(hour.records)) {
      const record = this.check(hour, lineNo, line);
      if (record !== undefined && record.updatedAt < cutoff) {
        dropped.add(record.id);
        continue;
      }
      keptLines.push(line);
      if (record !== undefined) keptHashes.push(idHash(record.id));
    }
    if (dropped.size === 0) return 0;
    if (keptLines.length === 0) {
      await this.remove(hour);
      await syncDirectory(this.o.dir);
      return dropped.size;
    }
    // Records before hashes: a crash between leaves hashes of records gone, which only cost a read.
    const lines = keptLines.flatMap((line) => [line, NEWLINE]);
    this.o.onWrite(await writeFileDurably(hour.records, [Buffer.concat(lines)]));
    await this.writeHashes(hour, keptHashes);
    return dropped.size;
  }

  private async remove(hour: Hour): Promise<void> {
    // Records first: an `.ids` file left alone is removed at the next open.
    await rm(hour.records, { force: true });
    await rm(hour.ids, { force: true });
    this.hours.delete(hour.hour);
    this.index = undefined;
  }

  private async writeHashes(hour: Hour, hashes: number[]): Promise<void> {
    this.o.onWrite(await writeFileDurably(hour.ids, [encodeHashes(hashes)]));
    hour.hashes = new HashSet53(Float64Array.from(hashes));
    this.index = undefined;
  }
}

/** An `.ids` file's hashes; undefined when it cannot be read or decoded (it is rebuilt from its records). */
function readHashes(file: string): Float64Array | undefined {
  try {
    return decodeHashes(readFileSync(file));
  } catch {
    return undefined;
  }
}

/** An hour file's complete lines; a missing file (pruned meanwhile) has none. */
export async function hourLines(file: string): Promise<Array<{ line: Buffer; lineNo: number }>> {
  try {
    return wholeLines(await readFile(file));
  } catch (error) {
    if (errorCode(error) === "ENOENT") return [];
    throw error;
  }
}

const NEWLINE = Buffer.from("\n");
