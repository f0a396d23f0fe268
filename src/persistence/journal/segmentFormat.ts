import { leadingId } from "../actorRecord.js";
import { errorText } from "../DurableJsonFile.js";
import { parseRecordLine } from "../recordLine.js";
import type { SnapshotFile } from "../SnapshotFile.js";

/**
 * The journal segment format. A segment `actors/journal-<n>.ndjson` is a header line, one line per
 * record in put order (recordLine.ts), then zero bytes: the writer grows the file (sparse) in whole
 * blocks of JOURNAL_BLOCK_BYTES and keeps at least one zero byte after the data. So a reader tells apart:
 *   - a last line without its newline, then zeros: an append cut short, never acknowledged: dropped;
 *   - not a whole number of blocks, or data up to the end: cut after it was written: "truncated";
 *   - a line that is not JSON, bytes after the padding, no header: "corrupt" (the valid lines are kept).
 */

/** A journal segment in `actors/`: its sequence number captured. */
export const JOURNAL_FILE = /^journal-(\d+)\.ndjson$/;

export function journalFileName(seq: number): string {
  return `journal-${String(seq).padStart(6, "0")}.ndjson`;
}

/** The journal segments among a folder's entries, in append order (by sequence number). */
export function journalSegments(names: readonly string[]): Array<{ seq: number; name: string }> {
  const segments: Array<{ seq: number; name: string }> = [];
  for (const name of names) {
    const match = JOURNAL_FILE.exec(name);
    if (match !== null) segments.push({ seq: Number(match[1]), name });
  }
  return segments.sort((a, b) => a.seq - b.seq);
}

export const JOURNAL_HEADER = '{"journal":"a2a-snapshot","version":2}\n';
/** The writer grows a segment in blocks of this size; a reader finding another size knows it was cut. */
export const JOURNAL_BLOCK_BYTES = 64 * 1024;

/** Damage that may have cost acknowledged records. */
export interface JournalDamage {
  kind: "truncated" | "corrupt";
  problem: string;
  /** Lines that could not be read, when that is known (a truncation hides how many went). */
  linesLost?: number;
}

/** A segment's content as read. */
export interface JournalReading {
  /** The records' raw values, in append order. */
  values: unknown[];
  /** A last line cut short by a crash or a failed append: never acknowledged. */
  torn: boolean;
  damage?: JournalDamage;
}

const HEADER_BYTES = Buffer.from(JOURNAL_HEADER, "utf8");

/** A segment's bytes split into lines, none parsed yet; or the reading, when its first bytes decide it. */
type SegmentScan =
  | { reading: JournalReading }
  | {
      buffer: Buffer;
      /** Where each line's text begins and ends (exclusive); line i is the file's line i + 2. */
      starts: number[];
      ends: number[];
      /** Data after the last newline: an append cut short, or a cut. */
      partial: boolean;
      /** Where the zero padding begins, or -1 without any. */
      zeroAt: number;
      dataEnd: number;
    };

function scanSegment(bytes: Uint8Array): SegmentScan {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Created but never appended to: a crash came before the first append grew it.
  if (buffer.length === 0) return { reading: { values: [], torn: false } };
  const zeroAt = buffer.indexOf(0);
  const dataEnd = zeroAt < 0 ? buffer.length : zeroAt;
  const data = buffer.subarray(0, dataEnd);
  const common = Math.min(data.length, HEADER_BYTES.length);
  if (!data.subarray(0, common).equals(HEADER_BYTES.subarray(0, common))) {
    const newline = data.indexOf(0x0a);
    const first = data.subarray(0, newline < 0 ? dataEnd : newline).toString("utf8");
    const problem = first.startsWith('{"journal"')
      ? `unsupported journal header ${first}`
      : "not a journal segment: its data does not begin with the journal header";
    return { reading: { values: [], torn: false, damage: { kind: "corrupt", problem } } };
  }
  // Only the header's beginning before the zeros: the segment's first append was cut short.
  if (dataEnd < HEADER_BYTES.length) {
    if (zeroAt >= 0 && buffer.length % JOURNAL_BLOCK_BYTES === 0)
      return { reading: { values: [], torn: dataEnd > 0 } };
    return { reading: { values: [], torn: false, damage: truncated(buffer.length) } };
  }
  const starts: number[] = [];
  const ends: number[] = [];
  let start = HEADER_BYTES.length;
  for (let end = data.indexOf(0x0a, start); end >= 0; end = data.indexOf(0x0a, start)) {
    starts.push(start);
    ends.push(end);
    start = end + 1;
  }
  return { buffer, starts, ends, partial: start < dataEnd, zeroAt, dataEnd };
}

/** The lines that did not parse: their numbers in the file, and why. */
type BadLines = Array<{ line: number; problem: string }>;

/**
 * Reads a segment's bytes (the whole file) by the rules in this module's comment, in append order, each
 * line one JSON value, as the thread state writes them (records in parts are read newest first, below).
 * With `each`, every value is handed to it as it is parsed, and `values` is left empty: a large
 * segment's parsed lines are then not all held at once.
 */
export function readJournalSegment(bytes: Uint8Array, each?: (value: unknown) => void): JournalReading {
  const scan = scanSegment(bytes);
  if ("reading" in scan) return scan.reading;
  const values: unknown[] = [];
  const take = each ?? ((value: unknown) => values.push(value));
  const bad: BadLines = [];
  for (let i = 0; i < scan.starts.length; i++) {
    const start = scan.starts[i] as number;
    const end = scan.ends[i] as number;
    const value = parseLine(scan.buffer, start, end, i + 2, bad, wholeValue);
    if (value !== NOT_PARSED) take(value);
  }
  return { values, ...outcome(scan, bad) };
}

/**
 * As readJournalSegment, newest line first, for a reader that wants each id's latest record: a line
 * whose id (read from its beginning, `{"id":"…"`, without parsing the line) is `superseded` is skipped
 * unparsed. A line that cannot be skipped so is parsed and handed to `each`. With the `file` the bytes
 * were read from (kept open), a record's snapshot in parts stays there (parseRecordLine).
 */
export function readJournalSegmentNewestFirst(
  bytes: Uint8Array,
  file: SnapshotFile | undefined,
  superseded: (id: string) => boolean,
  each: (value: unknown) => void,
): Omit<JournalReading, "values"> {
  const scan = scanSegment(bytes);
  if ("reading" in scan) return scan.reading;
  const bad: BadLines = [];
  const parse = recordValue(file);
  for (let i = scan.starts.length - 1; i >= 0; i--) {
    const start = scan.starts[i] as number;
    const end = scan.ends[i] as number;
    const id = leadingId(scan.buffer, start, end);
    if (id !== undefined && superseded(id)) continue;
    const value = parseLine(scan.buffer, start, end, i + 2, bad, parse);
    if (value !== NOT_PARSED) each(value);
  }
  return outcome(scan, bad.reverse());
}

const NOT_PARSED = Symbol("not parsed");

type LineParser = (buffer: Buffer, start: number, end: number) => unknown;

/** A line that is one JSON value: decoded in place, with no view made nor tab looked for. */
const wholeValue: LineParser = (buffer, start, end) => JSON.parse(buffer.toString("utf8", start, end));
/** A record's line, whole or in parts (recordLine.ts), its snapshot left in `file` when given. */
const recordValue =
  (file: SnapshotFile | undefined): LineParser =>
  (buffer, start, end) =>
    parseRecordLine(buffer.subarray(start, end), file && { file, offset: start });

/**
 * A line's value; NOT_PARSED (counted in `bad`) when it is not JSON, or empty. Each line is decoded
 * alone: one line of text beyond Latin-1 would make a string of the whole data two bytes a character,
 * slower to decode and parse.
 */
function parseLine(
  buffer: Buffer,
  start: number,
  end: number,
  lineNo: number,
  bad: BadLines,
  parse: LineParser,
): unknown {
  if (start === end) return NOT_PARSED;
  try {
    return parse(buffer, start, end);
  } catch (error) {
    bad.push({ line: lineNo, problem: errorText(error) });
    return NOT_PARSED;
  }
}

/** Whether a segment was cut, holds bad lines (`bad`, in file order) or stray bytes, or ends in a torn append. */
function outcome(
  scan: Extract<SegmentScan, { buffer: Buffer }>,
  bad: BadLines,
): Omit<JournalReading, "values"> {
  const { buffer, zeroAt, dataEnd, partial } = scan;
  const where = bad.length === 1 ? "line" : "lines";
  const linesDamage: JournalDamage | undefined =
    bad[0] === undefined
      ? undefined
      : {
          kind: "corrupt",
          problem: `${where} ${bad.map((b) => b.line).join(", ")}: not valid JSON (${bad[0].problem}); the lines after it were kept`,
          linesLost: bad.length,
        };
  if (zeroAt < 0 || buffer.length % JOURNAL_BLOCK_BYTES !== 0) {
    // The cut may have fallen anywhere: a partial last line is lost data here, not a torn append.
    return {
      torn: false,
      damage: truncated(buffer.length, partial ? 1 + (linesDamage?.linesLost ?? 0) : undefined),
    };
  }
  const stray = buffer.subarray(dataEnd).findIndex((byte) => byte !== 0);
  if (stray >= 0) {
    const problem = `data after the zero padding at byte ${dataEnd + stray}${linesDamage === undefined ? "" : `; ${linesDamage.problem}`}`;
    return { torn: partial, damage: { kind: "corrupt", problem } };
  }
  return linesDamage === undefined ? { torn: partial } : { torn: partial, damage: linesDamage };
}

function truncated(size: number, linesLost?: number): JournalDamage {
  return {
    kind: "truncated",
    problem:
      `cut short after it was written (${size} bytes, its data runs to the end or the size is not a ` +
      `whole number of ${JOURNAL_BLOCK_BYTES}-byte blocks): acknowledged records may be missing`,
    ...(linesLost === undefined ? {} : { linesLost }),
  };
}
