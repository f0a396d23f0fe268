import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { type ActorRecord, describeId, recordForPut } from "./actorRecord.js";
import { ArchiveFiles } from "./archive/ArchiveFiles.js";
import { foldIntoFiles } from "./foldIntoFiles.js";
import { StoreJournal } from "./journal/StoreJournal.js";
import { loadSnapshotStore } from "./loadSnapshotStore.js";
import { SnapshotLayout } from "./snapshotLayout.js";
import {
  DEFAULT_CLEANUP_MAX_AGE_MS,
  DEFAULT_JOURNAL_MAX_BYTES,
  DEFAULT_SHARDS,
  type SnapshotStoreOpenReport,
  type SnapshotStoreOptions,
  type SnapshotStoreStats,
  SnapshotStoreClosedError,
  checkOptions,
} from "./snapshotStoreOptions.js";
import { StateDirNotWritableError } from "./StateDirLock.js";

export { SHARD_FILE, shardOf } from "./snapshotLayout.js";
export { ARCHIVE_HOUR_FILE } from "./archive/archiveFormat.js";

/**
 * Actor snapshots on lowdb, sharded so a write rewrites one file's worth of actors, not all.
 *
 * - Live records (status "active") live in `actors/shard-<nn>.json`, shard = FNV-1a(id) mod shards,
 *   and in memory. Finished ones ("done", "error") are appended to the archive, one file per UTC hour
 *   of updatedAt (`archive/archive-<yyyy-mm-dd>T<hh>.ndjson`), and are not kept in memory: get() and
 *   archived() read them back; prune() drops them after cleanupMaxAgeMs.
 * - put() is synchronous in memory; writes are coalesced: every put in the same tick joins one batch,
 *   and puts made while a batch is writing join the next one. Batches chain on promises, never on a
 *   timer, so a caller with fake timers is never stuck.
 * - A batch appends the records it changed, one JSON line each, to the journal segment
 *   `actors/journal-<n>.ndjson` and fdatasyncs it; its puts then resolve. No shard is rewritten then.
 *   A batch is durable or not acknowledged: every byte and the fdatasync must land, and a failed append
 *   is undone so the segment holds only whole batches (journal/JournalSegmentWriter.ts); the segment
 *   format lets open() tell a torn append from lost data (journal/segmentFormat.ts).
 * - Compaction folds the journal into the files off the hot path (when the segment passes
 *   journalMaxBytes or, when larger, the live shards' size, so that folding stays proportional to
 *   what was appended however many actors live; at compact(), prune() and close(), and at open): it seals the segment (appends go
 *   on in the next one), appends the finished records to the archive, writes every dirty shard whole
 *   and durably, and only then deletes the sealed segments. open() reads the shards, then replays
 *   the segments in order (the last line per id wins unless a file holds a newer copy, so replaying a
 *   line already folded in changes nothing).
 * - A record that moves (finished → archive, a changed shard count) stays in its old file until its
 *   new home is durably written, so a crash in between leaves a duplicate, never a loss: the journal
 *   that moved it is still there, and replaying it (open checks a replayed record against the archive)
 *   moves it again.
 * - The caller holds the state-directory lock (acquireStateDirLock): the store assumes it is the only writer.
 */
export class LowdbSnapshotStore {
  private readonly layout: SnapshotLayout;
  private readonly journal: StoreJournal;
  private compaction: Promise<void> | undefined;
  private queuedCompaction: Promise<void> | undefined;
  private closed = false;
  private bytesWritten = 0;
  private writes = 0;
  private compactions = 0;
  private readonly openReport: SnapshotStoreOpenReport = {
    quarantinedFiles: [],
    quarantinedRecords: [],
    migrated: [],
    damagedJournals: [],
  };
  private readonly now: () => number;
  private readonly shards: number;
  private readonly cleanupMaxAgeMs: number;
  private readonly journalMaxBytes: number;
  private readonly warn: (message: string) => void;
  private readonly actorsDir: string;
  private readonly archiveDir: string;
  /** Set by open(), before anything else runs. */
  private archive!: ArchiveFiles;

  private readonly options: SnapshotStoreOptions;

  private constructor(options: SnapshotStoreOptions) {
    // Own copies: a caller changing its objects later does not change what is valid.
    this.options = {
      ...options,
      machineVersions: { ...options.machineVersions },
      ...(options.migrations === undefined ? {} : { migrations: { ...options.migrations } }),
    };
    this.now = options.now ?? Date.now;
    this.shards = options.shards ?? DEFAULT_SHARDS;
    this.cleanupMaxAgeMs = options.cleanupMaxAgeMs ?? DEFAULT_CLEANUP_MAX_AGE_MS;
    this.journalMaxBytes = options.journalMaxBytes ?? DEFAULT_JOURNAL_MAX_BYTES;
    this.warn = options.onWarning ?? ((message) => console.warn(message));
    this.actorsDir = join(options.dir, "actors");
    this.archiveDir = join(options.dir, "archive");
    this.layout = new SnapshotLayout(this.actorsDir, this.shards, (bytes) => this.countWrite(bytes));
    this.journal = new StoreJournal({
      actorsDir: this.actorsDir,
      recordOf: (id) => this.layout.held(id),
      onWrite: (bytes) => this.countWrite(bytes),
      warn: this.warn,
      appended: (segmentBytes, mustFold) => this.appended(segmentBytes, mustFold),
    });
  }

  /**
   * Opens (creating if needed) the store in `dir` and reads every live shard and the journal (the
   * archive's records are read when asked for). A file that does not parse is quarantined to
   * `*.corrupt-<time>`; a record that fails validation, has an unknown machine or a version that no
   * migration handles, or a snapshot validateSnapshot refuses, is kept in
   * `quarantine/records-<time>.json`; a journal segment that lost acknowledged records (truncated,
   * corrupt) is copied to `quarantine/` and every record it still holds is loaded. Each is reported
   * through onWarning and report(), and the rest loads. Any clean-up this needs is flushed before
   * open() resolves.
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
    const seqs = await loadSnapshotStore({
      layout: store.layout,
      archive: store.archive,
      options: store.options,
      actorsDir: store.actorsDir,
      archiveDir: store.archiveDir,
      now: store.now,
      warn: store.warn,
      report: store.openReport,
      onWrite: (bytes) => store.countWrite(bytes),
    });
    store.journal.resume(seqs);
    // Fold what the journal held (and any clean-up) into the files before anything new is appended.
    if (store.needsCompaction()) await store.compact();
    return store;
  }

  /** The live records (status "active"); right after open, those read from disk. Copies. */
  load(): ActorRecord[] {
    return this.layout.records();
  }

  /**
   * The finished records not yet pruned, read from the archive (and those put since the last
   * compaction). Every call reads the archive's files: it costs what the archive holds.
   */
  async archived(): Promise<ActorRecord[]> {
    const out = [...this.layout.finished.values()].map((record) => structuredClone(record));
    for await (const record of this.archive.records((id) => this.layout.held(id) !== undefined))
      out.push(record);
    return out;
  }

  /**
   * Calls `fn` with every live (status "active") record, in the store's order, WITHOUT copying: the
   * records are the store's own objects. Do not mutate them or anything in them, and do not put() or
   * prune() during the pass; a caller that keeps one past the pass must not change it either (a later
   * put() replaces the store's object, it never changes it). For read-heavy passes such as the
   * runtime's start(), where load() would structuredClone every record.
   */
  forEachLive(fn: (record: Readonly<ActorRecord>) => void): void {
    for (const [id, file] of this.layout.home) {
      const record = file.db.data.records[id];
      if (record !== undefined) fn(record);
    }
  }

  /** A copy of the record with this id, live or archived (an archived one is read from its file). */
  async get(id: string): Promise<ActorRecord | undefined> {
    const record = this.layout.held(id);
    if (record !== undefined) return structuredClone(record);
    return this.archive.get(id);
  }

  /**
   * Stores a record: memory now, disk in the next coalesced batch. Returns that batch's promise.
   * A record that is not valid JSON data or fails ActorRecordSchema, or whose machine version is not the
   * current one, is refused (the promise rejects with InvalidActorRecordError and nothing changes).
   * A write failure rejects the promise too but is not an unhandled rejection if ignored: the record
   * stays in memory, flush() reports the failure and retries.
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
    let clean: ActorRecord[];
    try {
      clean = records.map((record) => recordForPut(record, this.options));
    } catch (error) {
      return Promise.reject(error);
    }
    if (clean.length === 0) return Promise.resolve();
    for (const record of clean) this.layout.place(record);
    return this.journal.add(clean.map((record) => record.id));
  }

  /**
   * Resolves when every put made before the call is durably on disk (in the journal); rejects with
   * SnapshotStoreWriteError. The shard and archive files catch up at the next compaction.
   */
  async flush(): Promise<void> {
    const pending = this.journal.flush();
    if (pending !== undefined) await pending;
  }

  /**
   * Folds everything put so far into the files (finished records appended to the archive, dirty
   * shards written whole and durably), then deletes the journal segments they now hold. Runs by itself when the journal passes
   * journalMaxBytes, and at close(); rejects with SnapshotStoreWriteError naming the files it could
   * not write (the journal is then kept, so nothing is lost, and the next compaction retries).
   */
  async compact(): Promise<void> {
    await this.flush();
    // Round 1 writes the dirty files; round 2 removes the old copies of records that round 1 moved.
    for (let round = 0; round < 2; round++) {
      if (!this.needsCompaction() && this.journal.segment.writer.size === 0) break;
      await this.startCompaction();
    }
  }

  private needsCompaction(): boolean {
    const { layout } = this;
    return layout.dirty.size > 0 || layout.finished.size > 0 || this.journal.sealed.length > 0;
  }

  /**
   * Drops archived records whose updatedAt is more than cleanupMaxAgeMs before `now`: hours wholly
   * before the cutoff are deleted, the hour it falls in is rewritten. Resolves with the number dropped
   * once that is on disk.
   */
  prune(now: number = this.now()): Promise<number> {
    return this.pruneBefore(now - this.cleanupMaxAgeMs);
  }

  /** As prune(), for the archived records last updated before `cutoff` (ms since the epoch). */
  pruneBefore(cutoff: number): Promise<number> {
    if (this.closed) return Promise.reject(new SnapshotStoreClosedError(this.options.dir, "prune"));
    const queued = this.layout.dropFinishedBefore(cutoff);
    const done = this.archive.pruneBefore(cutoff).then(async (archived) => {
      if (queued > 0) await this.compact();
      return queued + archived;
    });
    done.catch(() => undefined); // as put(): a failure surfaces through flush(), not as an unhandled rejection
    return done;
  }

  stats(): SnapshotStoreStats {
    return {
      shards: this.shards,
      liveRecords: this.layout.home.size,
      archivedRecords: this.layout.finished.size + this.archive.count(),
      bytesWritten: this.bytesWritten,
      writes: this.writes,
      journalAppends: this.journal.appends,
      journalBytes: this.journal.bytes,
      compactions: this.compactions,
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
      await this.journal.segment.writer.close().catch(() => undefined);
    }
  }

  private countWrite(bytes: number): void {
    this.bytesWritten += bytes;
    this.writes += 1;
  }

  /**
   * After a journal append: fold the journal once it holds journalMaxBytes or, when larger, as much as
   * the live shards (a fold rewrites them, so it waits for as much appended data); off the hot path.
   */
  private appended(segmentBytes: number, mustFold: boolean): void {
    const due = segmentBytes >= Math.max(this.journalMaxBytes, this.layout.liveBytes());
    if (mustFold || (due && this.compaction === undefined)) this.startCompaction().catch(() => undefined);
  }

  /** One compaction at a time; requests while one runs share one more run after it. */
  private startCompaction(): Promise<void> {
    const running = this.compaction;
    if (running !== undefined) {
      this.queuedCompaction ??= running
        .catch(() => undefined)
        .then(() => {
          this.queuedCompaction = undefined;
          return this.startCompaction();
        });
      return this.queuedCompaction;
    }
    const run: Promise<void> = this.runCompaction().finally(() => {
      if (this.compaction === run) this.compaction = undefined;
    });
    this.compaction = run;
    run.catch(() => undefined);
    return run;
  }

  /**
   * Seals the journal, folds it into the files (foldIntoFiles), and only then deletes the sealed
   * segments: a crash at any point leaves the records in the journal, the files, or both.
   */
  private async runCompaction(): Promise<void> {
    const toDelete = await this.journal.seal();
    await foldIntoFiles({
      layout: this.layout,
      archive: this.archive,
      archiveDir: this.archiveDir,
      warn: this.warn,
    });
    await this.journal.remove(toDelete);
    this.compactions += 1;
  }
}
