/**
 * The snapshot journal's segment format, and how a reader tells a harmless torn tail from lost data.
 *
 * A segment `actors/journal-<n>.ndjson` is:
 *   - a header line, `{"journal":"a2a-snapshot","version":2}`;
 *   - one JSON record per line, appended in put order;
 *   - zero bytes up to the file's size. The writer grows the file with ftruncate (sparse) in whole
 *     blocks of JOURNAL_BLOCK_BYTES before it writes, and always keeps at least one zero byte after the data.
 * So every segment the writer leaves is empty (created, never appended to) or a whole number of blocks,
 * and its data ends at the first zero byte.
 * That tells the damage apart:
 *   - a last line without its newline, followed by zeros: an append a crash (or a failed write) cut
 *     short. Its batch was never acknowledged (an append is acknowledged only after the whole batch and
 *     its fdatasync landed), so it is dropped with a brief warning;
 *   - a file that is not a whole number of blocks, or whose data runs to its end: it was cut short after
 *     it was written (acknowledged records may be missing): "truncated";
 *   - a line that is not JSON, bytes after the zero padding, or data that does not begin with the
 *     header: "corrupt". The valid lines around a corrupt one are kept.
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

const ZERO = 0;
const HEADER_BYTES = Buffer.from(JOURNAL_HEADER, "utf8");

/** Reads a segment's bytes (the whole file) by the rules in this module's comment. */
export function readJournalSegment(bytes: Uint8Array): JournalReading {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Created but never appended to: a crash came before the first append grew it.
  if (buffer.length === 0) return { values: [], torn: false };
  const zeroAt = buffer.indexOf(ZERO);
  const dataEnd = zeroAt < 0 ? buffer.length : zeroAt;
  const data = buffer.subarray(0, dataEnd);
  if (!startsWith(data, HEADER_BYTES) && !startsWith(HEADER_BYTES, data)) {
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
  const lines = readLines(buffer.subarray(HEADER_BYTES.length, dataEnd).toString("utf8"));
  const reading: JournalReading = { values: lines.values, torn: lines.torn };
  if (zeroAt < 0 || buffer.length % JOURNAL_BLOCK_BYTES !== 0) {
    // The cut may have fallen anywhere: a partial last line is lost data here, not a torn append.
    reading.torn = false;
    reading.damage = truncated(buffer.length, lines.torn ? 1 + (lines.damage?.linesLost ?? 0) : undefined);
    return reading;
  }
  const stray = buffer.subarray(dataEnd).findIndex((byte) => byte !== ZERO);
  if (stray >= 0) {
    reading.damage = {
      kind: "corrupt",
      problem: `data after the zero padding at byte ${dataEnd + stray}${lineProblems(lines.damage)}`,
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

function lineProblems(damage: JournalDamage | undefined): string {
  return damage === undefined ? "" : `; ${damage.problem}`;
}

/**
 * The lines of JSON after the header (numbered from 2, as in the file); a line that does not parse
 * is counted and skipped, the ones after it are kept.
 */
function readLines(text: string): { values: unknown[]; torn: boolean; damage?: JournalDamage } {
  const lines = text.split("\n");
  const tail = lines.pop() ?? "";
  const values: unknown[] = [];
  const bad: number[] = [];
  let firstProblem = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line === "") continue;
    try {
      values.push(JSON.parse(line));
    } catch (error) {
      if (bad.length === 0) firstProblem = error instanceof Error ? error.message : String(error);
      bad.push(i + 2);
    }
  }
  if (bad.length === 0) return { values, torn: tail !== "" };
  const where = bad.length === 1 ? `line ${bad[0]}` : `lines ${bad.join(", ")}`;
  return {
    values,
    torn: tail !== "",
    damage: {
      kind: "corrupt",
      problem: `${where}: not valid JSON (${firstProblem}); the lines after it were kept`,
      linesLost: bad.length,
    },
  };
}

function startsWith(buffer: Buffer, prefix: Buffer): boolean {
  return buffer.length >= prefix.length && buffer.subarray(0, prefix.length).equals(prefix);
}
