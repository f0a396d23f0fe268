import { join } from "node:path";
import {
  type ActorRecord,
  type ActorRecordRules,
  checkActorRecord,
  journalCopyWins,
  leadingId,
  leadingTime,
  type MigratedRecord,
  newerRecord,
} from "./actorRecord.js";
import type { ArchiveFiles } from "./archive/ArchiveFiles.js";
import { CorruptStateFileError, DurableJsonFile } from "./DurableJsonFile.js";
import { FileReader } from "./FileReader.js";
import { replayJournal } from "./journal/replayJournal.js";
import { keptRecord } from "./recordLine.js";
import type { QuarantinedRecord, SetAside } from "./setAside.js";
import {
  DOCUMENT_SHARD_FILE,
  DOCUMENT_SHARD_PROBLEM,
  type RawShard,
  SHARD_FILE,
  readShard,
} from "./shardFormat.js";
import type { SnapshotFile, SnapshotFiles } from "./SnapshotFile.js";
import { type SnapshotLayout, isEmpty } from "./snapshotLayout.js";

/** What a lowdb store's open() reads its files into, and with. */
export interface StoreFiles {
  actorsDir: string;
  layout: SnapshotLayout;
  archive: ArchiveFiles;
  setAside: SetAside;
  rules: ActorRecordRules;
  /** The open report's migrated records, added to. */
  migrated: MigratedRecord[];
  warn: (message: string) => void;
  countWrite: (bytes: number) => void;
  /** Keeps the files read that records keep their snapshots in, open until the store closes. */
  files: SnapshotFiles;
}

/** Reads the live shards and replays the journal among `names` into the layout; returns the segments' numbers. */
export async function readStoreFiles(names: readonly string[], o: StoreFiles): Promise<number[]> {
  const { layout } = o;
  // One buffer for every file read, each parsed before the next is read.
  const reader = new FileReader();
  // Checked as each file is read, so only one file's parsed JSON is held at a time.
  const quarantined: QuarantinedRecord[] = [];
  // The journal first: a shard line whose record it holds a newer copy of (all of them, nearly, after a
  // crash under load) is then skipped unparsed, and a restart parses each record once.
  const { latest: journal, seqs } = await replayJournal({
    actorsDir: o.actorsDir,
    names,
    reader,
    files: o.files,
    check: (key, value, file) => checkStored(o, key, value, file, quarantined)?.record,
    torn: (file) =>
      o.warn(
        `snapshot store: ignored the torn last line of ${file} (an append cut short, never acknowledged)`,
      ),
    damaged: (file, bytes, damage) => o.setAside.damagedJournal(file, bytes, damage),
  });
  /** Ids whose shard copy was skipped: the journal's copy replaces it, as it would a copy held. */
  const superseded = new Set<string>();
  const skip = (bytes: Buffer, start: number, end: number): boolean => {
    if (journal.size === 0) return false; // a start after a clean stop
    const id = leadingId(bytes, start, end);
    const newer = id === undefined ? undefined : journal.get(id);
    if (newer === undefined) return false;
    const time = leadingTime(bytes, start, end);
    if (time === undefined || !newerRecord(newer, time)) return false;
    superseded.add(newer.id);
    return true;
  };
  for (const name of names) {
    if (DOCUMENT_SHARD_FILE.test(name)) {
      const path = join(o.actorsDir, name);
      await o.setAside.file(new CorruptStateFileError(path, DOCUMENT_SHARD_PROBLEM));
      continue;
    }
    const match = SHARD_FILE.exec(name);
    if (match === null) continue;
    const index = Number(match[1]);
    const file = layout.file(name, !(index < layout.shards && name === layout.shardName(index)));
    const raw = await readRaw(o, reader, file.path, skip);
    if (raw === undefined) continue;
    // Written again without the lines skipped.
    if (raw.skipped > 0) layout.dirty.add(file);
    for (const [key, value] of raw.entries) {
      const checked = checkStored(o, key, value, file.path, quarantined);
      // A record quarantined or migrated changes its file: rewrite it.
      if (checked === undefined || checked.migrated) layout.dirty.add(file);
      if (checked === undefined) continue;
      // One copy per id: a duplicate is what a crash during a move leaves; the newer copy wins, and the
      // file of the other is written again without it.
      const heldIn = layout.home.get(key);
      const held = heldIn?.db.data.records[key];
      const newer = held === undefined || newerRecord(checked.record, held);
      if (heldIn !== undefined) layout.dirty.add(newer ? heldIn : file);
      if (!newer) continue;
      if (heldIn !== undefined) Reflect.deleteProperty(heldIn.db.data.records, key);
      file.db.data.records[key] = checked.record;
      layout.home.set(key, file);
    }
    layout.fileBytes.set(file.key, raw.bytes);
  }
  if (quarantined.length > 0) o.countWrite(await o.setAside.records(quarantined));

  // Then every record where it belongs (another shard count, a record finished at a crash). place()
  // deletes or sets again only the id at hand, so the map itself is iterated: no copy of 100,000 pairs.
  for (const [id, file] of layout.home) {
    const record = file.db.data.records[id];
    if (record !== undefined && (record.status !== "active" || layout.targetFile(record) !== file))
      layout.place(record);
  }
  // Then the journal over the files, unless a file or the archive holds a newer copy (already folded in).
  // A copy as new is in the hour of the journal line's time or a later one: a replay after a crash
  // looks at the last hours, not at a month of them for every record new since the last fold.
  const archived = await o.archive.getEach(
    [...journal.keys()].filter((id) => layout.held(id) === undefined && !superseded.has(id)),
    (id) => journal.get(id)?.updatedAt ?? Number.NEGATIVE_INFINITY,
  );
  for (const record of journal.values()) {
    if (journalCopyWins(record, layout.held(record.id) ?? archived.get(record.id))) layout.place(record);
  }
  // An old-layout shard left empty is deleted (LowdbSnapshotStore rewrites the others once moved out).
  for (const file of layout.files.values())
    if (file.retired && isEmpty(file.db.data.records)) layout.dirty.add(file);
  return seqs;
}

/** A stored record checked (and migrated); undefined, and queued in `quarantined`, when unusable. */
function checkStored(
  o: StoreFiles,
  key: string,
  value: unknown,
  file: string,
  quarantined: QuarantinedRecord[],
): { record: ActorRecord; migrated: boolean } | undefined {
  const checked = checkActorRecord(key, value, o.rules, true, o.migrated);
  if (checked.ok) return { record: checked.record, migrated: checked.fromVersion !== undefined };
  quarantined.push({ file, key, problem: checked.problem, record: keptRecord(value) });
  return undefined;
}

/**
 * The shard as read, or undefined when it is missing or was quarantined as corrupt. Its records'
 * snapshots in parts stay in the file, kept open for them.
 */
async function readRaw(
  o: StoreFiles,
  reader: FileReader,
  path: string,
  skip: (bytes: Buffer, start: number, end: number) => boolean,
): Promise<RawShard | undefined> {
  let file: SnapshotFile | undefined;
  const shard = new DurableJsonFile<RawShard>(path, { decode: (bytes) => readShard(bytes, file, skip) });
  try {
    const raw = await shard.read((at) => {
      const read = o.files.read(at, reader);
      file = read.file;
      return read.bytes;
    });
    if (file !== undefined) o.files.keep(file);
    return raw ?? undefined;
  } catch (error) {
    file?.close();
    if (!(error instanceof CorruptStateFileError)) throw error;
    await o.setAside.file(error);
    return undefined;
  }
}
