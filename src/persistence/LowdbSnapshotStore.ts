import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { type ActorRecord, describeId, lineForPut, ownRules, type RecordForPut } from "./actorRecord.js";
import { ArchiveFiles } from "./archive/ArchiveFiles.js";
import { foldIntoFiles } from "./foldIntoFiles.js";
import { OneAtATime, StoreJournal } from "./journal/StoreJournal.js";
import { readStoreFiles } from "./readStoreFiles.js";
import { plainRecord, recordLine } from "./recordLine.js";
import { SetAside } from "./setAside.js";
import { SnapshotFiles } from "./SnapshotFile.js";
import { SnapshotLayout } from "./snapshotLayout.js";
import {
  DEFAULT_CLEANUP_MAX_AGE_MS,
  DEFAULT_JOURNAL_MAX_BYTES,
  DEFAULT_SHARDS,
  type SnapshotStoreOpenReport,
  type SnapshotStoreOptions,
  emptyOpenReport,
  type SnapshotStoreStats,
  SnapshotStoreClosedError,
  checkOptions,
} from "./snapshotStoreOptions.js";
import { StateDirNotWritableError } from "./StateDirLock.js";
import { removeLeftoverTempFiles } from "./stateDirFiles.js";

export { shardOf } from "./snapshotLayout.js";
export { SHARD_FILE } from "./shardFormat.js";
export { ARCHIVE_HOUR_FILE } from "./archive/archiveFormat.js";

/**
 * Actor snapshots on lowdb, sharded so a write rewrites one file's worth of actors, not all.
 *
 * - Live records are in memory and in `actors/shard-<nn>.json` (shard = FNV-1a(id) mod shards).
 *   Finished ones are appended to the archive, one file per UTC hour of updatedAt, and read back
 *   from there (archived(), get()); prune() drops them.
 * - put() changes memory now; every put of a tick joins one batch, appended as JSON lines to the
 *   journal segment `actors/journal-<n>.ndjson` and fdatasynced before its puts resolve. A batch is
 *   whole on disk or not acknowledged (journal/JournalSegmentWriter.ts, journal/segmentFormat.ts).
 * - Compaction, off the hot path, seals the segment, folds it into the archive and the dirty shards
 *   (each written whole and durably), and only then deletes the sealed segments. open() reads the
 *   shards and replays the segments over them; replaying a line already folded in changes nothing.
 * - A record that moves (finished, or a changed shard count) stays in its old file until its new
 *   home is durable: a crash leaves a duplicate, never a loss.
 * - A record read at open whose snapshot is large keeps it in the file it was read from, open until
 *   close() (SnapshotFile): read when wanted, not held in memory.
 * - The caller holds the state-directory lock: the store is the only writer.
 */
export class LowdbSnapshotStore {
  private readonly layout: SnapshotLayout;
  private readonly journal: StoreJournal;
  private readonly compactions = new OneAtATime(() => this.runCompaction());
  private closed = false;
  private bytesWritten = 0;
  private writes = 0;
  private compacted = 0;
  private readonly openReport = emptyOpenReport();
  private readonly setAside: SetAside;
  private readonly options: SnapshotStoreOptions;
  private readonly now: () => number;
  private readonly warn: (message: string) => void;
  private readonly actorsDir: string;
  private readonly archiveDir: string;
  /** The JSON text of records put and not yet journaled: a record is stringified once. Keyed by the record, so it always matches it. */
  private readonly unjournaled = new WeakMap<ActorRecord, string>();
  /** Set by open(), before anything else runs. */
  private archive!: ArchiveFiles;
  /** The files open() read that records keep their snapshots in. */
  private readonly files = new SnapshotFiles();

  private constructor(options: SnapshotStoreOptions) {
    this.options = ownRules(options);
    this.now = options.now ?? Date.now;
    this.warn = options.onWarning ?? ((message) => console.warn(message));
    this.actorsDir = join(options.dir, "actors");
    this.archiveDir = join(options.dir, "archive");
    this.setAside = new SetAside({
      dir: options.dir,
      now: this.now,
      warn: this.warn,
      report: this.openReport,
    });
    this.layout = new SnapshotLayout(this.actorsDir, options.shards ?? DEFAULT_SHARDS, (bytes) =>
      this.countWrite(bytes),
    );
    this.journal = new StoreJournal({
      actorsDir: this.actorsDir,
      lineOf: (id) => this.lineOf(id),
      onWrite: (bytes) => this.countWrite(bytes),
      warn: this.warn,
      appended: (segmentBytes, mustFold) => this.appended(segmentBytes, mustFold),
    });
  }

  /**
   * Opens (creating if needed) the store in `dir`. What cannot be used is set aside, reported through
   * onWarning and report(), and the rest loads; that clean-up is on disk before it resolves. A journal
   * left by a crash is folded into the files after it resolves.
   */
  static async open(options: SnapshotStoreOptions): Promise<LowdbSnapshotStore> {
    checkOptions(options);
    const store = new LowdbSnapshotStore(options);
    try {
      for (const dir of [store.actorsDir, store.archiveDir])
        await mkdir(dir, { recursive: true, mode: 0o700 });
      store.archive = await ArchiveFiles.open({
        dir: store.archiveDir,
        rules: store.options,
        onWrite: (bytes) => store.countWrite(bytes),
        warn: store.warn,
      });
    } catch (error) {
      throw new StateDirNotWritableError(options.dir, error);
    }
    // The caller holds the state dir's lock: a temp file here is a killed writer's, never renamed into place.
    for (const dir of [store.actorsDir, store.archiveDir]) await removeLeftoverTempFiles(dir);
    const names = (await readdir(store.actorsDir)).sort();
    store.journal.startAfter(names);
    try {
      store.journal.resume(
        await readStoreFiles(names, {
          actorsDir: store.actorsDir,
          layout: store.layout,
          archive: store.archive,
          setAside: store.setAside,
          rules: store.options,
          migrated: store.openReport.migrated,
          warn: store.warn,
          countWrite: (bytes) => store.countWrite(bytes),
          files: store.files,
        }),
      );
      const { quarantinedFiles, quarantinedRecords, migrated } = store.openReport;
      // What was set aside or migrated leaves its files before open() resolves. The rest (a journal a
      // crash left, records to re-home) is folded in off the start's path: a restart fires sooner.
      if (quarantinedFiles.length + quarantinedRecords.length + migrated.length > 0) await store.compact();
      else if (store.needsCompaction()) store.compact().catch(() => undefined);
    } catch (error) {
      await store.journal.close().catch(() => undefined);
      store.files.close();
      throw error;
    }
    return store;
  }

  /** The live records (status "active"); right after open, those read from disk. Copies. */
  load(): ActorRecord[] {
    const out: ActorRecord[] = [];
    this.forEachLive((record) => out.push(structuredClone(record)));
    return out;
  }

  /** The finished records not yet pruned: every call reads the whole archive. Copies. */
  async archived(): Promise<ActorRecord[]> {
    const out = [...this.layout.finished.values()].map((record) => structuredClone(record));
    for await (const record of this.archive.records((id) => this.layout.held(id) !== undefined))
      out.push(plainRecord(record));
    return out;
  }

  /**
   * Calls `fn` with every live record WITHOUT copying (load() would clone each): never change them,
   * nor put() or prune() during the pass. A later put() replaces the object, never changes it.
   */
  forEachLive(fn: (record: Readonly<ActorRecord>) => void): void {
    for (const [id, file] of this.layout.home) {
      const record = file.db.data.records[id];
      if (record !== undefined) fn(record);
    }
  }

  /** The live record with this id WITHOUT copying (as forEachLive): never change it. */
  liveRecord(id: string): Readonly<ActorRecord> | undefined {
    const record = this.layout.held(id);
    return record?.status === "active" ? record : undefined;
  }

  /** A copy of the record with this id, live or archived (an archived one is read from its file). */
  async get(id: string): Promise<ActorRecord | undefined> {
    const record = this.layout.held(id);
    if (record !== undefined) return structuredClone(record);
    const archived = await this.archive.get(id);
    return archived === undefined ? undefined : plainRecord(archived);
  }

  /**
   * Stores a record: memory now, disk in the next batch, whose promise it returns. An invalid record
   * (or one of another machine version) rejects with InvalidActorRecordError and changes nothing. A
   * failed write rejects too (never unhandled): the record stays in memory and flush() retries.
   */
  put(record: ActorRecord): Promise<void> {
    return this.putAll([record]);
  }

  /** Stores several records as one batch, as put() does one; if any is refused, none is stored. */
  putAll(records: readonly ActorRecord[]): Promise<void> {
    if (this.closed) {
      const what = records.length === 1 ? describeId(records[0]) : `${records.length} records`;
      return Promise.reject(new SnapshotStoreClosedError(this.options.dir, `put of ${what}`));
    }
    let clean: RecordForPut[];
    try {
      clean = records.map((record) => lineForPut(record, this.options));
    } catch (error) {
      return Promise.reject(error);
    }
    // Not async: the puts of a tick resolve with their batch's one promise.
    if (clean.length === 0) return Promise.resolve();
    for (const { record, text } of clean) {
      this.layout.place(record);
      this.unjournaled.set(record, text);
    }
    return this.journal.add(clean.map(({ record }) => record.id));
  }

  /** The journal line of an id's current record: the text its put made, or made now; undefined when it is gone. */
  private lineOf(id: string): string | undefined {
    const record = this.layout.held(id);
    if (record === undefined) return undefined;
    const text = this.unjournaled.get(record);
    this.unjournaled.delete(record);
    return text ?? recordLine(record);
  }

  /** Resolves once every earlier put is durable in the journal; rejects with SnapshotStoreWriteError. */
  async flush(): Promise<void> {
    await this.journal.flush();
  }

  /**
   * Folds everything put so far into the archive and shard files, then deletes the journal segments
   * they now hold. On failure rejects with SnapshotStoreWriteError and keeps the journal (nothing lost).
   */
  async compact(): Promise<void> {
    await this.flush();
    // Round 1 writes the dirty files; round 2 removes the old copies of records that round 1 moved.
    for (let round = 0; round < 2; round++) {
      if (!this.needsCompaction() && this.journal.segment.writer.size === 0) break;
      await this.compactions.request();
    }
  }

  /** Resolves once no append or compaction is queued or running; starts none itself. */
  async idle(): Promise<void> {
    await this.journal.idle();
    for (let run; (run = this.compactions.pending) !== undefined;) await run.catch(() => undefined);
  }

  private needsCompaction(): boolean {
    const { layout } = this;
    return layout.dirty.size > 0 || layout.finished.size > 0 || this.journal.sealed.length > 0;
  }

  /** Drops archived records updated more than cleanupMaxAgeMs before `now`; resolves how many, once on disk. */
  prune(now: number = this.now()): Promise<number> {
    return this.pruneBefore(now - (this.options.cleanupMaxAgeMs ?? DEFAULT_CLEANUP_MAX_AGE_MS));
  }

  /** As prune(), for the archived records last updated before `cutoff` (ms since the epoch). */
  pruneBefore(cutoff: number): Promise<number> {
    if (this.closed) return Promise.reject(new SnapshotStoreClosedError(this.options.dir, "prune"));
    const queued = this.layout.dropFinishedBefore(cutoff);
    const done = this.archive.pruneBefore(cutoff).then(async (archived) => {
      if (queued > 0) await this.compact();
      return queued + archived;
    });
    done.catch(() => undefined); // as put(): never an unhandled rejection
    return done;
  }

  stats(): SnapshotStoreStats {
    return {
      shards: this.layout.shards,
      liveRecords: this.layout.home.size,
      archivedRecords: this.layout.finished.size + this.archive.count(),
      bytesWritten: this.bytesWritten,
      writes: this.writes,
      journalAppends: this.journal.appends,
      journalBytes: this.journal.bytes,
      compactions: this.compacted,
    };
  }

  /** What open() quarantined, migrated and found damaged. */
  report(): SnapshotStoreOpenReport {
    return structuredClone(this.openReport);
  }

  /** Flushes and folds the journal into the files, then refuses further puts. */
  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.compact();
    } finally {
      await this.journal.close().catch(() => undefined);
      this.files.close();
    }
  }

  private countWrite(bytes: number): void {
    this.bytesWritten += bytes;
    this.writes += 1;
  }

  /** After an append: fold once the journal holds journalMaxBytes, or the live shards' size when larger */
  private appended(segmentBytes: number, mustFold: boolean): void {
    const due =
      segmentBytes >=
      Math.max(this.options.journalMaxBytes ?? DEFAULT_JOURNAL_MAX_BYTES, this.layout.liveBytes());
    if (mustFold || (due && this.compactions.pending === undefined))
      this.compactions.request().catch(() => undefined);
  }

  /** Seals the journal, folds it into the files, and only then deletes the sealed segments. */
  private async runCompaction(): Promise<void> {
    // Closing, nothing more is appended: no next segment is made.
    const toDelete = await this.journal.seal(!this.closed);
    await foldIntoFiles({
      layout: this.layout,
      archive: this.archive,
      archiveDir: this.archiveDir,
      warn: this.warn,
    });
    await this.journal.remove(toDelete);
    this.compacted += 1;
  }
}
