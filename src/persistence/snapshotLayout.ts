import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Low } from "lowdb";
import type { ActorRecord } from "./actorRecord.js";
import { DurableJsonFile, syncDirectory } from "./DurableJsonFile.js";
import { type StoreDoc, shardChunks } from "./shardFormat.js";

/** One live shard on disk (or a retired one from another layout). */
export interface StoreFile {
  key: string;
  path: string;
  /** A shard file that is not part of the current layout (the shard count changed): deleted once empty. */
  retired: boolean;
  db: Low<StoreDoc>;
}

/** An older copy of a record left in the file it moved out of, until its new home is on disk. */
export interface StaleCopy {
  file: StoreFile;
  copy: ActorRecord;
}

/** An old copy that can go once `home`, the file with the record's current version, is written. */
export interface FreeableCopy {
  id: string;
  old: StaleCopy;
  home: StoreFile;
}

/**
 * Where each live record of a LowdbSnapshotStore lives: its shard, the older copies a move leaves until
 * the new home is written, the files changed since last written, and the finished records to archive.
 */
export class SnapshotLayout {
  readonly files = new Map<string, StoreFile>();
  /** The shard holding each live record's current version. */
  readonly home = new Map<string, StoreFile>();
  readonly stale = new Map<string, StaleCopy[]>();
  readonly dirty = new Set<StoreFile>();
  /** Finished records not yet in the archive (the next compaction appends them). */
  readonly finished = new Map<string, ActorRecord>();
  /** Each shard's size on disk as last read or written (the journal may grow to their sum before a fold). */
  readonly fileBytes = new Map<string, number>();

  constructor(
    private readonly actorsDir: string,
    readonly shards: number,
    /** Told the size of every file write, for the store's stats. */
    private readonly onWrite: (bytes: number) => void,
  ) {}

  /** The live or not yet archived record with this id (the store's own object). */
  held(id: string): ActorRecord | undefined {
    return this.home.get(id)?.db.data.records[id] ?? this.finished.get(id);
  }

  /** A live record into its shard, a finished one into the archive queue; an older copy elsewhere stays. */
  place(record: ActorRecord): void {
    const target = record.status === "active" ? this.targetFile(record) : undefined;
    const current = this.home.get(record.id);
    if (current !== undefined && current !== target) {
      const copy = current.db.data.records[record.id];
      if (copy !== undefined)
        this.stale.set(record.id, [...(this.stale.get(record.id) ?? []), { file: current, copy }]);
    }
    if (target === undefined) {
      this.home.delete(record.id);
      this.finished.set(record.id, record);
      return;
    }
    this.finished.delete(record.id);
    // A stale copy in the target itself is overwritten by this one.
    const olds = this.stale.get(record.id)?.filter((old) => old.file !== target);
    if (olds === undefined || olds.length === 0) this.stale.delete(record.id);
    else this.stale.set(record.id, olds);
    target.db.data.records[record.id] = record;
    this.home.set(record.id, target);
    this.dirty.add(target);
  }

  /** A live record's shard. */
  targetFile(record: ActorRecord): StoreFile {
    return this.file(this.shardName(shardOf(record.id, this.shards)), false);
  }

  /** Shard `index`'s file name in this layout. */
  shardName(index: number): string {
    return `shard-${String(index).padStart(Math.max(2, String(this.shards - 1).length), "0")}.ndjson`;
  }

  file(key: string, retired: boolean): StoreFile {
    const existing = this.files.get(key);
    if (existing !== undefined) return existing;
    const path = join(this.actorsDir, key);
    const adapter = new DurableJsonFile<StoreDoc>(path, {
      onWrite: (bytes) => {
        this.fileBytes.set(key, bytes);
        this.onWrite(bytes);
      },
      chunks: shardChunks,
    });
    const file = { key, path, retired, db: new Low(adapter, { version: 1, records: emptyRecords() }) };
    this.files.set(key, file);
    return file;
  }

  /** The live shards' bytes on disk. */
  liveBytes(): number {
    let total = 0;
    for (const bytes of this.fileBytes.values()) total += bytes;
    return total;
  }

  /** Drops the finished records (not yet archived) last updated before `cutoff`; returns how many. */
  dropFinishedBefore(cutoff: number): number {
    let dropped = 0;
    for (const [id, record] of this.finished) {
      if (record.updatedAt >= cutoff) continue;
      this.finished.delete(id);
      this.dropStale(id);
      dropped++;
    }
    return dropped;
  }

  /** These finished records are in the archive now: their old live copies can go. */
  archived(records: readonly ActorRecord[]): void {
    for (const record of records) {
      if (this.finished.get(record.id) !== record) continue; // put again meanwhile: archived next time
      this.finished.delete(record.id);
      this.dropStale(record.id);
    }
  }

  /** Drops the old copies of `id` (all of them, or those in `only`) from their files. */
  private dropStale(id: string, only?: StaleCopy): void {
    const olds = this.stale.get(id) ?? [];
    for (const old of only === undefined ? olds : [only]) {
      if (old.file.db.data.records[id] === old.copy) {
        Reflect.deleteProperty(old.file.db.data.records, id);
        this.dirty.add(old.file);
      }
    }
    const rest = only === undefined ? [] : olds.filter((s) => s !== only);
    if (rest.length === 0) this.stale.delete(id);
    else this.stale.set(id, rest);
  }

  /** The old copies that writing `files` makes free: their record's home is one of them. */
  freeableCopies(files: readonly StoreFile[]): FreeableCopy[] {
    const inBatch = new Set(files);
    const freeable: FreeableCopy[] = [];
    for (const [id, olds] of this.stale) {
      const home = this.home.get(id);
      if (home !== undefined && inBatch.has(home)) for (const old of olds) freeable.push({ id, old, home });
    }
    return freeable;
  }

  /**
   * Writes each file whole and durably, then drops the old copies in `freeable` whose home was
   * written. A file that failed is dirty again (the next compaction retries it); returns the failures.
   */
  async writeFiles(
    files: readonly StoreFile[],
    freeable: readonly FreeableCopy[],
  ): Promise<Array<{ file: string; cause: unknown }>> {
    // One file at a time: a stringify blocks the event loop for one file's worth, not the whole database.
    const failed = new Set<StoreFile>();
    const failures: Array<{ file: string; cause: unknown }> = [];
    for (const file of files) {
      try {
        await this.persist(file);
      } catch (cause) {
        failed.add(file);
        this.dirty.add(file);
        failures.push({ file: file.path, cause });
      }
    }
    for (const { id, old, home } of freeable) if (!failed.has(home)) this.dropStale(id, old);
    return failures;
  }

  private async persist(file: StoreFile): Promise<void> {
    if (file.retired && isEmpty(file.db.data.records)) {
      // An old-layout shard with nothing left: delete rather than keep an empty file.
      await rm(file.path, { force: true });
      await syncDirectory(this.actorsDir);
      this.fileBytes.delete(file.key);
      if (isEmpty(file.db.data.records) && !this.dirty.has(file)) this.files.delete(file.key);
      return;
    }
    await file.db.write();
  }
}

/** FNV-1a (32 bit) over the id's UTF-16 code units: stable across runs and platforms. */
export function shardOf(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}

/** Prototype-less, so an id like "__proto__" is an ordinary key. */
export function emptyRecords(): Record<string, ActorRecord> {
  return Object.create(null) as Record<string, ActorRecord>;
}

export function isEmpty(records: Record<string, ActorRecord>): boolean {
  for (const _ in records) return false;
  return true;
}
