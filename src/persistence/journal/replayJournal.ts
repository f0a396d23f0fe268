import { join } from "node:path";
import { idOf } from "../actorRecord.js";
import { StateFileReadError } from "../DurableJsonFile.js";
import { FileReader } from "../FileReader.js";
import type { SnapshotFile, SnapshotFiles } from "../SnapshotFile.js";
import {
  type JournalDamage,
  type JournalReading,
  journalSegments,
  readJournalSegment,
  readJournalSegmentNewestFirst,
} from "./segmentFormat.js";

export interface ReplayJournalOptions<R> {
  actorsDir: string;
  /** The folder's entries (`actors/`, `threads/`). */
  names: readonly string[];
  /** A line's record checked, or undefined when it cannot be used (the caller sets it aside or reports it). */
  check: (key: string, value: unknown, file: string) => R | undefined;
  /**
   * A segment that lost acknowledged records, with its bytes, told once its readable lines are checked.
   * The bytes are the reader's: valid until the promise returned settles.
   */
  damaged: (file: string, bytes: Buffer, damage: JournalDamage) => Promise<void> | void;
  /** A segment whose last line was cut short: an append never acknowledged, dropped. */
  torn?: (file: string) => void;
  /** A segment that cannot be read; without this, its StateFileReadError is thrown. */
  unreadable?: (file: string, error: unknown) => void;
  /**
   * Takes every usable record in line order instead, `latest` left empty: for a caller whose own state
   * keeps the last record of each key as it applies them (the thread state), so no map of them is built.
   * Each line is then one JSON value: a record in parts is not read so.
   */
  each?: (record: R) => void;
  /** Reads the segments; one of the caller's own, to read its other files into the same buffer. */
  reader?: FileReader;
  /**
   * Reads the segments, leaving the snapshots of records in parts in their segment, kept open (without,
   * they are read into strings).
   */
  files?: SnapshotFiles;
}

/**
 * Reads the journal segments: the last usable record per id (in the order of each id's last line) or,
 * with `each`, every usable record in line order; and the segments' sequence numbers. Every line of a
 * damaged segment that can be read is used.
 *
 * For the latest records the segments are read newest line first, and a line of an id already found is
 * skipped unparsed: a restart parses each id's last line, not every line since the last fold.
 */
export async function replayJournal<R>(
  options: ReplayJournalOptions<R>,
): Promise<{ latest: Map<string, R>; seqs: number[] }> {
  const segments = journalSegments(options.names);
  const reader = options.reader ?? new FileReader();
  const seqs = segments.map((s) => s.seq);
  const { each } = options;
  if (each !== undefined) {
    for (const { name } of segments) {
      await readSegment(options, reader, name, (path, bytes) =>
        readJournalSegment(bytes, (value) => {
          const record = options.check(idOf(value) ?? "", value, path);
          if (record !== undefined) each(record);
        }),
      );
    }
    return { latest: new Map(), seqs };
  }
  // Found newest first; reversed below into the order of each id's last line.
  const found: Array<[string, R]> = [];
  const done = new Set<string>();
  for (const { name } of [...segments].reverse()) {
    await readSegment(options, reader, name, (path, bytes, file) =>
      readJournalSegmentNewestFirst(
        bytes,
        file,
        (id) => done.has(id),
        (value) => {
          const key = idOf(value) ?? "";
          if (done.has(key)) return;
          const record = options.check(key, value, path);
          if (record === undefined) return; // an older line of the id may still be usable
          done.add(key);
          found.push([key, record]);
        },
      ),
    );
  }
  return { latest: new Map(found.reverse()), seqs };
}

/** Reads a segment and hands its bytes to `read`; reports what it says of a torn or damaged segment. */
async function readSegment<R>(
  options: ReplayJournalOptions<R>,
  reader: FileReader,
  name: string,
  read: (path: string, bytes: Buffer, file: SnapshotFile | undefined) => Omit<JournalReading, "values">,
): Promise<void> {
  const path = join(options.actorsDir, name);
  let bytes: Buffer;
  let file: SnapshotFile | undefined;
  try {
    if (options.files === undefined) bytes = reader.read(path);
    else ({ bytes, file } = options.files.read(path, reader));
  } catch (error) {
    if (options.unreadable === undefined) throw new StateFileReadError(path, error);
    options.unreadable(path, error);
    return;
  }
  // Each line checked as it is parsed: the segment's raw lines are never all held at once.
  let reading: Omit<JournalReading, "values">;
  try {
    reading = read(path, bytes, file);
  } finally {
    if (file !== undefined) options.files?.keep(file);
  }
  if (reading.torn) options.torn?.(path);
  if (reading.damage !== undefined) await options.damaged(path, bytes, reading.damage);
}
