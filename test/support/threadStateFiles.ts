import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  JOURNAL_BLOCK_BYTES,
  JOURNAL_HEADER,
  journalFileName,
  journalSegments,
  readJournalSegment,
} from "../../src/persistence/index.js";

/**
 * Writes `threads/journal-<seq>.ndjson` as the runtime would have: the header, `lines` (each a JSON
 * entry `[collection, key, value]`, or a raw string ending in a newline), zero padding to a whole block.
 */
export function writeThreadSegment(
  stateDir: string,
  lines: Array<[string, string, unknown] | string>,
  seq = 1,
): string {
  const dir = join(stateDir, "threads");
  mkdirSync(dir, { recursive: true });
  const text = lines
    .map((line) =>
      typeof line === "string" ? line : `${JSON.stringify({ c: line[0], k: line[1], v: line[2] })}\n`,
    )
    .join("");
  const data = Buffer.from(JOURNAL_HEADER + text, "utf8");
  const bytes = Buffer.alloc(Math.ceil((data.length + 1) / JOURNAL_BLOCK_BYTES) * JOURNAL_BLOCK_BYTES);
  data.copy(bytes);
  const file = join(dir, journalFileName(seq));
  writeFileSync(file, bytes);
  return file;
}

/** The thread state's journal segments (`threads/journal-<n>.ndjson`), in order, as paths. */
export function segmentFiles(stateDir: string): string[] {
  const dir = join(stateDir, "threads");
  if (!existsSync(dir)) return [];
  return journalSegments(readdirSync(dir)).map(({ name }) => join(dir, name));
}

/** Every line of the segments, in order, read without touching the files. */
export function savedThreadLines(stateDir: string): Array<{ c: string; k: string; v?: unknown }> {
  return segmentFiles(stateDir).flatMap(
    (file) => readJournalSegment(readFileSync(file)).values as Array<{ c: string; k: string; v?: unknown }>,
  );
}

/** The thread state as saved: `"<collection> <key>"` → value (a later line wins; one without `v` removes). */
export function savedThreadEntries(stateDir: string): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  for (const line of savedThreadLines(stateDir)) {
    if ("v" in line) entries.set(`${line.c} ${line.k}`, line.v);
    else entries.delete(`${line.c} ${line.k}`);
  }
  return entries;
}

/** The segments' data (their headers and lines, not the zero padding after them), in order. */
function segmentData(stateDir: string): Buffer[] {
  return segmentFiles(stateDir).map((file) => {
    const bytes = readFileSync(file);
    const end = bytes.indexOf(0);
    return end < 0 ? bytes : bytes.subarray(0, end);
  });
}

/** Bytes of data in the segments. */
export function threadStateBytes(stateDir: string): number {
  return segmentData(stateDir).reduce((sum, data) => sum + data.length, 0);
}

/** Lines in the segments, their headers not counted (without parsing them). */
export function threadStateLineCount(stateDir: string): number {
  let lines = 0;
  for (const data of segmentData(stateDir)) {
    // A segment made for appends and not yet appended to holds no header either.
    for (let at = data.indexOf(10); at >= 0; at = data.indexOf(10, at + 1)) lines += 1;
    if (data.length > 0) lines -= 1;
  }
  return lines;
}
