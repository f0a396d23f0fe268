/**
 * The archive's files: their names, and their lines. Finished records are appended, one JSON line each, to the file of the UTC
 * hour of their updatedAt (`archive-2026-11-24T13.ndjson`), beside a list of their ids' hashes
 * (`archive-2026-11-24T13.ids`) that tells, without reading the records, which hours may hold an id.
 * An hour's file is small enough to rewrite when prune cuts into it.
 */

/** An hour's records. */
export const ARCHIVE_HOUR_FILE = /^archive-(\d{4}-\d{2}-\d{2}T\d{2})\.ndjson$/;
/** An hour's id hashes. */
export const ARCHIVE_IDS_FILE = /^archive-(\d{4}-\d{2}-\d{2}T\d{2})\.ids$/;

export const HOUR_MS = 3_600_000;

/** The UTC hour of a time, as the archive names it: `2026-11-24T13`. */
export function hourOf(at: number): string {
  return new Date(at).toISOString().slice(0, 13);
}

/** When an hour (as hourOf names it) begins, in ms since the epoch. */
export function hourStart(hour: string): number {
  return Date.parse(`${hour}:00:00.000Z`);
}

/** When an hour ends (the next one begins). */
export function hourEnd(hour: string): number {
  return hourStart(hour) + HOUR_MS;
}

export function recordsFileName(hour: string): string {
  return `archive-${hour}.ndjson`;
}

export function idsFileName(hour: string): string {
  return `archive-${hour}.ids`;
}

/**
 * An archive hour's complete, non-empty lines (views of `bytes`) with their numbers: after the last
 * newline is an unacknowledged append.
 */
export function wholeLines(bytes: Buffer): Array<{ line: Buffer; lineNo: number }> {
  const out: Array<{ line: Buffer; lineNo: number }> = [];
  let start = 0;
  let lineNo = 1;
  for (let end = bytes.indexOf(NEWLINE); end >= 0; end = bytes.indexOf(NEWLINE, start)) {
    if (end > start) out.push({ line: bytes.subarray(start, end), lineNo });
    start = end + 1;
    lineNo++;
  }
  return out;
}

const NEWLINE = 0x0a;
