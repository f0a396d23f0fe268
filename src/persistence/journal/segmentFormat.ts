/**
 * The journal segment format. A segment `actors/journal-<n>.ndjson` is a header line, one JSON record
 * per line in put order, then zero bytes: the writer grows the file (sparse) in whole blocks of
 * JOURNAL_BLOCK_BYTES and keeps at least one zero byte after the data. So a reader tells apart:
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

/**
 * Reads a segment's bytes (the whole file) by the rules in this module's comment. With `each`, every
 * record is handed to it as it is parsed, in append order, and `values` is left empty: a large segment's
 * parsed lines are then not all held at once.
 */
export function readJournalSegment(bytes: Uint8Array, each?: (value: unknown) => void): JournalReading {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Created but never appended to: a crash came before the first append grew it.
  if (buffer.length === 0) return { values: [], torn: false };
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
    return { values: [], torn: false, damage: { kind: "corrupt", problem } };
  }
  // Only the header's beginning before the zeros: the segment's first append was cut short.
  if (dataEnd < HEADER_BYTES.length) {
    if (zeroAt >= 0 && buffer.length % JOURNAL_BLOCK_BYTES === 0) return { values: [], torn: dataEnd > 0 };
    return { values: [], torn: false, damage: truncated(buffer.length) };
  }
  const lines = readLines(buffer.subarray(HEADER_BYTES.length, dataEnd), each);
  const reading: JournalReading = { values: lines.values, torn: lines.torn };
  if (zeroAt < 0 || buffer.length % JOURNAL_BLOCK_BYTES !== 0) {
    // The cut may have fallen anywhere: a partial last line is lost data here, not a torn append.
    reading.torn = false;
    reading.damage = truncated(buffer.length, lines.torn ? 1 + (lines.damage?.linesLost ?? 0) : undefined);
    return reading;
  }
  const stray = buffer.subarray(dataEnd).findIndex((byte) => byte !== 0);
  if (stray >= 0) {
    reading.damage = {
      kind: "corrupt",
      problem: `data after the zero padding at byte ${dataEnd + stray}${lines.damage === undefined ? "" : `; ${lines.damage.problem}`}`,
    };
    return reading;
  }
  if (lines.damage !== undefined) reading.damage = lines.damage;
  return reading;
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

/**
 * The lines of JSON after the header (numbered from 2, as in the file); a line that does not parse
 * is counted and skipped, the ones after it are kept. Each line is decoded alone: one line of text
 * beyond Latin-1 would make a string of the whole data two bytes a character, slower to decode and parse.
 */
function readLines(
  data: Buffer,
  each?: (value: unknown) => void,
): { values: unknown[]; torn: boolean; damage?: JournalDamage } {
  const values: unknown[] = [];
  const take = each ?? ((value: unknown) => values.push(value));
  const bad: number[] = [];
  let firstProblem = "";
  let start = 0;
  for (let line = 2, end = data.indexOf(0x0a); end >= 0; line++, end = data.indexOf(0x0a, start)) {
    const text = data.toString("utf8", start, end);
    start = end + 1;
    if (text === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (bad.length === 0) firstProblem = error instanceof Error ? error.message : String(error);
      bad.push(line);
      continue;
    }
    take(value);
  }
  const torn = start < data.length;
  if (bad.length === 0) return { values, torn };
  const where = bad.length === 1 ? `line ${bad[0]}` : `lines ${bad.join(", ")}`;
  return {
    values,
    torn,
    damage: {
      kind: "corrupt",
      problem: `${where}: not valid JSON (${firstProblem}); the lines after it were kept`,
      linesLost: bad.length,
    },
  };
}
