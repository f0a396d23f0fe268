import { readdir, stat } from "node:fs/promises";
import {
  type ActorRecord,
  type RawStoreDoc,
  checkActorRecord,
  newerRecord,
  parseRawDoc,
  journalCopyWins,
} from "./actorRecord.js";
import type { ArchiveFiles } from "./archive/ArchiveFiles.js";
import { CorruptStateFileError, DurableJsonFile, errorText } from "./DurableJsonFile.js";
import { replayJournal } from "./journal/replayJournal.js";
import type { JournalDamage } from "./journal/segmentFormat.js";
import { removeLeftoverTempFiles } from "./stateDirFiles.js";
import { keepDamagedJournal, keepInQuarantine, quarantineFile, quarantineStamp } from "./quarantine.js";
import { SHARD_FILE, type SnapshotLayout, type StoreFile, isEmpty } from "./snapshotLayout.js";
import type { SnapshotStoreOpenReport, SnapshotStoreOptions } from "./snapshotStoreOptions.js";
import { StateDirNotWritableError } from "./StateDirLock.js";

/** What loading a store needs from it. */
export interface LoadContext {
  layout: SnapshotLayout;
  archive: ArchiveFiles;
  options: SnapshotStoreOptions;
  actorsDir: string;
  archiveDir: string;
  now: () => number;
  warn: (message: string) => void;
  report: SnapshotStoreOpenReport;
  onWrite: (bytes: number) => void;
}

/**
 * Reads a LowdbSnapshotStore's live shards and journal into `layout`, every record checked (and
 * migrated): unusable records are kept in `quarantine/records-<time>.json`, a file that does not parse
 * is moved aside, a damaged journal segment is copied to `quarantine/`, each in `ctx.report`. Returns
 * the journal segments' sequence numbers, in order.
 */
export async function loadSnapshotStore(ctx: LoadContext): Promise<number[]> {
  const { layout } = ctx;
  // The caller holds the state dir's lock: a temp file here is a killed writer's, never renamed into place.
  for (const dir of [ctx.actorsDir, ctx.archiveDir]) await removeLeftoverTempFiles(dir);
  // Checked as each file is read, so only one file's parsed JSON is held at a time.
  const quarantined: Array<{ file: string; key: string; problem: string; record: unknown }> = [];
  const copies = new Map<string, Array<{ file: StoreFile; record: ActorRecord }>>();
  const checkFile = (file: StoreFile, raw: Record<string, unknown>): void => {
    for (const [key, value] of Object.entries(raw)) {
      const checked = checkStored(ctx, key, value, file.path, quarantined);
      // A record quarantined or migrated changes its file: rewrite it.
      if (checked === undefined || checked.migrated) layout.dirty.add(file);
      if (checked === undefined) continue;
      const held = copies.get(key);
      if (held === undefined) copies.set(key, [{ file, record: checked.record }]);
      else held.push({ file, record: checked.record });
    }
  };
  for (const name of await list(ctx.actorsDir)) {
    const match = SHARD_FILE.exec(name);
    if (match === null) continue;
    const index = Number(match[1]);
    const file = layout.file(name, !(index < layout.shards && name === layout.shardName(index)));
    const raw = await readRaw(ctx, file.path);
    if (raw === undefined) continue;
    checkFile(file, raw);
    layout.fileBytes.set(file.key, (await stat(file.path)).size);
  }
  const replayed = await replayJournal({
    actorsDir: ctx.actorsDir,
    names: await list(ctx.actorsDir),
    check: (key, value, file) => checkStored(ctx, key, value, file, quarantined)?.record,
    torn: (file) =>
      ctx.warn(
        `snapshot store: ignored the torn last line of ${file} (an append cut short, never acknowledged)`,
      ),
    damaged: (file, bytes, damage) => keepDamaged(ctx, file, bytes, damage),
  });
  const journal = replayed.latest;
  if (quarantined.length > 0) await quarantineRecords(ctx, quarantined);

  // One copy per id: a duplicate is what a crash during a move leaves; the newer copy wins.
  for (const [id, candidates] of copies) {
    const winner = candidates.reduce((best, c) => (newerRecord(c.record, best.record) ? c : best));
    for (const loser of candidates) if (loser !== winner) layout.dirty.add(loser.file);
    winner.file.db.data.records[id] = winner.record;
    layout.home.set(id, winner.file);
  }
  // Then every record where it belongs (another shard count, a record finished at a crash).
  for (const [id, file] of [...layout.home]) {
    const record = file.db.data.records[id];
    if (record !== undefined && (record.status !== "active" || layout.targetFile(record) !== file))
      layout.place(record);
  }
  // Then the journal over the files, unless a file or the archive holds a newer copy (already folded in).
  const archived = await ctx.archive.getEach(
    [...journal.keys()].filter((id) => layout.held(id) === undefined && ctx.archive.mayHold(id)),
  );
  for (const record of journal.values()) {
    if (journalCopyWins(record, layout.held(record.id) ?? archived.get(record.id))) layout.place(record);
  }
  // An old-layout shard left empty is deleted (LowdbSnapshotStore rewrites the others once moved out).
  for (const file of layout.files.values())
    if (file.retired && isEmpty(file.db.data.records)) layout.dirty.add(file);
  return replayed.seqs;
}

/** A stored record checked (and migrated); undefined, and queued in `quarantined`, when unusable. */
function checkStored(
  ctx: LoadContext,
  key: string,
  value: unknown,
  file: string,
  quarantined: Array<{ file: string; key: string; problem: string; record: unknown }>,
): { record: ActorRecord; migrated: boolean } | undefined {
  const checked = checkActorRecord(key, value, ctx.options, true, ctx.report.migrated);
  if (checked.ok) return { record: checked.record, migrated: checked.fromVersion !== undefined };
  quarantined.push({ file, key, problem: checked.problem, record: value });
  return undefined;
}

/** A journal segment that lost acknowledged records: a copy kept in `quarantine/`, reported loudly. */
async function keepDamaged(
  ctx: LoadContext,
  file: string,
  bytes: Buffer,
  damage: JournalDamage,
): Promise<void> {
  let keptAt: string;
  try {
    keptAt = await keepDamagedJournal(ctx.options.dir, file, bytes, ctx.now());
  } catch (cause) {
    throw new Error(
      `snapshot store: ${damage.kind} journal ${file} (${damage.problem}), and a copy could not be kept: ${errorText(cause)}`,
      { cause },
    );
  }
  ctx.report.damagedJournals.push({ file, keptAt, ...damage });
  ctx.warn(
    `snapshot store: ACKNOWLEDGED RECORDS MAY BE LOST: ${damage.kind} journal ${file}: ${damage.problem}; ` +
      `kept a copy at ${keptAt} and loaded every record it still holds`,
  );
}

/** A folder's entries, sorted. */
async function list(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

/** The file's records, or undefined when it is missing or was quarantined as corrupt. */
async function readRaw(ctx: LoadContext, path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const doc = await new DurableJsonFile<RawStoreDoc>(path, { parse: parseRawDoc }).read();
    return doc?.records;
  } catch (error) {
    if (!(error instanceof CorruptStateFileError)) throw error;
    let movedTo: string;
    try {
      movedTo = await quarantineFile(path, ctx.now());
    } catch (cause) {
      throw new Error(
        `snapshot store: ${error.message}, and it could not be moved aside: ${errorText(cause)}`,
        {
          cause,
        },
      );
    }
    ctx.report.quarantinedFiles.push({ file: path, movedTo, problem: error.reason });
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
