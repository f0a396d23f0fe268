import { basename } from "node:path";
import { keepInQuarantine, quarantineStamp } from "../quarantine.js";

/** A damaged journal segment's copy in `quarantine/`: `journal-<n>.ndjson.damaged-<time>[-n]`. */
export const DAMAGED_JOURNAL_FILE = /^journal-\d+\.ndjson\.damaged-[^/]*$/;

/**
 * Keeps a durable copy (mode 0600) of a damaged journal segment in `<stateDir>/quarantine/`, so the
 * evidence of what was lost outlives the segment once its readable records are folded into the files.
 * Returns the copy's path.
 */
export async function keepDamagedJournal(
  stateDir: string,
  segmentPath: string,
  bytes: Uint8Array,
  now: number,
): Promise<string> {
  const name = `${basename(segmentPath)}.damaged-${quarantineStamp(now)}`;
  return (await keepInQuarantine(stateDir, name, "", bytes)).path;
}
