import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { idOf } from "../actorRecord.js";
import { StateFileReadError, errorText } from "../DurableJsonFile.js";
import type { SnapshotStoreOpenReport } from "../snapshotStoreOptions.js";
import { keepDamagedJournal } from "./keepDamagedJournal.js";
import { journalSegments, readJournalSegment } from "./segmentFormat.js";

export interface ReplayJournalOptions<R> {
  /** The state directory (damaged segments are copied to its `quarantine/`) and its `actors/` folder's entries. */
  stateDir: string;
  actorsDir: string;
  names: readonly string[];
  now: number;
  warn: (message: string) => void;
  /** A line's record checked (and migrated), or undefined when it cannot be used (the caller quarantines it). */
  check: (key: string, value: unknown, file: string) => R | undefined;
}

export interface ReplayedJournal<R> {
  /** The last usable record per id, in the order of each id's last line. */
  latest: Map<string, R>;
  /** The segments' sequence numbers, in order. */
  seqs: number[];
  damaged: SnapshotStoreOpenReport["damagedJournals"];
}

/**
 * Reads the journal segments in order: the last usable record per id. A torn last line (never
 * acknowledged) is dropped with a brief warning; a truncated or corrupt segment (acknowledged records
 * may be missing) is reported loudly with a copy kept in `quarantine/`, and every line it still holds
 * that can be read is used.
 */
export async function replayJournal<R>(options: ReplayJournalOptions<R>): Promise<ReplayedJournal<R>> {
  const { actorsDir, warn } = options;
  const segments = journalSegments(options.names);
  const latest = new Map<string, R>();
  const damaged: ReplayedJournal<R>["damaged"] = [];
  for (const { name } of segments) {
    const path = join(actorsDir, name);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      throw new StateFileReadError(path, error);
    }
    const reading = readJournalSegment(bytes);
    if (reading.torn)
      warn(`snapshot store: ignored the torn last line of ${path} (an append cut short, never acknowledged)`);
    for (const value of reading.values) {
      const key = idOf(value) ?? "";
      const record = options.check(key, value, path);
      if (record === undefined) continue;
      latest.delete(key);
      latest.set(key, record);
    }
    const damage = reading.damage;
    if (damage === undefined) continue;
    let keptAt: string;
    try {
      keptAt = await keepDamagedJournal(options.stateDir, path, bytes, options.now);
    } catch (cause) {
      throw new Error(
        `snapshot store: ${damage.kind} journal ${path} (${damage.problem}), and a copy could not be kept: ${errorText(cause)}`,
        { cause },
      );
    }
    damaged.push({ file: path, keptAt, ...damage });
    warn(
      `snapshot store: ACKNOWLEDGED RECORDS MAY BE LOST: ${damage.kind} journal ${path}: ${damage.problem}; ` +
        `kept a copy at ${keptAt} and loaded every record it still holds`,
    );
  }
  return { latest, seqs: segments.map((s) => s.seq), damaged };
}
