import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { idOf } from "../actorRecord.js";
import { StateFileReadError } from "../DurableJsonFile.js";
import { type JournalDamage, journalSegments, readJournalSegment } from "./segmentFormat.js";

export interface ReplayJournalOptions<R> {
  actorsDir: string;
  /** The folder's entries (`actors/`, `threads/`). */
  names: readonly string[];
  /** A line's record checked, or undefined when it cannot be used (the caller sets it aside or reports it). */
  check: (key: string, value: unknown, file: string) => R | undefined;
  /** A segment that lost acknowledged records, with its bytes, told once its readable lines are checked. */
  damaged: (file: string, bytes: Buffer, damage: JournalDamage) => Promise<void> | void;
  /** A segment whose last line was cut short: an append never acknowledged, dropped. */
  torn?: (file: string) => void;
  /** A segment that cannot be read; without this, its StateFileReadError is thrown. */
  unreadable?: (file: string, error: unknown) => void;
  /**
   * Takes every usable record in line order instead, `latest` left empty: for a caller whose own state
   * keeps the last record of each key as it applies them (the thread state), so no map of them is built.
   */
  each?: (record: R) => void;
}

/**
 * Reads the journal segments in order: the last usable record per id (in the order of each id's last
 * line) or, with `each`, every usable record, and the segments' sequence numbers. Every line of a
 * damaged segment that can be read is used.
 */
export async function replayJournal<R>(
  options: ReplayJournalOptions<R>,
): Promise<{ latest: Map<string, R>; seqs: number[] }> {
  const segments = journalSegments(options.names);
  const latest = new Map<string, R>();
  for (const { name } of segments) {
    const path = join(options.actorsDir, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if (options.unreadable === undefined) throw new StateFileReadError(path, error);
      options.unreadable(path, error);
      continue;
    }
    // Each line checked as it is parsed: the segment's raw lines are never all held at once.
    const reading = readJournalSegment(bytes, (value) => {
      const key = idOf(value) ?? "";
      const record = options.check(key, value, path);
      if (record === undefined) return;
      if (options.each !== undefined) return options.each(record);
      latest.delete(key);
      latest.set(key, record);
    });
    if (reading.torn) options.torn?.(path);
    if (reading.damage !== undefined) await options.damaged(path, bytes, reading.damage);
  }
  return { latest, seqs: segments.map((s) => s.seq) };
}
