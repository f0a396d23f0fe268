import { readdir } from "node:fs/promises";
import {
  type ActorRecord,
  type RawStoreDoc,
  checkActorRecord,
  newerRecord,
  parseRawDoc,
  sameRecord,
} from "./actorRecord.js";
import { CorruptStateFileError, DurableJsonFile, errorText } from "./DurableJsonFile.js";
import { replayJournal } from "./journal/replayJournal.js";
import { removeLeftoverTempFiles } from "./leftoverTempFiles.js";
import { keepInQuarantine, quarantineFile, quarantineStamp } from "./quarantine.js";
import { ARCHIVE_FILE, SHARD_FILE, type SnapshotLayout, type StoreFile, isEmpty } from "./snapshotLayout.js";
import type { SnapshotStoreOpenReport, SnapshotStoreOptions } from "./snapshotStoreOptions.js";
import { StateDirNotWritableError } from "./StateDirLock.js";

/** What loading a store needs from it. */
export interface LoadContext {
  layout: SnapshotLayout;
  options: SnapshotStoreOptions;
  actorsDir: string;
  archiveDir: string;
  now: () => number;
  warn: (message: string) => void;
  report: SnapshotStoreOpenReport;
  onWrite: (bytes: number) => void;
}

/**
 * Reads a LowdbSnapshotStore's files and journal into `layout`: every record checked (and migrated), the
 * ones that cannot be used kept in `quarantine/records-<time>.json`, a store file that does not parse
 * moved aside, a damaged journal segment copied to `quarantine/`; what it did goes into `ctx.report`.
 * Returns the journal segments' sequence numbers, in order (the caller seals them).
 */
export async function loadSnapshotStore(ctx: LoadContext): Promise<number[]> {
  const { layout } = ctx;
  // The caller holds the state dir's lock: a temp file here is a killed writer's, never renamed into place.
  for (const dir of [ctx.actorsDir, ctx.archiveDir]) await removeLeftoverTempFiles(dir);
  const found: Array<{ file: StoreFile; raw: Record<string, unknown> }> = [];
  for (const name of await list(ctx.actorsDir)) {
    const match = SHARD_FILE.exec(name);
    if (match === null) continue;
    const index = Number(match[1]);
    const canonical = `shard-${String(index).padStart(layout.shardDigits(), "0")}.json`;
    const file = layout.file("live", name, !(index < layout.shards && name === canonical));
    const raw = await readRaw(ctx, file);
    if (raw !== undefined) found.push({ file, raw });
  }
  for (const name of await list(ctx.archiveDir)) {
    if (!ARCHIVE_FILE.test(name)) continue;
    const file = layout.file("archive", name, false);
    const raw = await readRaw(ctx, file);
    if (raw !== undefined) found.push({ file, raw });
  }

  // Validate (and migrate) every record; keep the ones that cannot be used aside.
  const quarantined: Array<{ file: string; key: string; problem: string; record: unknown }> = [];
  const copies = new Map<string, Array<{ file: StoreFile; record: ActorRecord }>>();
  for (const { file, raw } of found) {
    for (const [key, value] of Object.entries(raw)) {
      const checked = checkStored(ctx, key, value, file.path, quarantined);
      // A record quarantined or migrated changes its file: rewrite it.
      if (checked === undefined || checked.migrated) layout.markDirty(file);
      if (checked === undefined) continue;
      copies.set(key, [...(copies.get(key) ?? []), { file, record: checked.record }]);
    }
  }
  const replayed = await replayJournal({
    stateDir: ctx.options.dir,
    actorsDir: ctx.actorsDir,
    names: await list(ctx.actorsDir),
    now: ctx.now(),
    warn: ctx.warn,
    check: (key, value, file) => checkStored(ctx, key, value, file, quarantined)?.record,
  });
  ctx.report.damagedJournals.push(...replayed.damaged);
  const journal = replayed.latest;
  if (quarantined.length > 0) await quarantineRecords(ctx, quarantined);

  // One copy per id: a duplicate is what a crash during a move leaves; the newer copy wins.
  for (const [id, candidates] of copies) {
    const winner = candidates.reduce((best, c) => (newerRecord(c.record, best.record) ? c : best));
    winner.file.db.data.records[id] = winner.record;
    layout.home.set(id, winner.file);
    for (const loser of candidates) if (loser !== winner) layout.markDirty(loser.file);
  }
  // Then every record into the file it belongs to (another shard count, a record finished at a crash).
  for (const [id, file] of [...layout.home]) {
    const record = file.db.data.records[id];
    if (record !== undefined && layout.targetFile(record) !== file) layout.place(record);
  }
  // Then the journal over the files: its last line per id, unless a file holds a newer copy (what a
  // compaction wrote before the crash; replaying a line already folded in changes nothing).
  for (const record of journal.values()) {
    const current = layout.home.get(record.id)?.db.data.records[record.id];
    if (current !== undefined && (newerRecord(current, record) || sameRecord(current, record))) continue;
    layout.place(record);
  }
  // An old-layout shard with nothing left (all quarantined) is deleted; one that still holds moved
  // records is rewritten once their new homes are on disk.
  for (const file of layout.files.values())
    if (file.retired && isEmpty(file.db.data.records)) layout.markDirty(file);
  return replayed.seqs;
}

/**
 * A stored record (from a file or a journal line) checked, and migrated when its machine version is
 * older: undefined (and queued in `quarantined`) when it cannot be used.
 */
function checkStored(
  ctx: LoadContext,
  key: string,
  value: unknown,
  file: string,
  quarantined: Array<{ file: string; key: string; problem: string; record: unknown }>,
): { record: ActorRecord; migrated: boolean } | undefined {
  const checked = checkActorRecord(key, value, ctx.options, true);
  if (!checked.ok) {
    quarantined.push({ file, key, problem: checked.problem, record: value });
    return undefined;
  }
  if (checked.fromVersion === undefined) return { record: checked.record, migrated: false };
  ctx.report.migrated.push({
    id: key,
    machineId: checked.record.machineId,
    fromVersion: checked.fromVersion,
    toVersion: checked.record.machineVersion,
  });
  return { record: checked.record, migrated: true };
}

/** A folder's entries, sorted. */
async function list(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

/** The file's records, or undefined when it is missing or was quarantined as corrupt. */
async function readRaw(ctx: LoadContext, file: StoreFile): Promise<Record<string, unknown> | undefined> {
  try {
    const doc = await new DurableJsonFile<RawStoreDoc>(file.path, { parse: parseRawDoc }).read();
    return doc?.records;
  } catch (error) {
    if (!(error instanceof CorruptStateFileError)) throw error;
    let movedTo: string;
    try {
      movedTo = await quarantineFile(file.path, ctx.now());
    } catch (cause) {
      throw new Error(
        `snapshot store: ${error.message}, and it could not be moved aside: ${errorText(cause)}`,
        {
          cause,
        },
      );
    }
    ctx.report.quarantinedFiles.push({ file: file.path, movedTo, problem: error.reason });
    ctx.warn(`snapshot store: ${error.message}; moved it to ${movedTo} and started without it`);
    return undefined;
  }
}

/** Keeps unusable records in `quarantine/records-<time>.json`, durably, before their files are rewritten. */
async function quarantineRecords(
  ctx: LoadContext,
  entries: Array<{ file: string; key: string; problem: string; record: unknown }>,
): Promise<void> {
  const now = ctx.now();
  const text = JSON.stringify({ version: 1, quarantinedAt: new Date(now).toISOString(), records: entries });
  let path: string;
  try {
    const kept = await keepInQuarantine(ctx.options.dir, `records-${quarantineStamp(now)}`, ".json", text);
    ctx.onWrite(kept.bytes);
    path = kept.path;
  } catch (error) {
    throw new StateDirNotWritableError(ctx.options.dir, error);
  }
  ctx.report.recordQuarantineFile = path;
  for (const entry of entries) {
    ctx.report.quarantinedRecords.push({ id: entry.key, file: entry.file, problem: entry.problem });
    ctx.warn(
      `snapshot store: record ${JSON.stringify(entry.key)} of ${entry.file} was quarantined to ${path}: ${entry.problem}`,
    );
  }
}
