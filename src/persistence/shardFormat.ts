import { type ActorRecord, idOf, isPlainObject } from "./actorRecord.js";
import { errorText } from "./DurableJsonFile.js";
import { parseRecordLine, recordLinePieces } from "./recordLine.js";
import type { SnapshotFile } from "./SnapshotFile.js";

/**
 * The live shard format. A shard `actors/shard-<nn>.ndjson` is a header line naming how many records
 * follow, then one record line (recordLine.ts) per record. It is always written whole (a temp file
 * renamed into place), so a file cut anywhere, at a line's end too, is told apart from a whole one.
 * A line is decoded and parsed on its own: one 700 KB string holding a few Korean characters decodes
 * to a two-byte string and parses several times slower than its lines do one by one.
 */

/** A live shard's file name (its number captured), as the store writes them. */
export const SHARD_FILE = /^shard-(\d+)\.ndjson$/;

/** A shard as development builds wrote it before this format, one JSON document: never read, set aside. */
export const DOCUMENT_SHARD_FILE = /^shard-\d+\.json$/;
export const DOCUMENT_SHARD_PROBLEM =
  "a live shard of the one-document format of development builds, which this version does not read (it reads shard-<nn>.ndjson)";

const FORMAT = { shard: "a2a-snapshot", version: 1 } as const;

/** A shard's first line, as a reader expects it. */
const EXPECTED = '{"shard":"a2a-snapshot","version":1,"records":<count>}';

/** A shard's first line. */
export function shardHeader(records: number): string {
  return `${JSON.stringify({ ...FORMAT, records })}\n`;
}

/** A live shard's records in memory, by id. */
export interface StoreDoc {
  version: 1;
  records: Record<string, ActorRecord>;
}

/** A shard as read, before its records are checked one by one: each line's value under its id ("" without one). */
export interface RawShard {
  entries: Array<[id: string, value: unknown]>;
  /** Lines left unparsed: `skip` said a copy read already supersedes them. */
  skipped: number;
  /** The file's size. */
  bytes: number;
}

/** A shard's text in pieces (recordLinePieces), after its header line. */
export function shardChunks(doc: StoreDoc): Iterable<string> {
  const records = Object.values(doc.records);
  return recordLinePieces(records, shardHeader(records.length));
}

/**
 * A shard's bytes as records, or an error saying what is wrong with the file. With the `file` they were
 * read from (kept open), a record's snapshot in parts stays there (parseRecordLine). A line `skip` is
 * true of (given its bytes' bounds) is counted and left unparsed.
 */
export function readShard(
  bytes: Buffer,
  file?: SnapshotFile,
  skip?: (bytes: Buffer, start: number, end: number) => boolean,
): RawShard {
  const headerEnd = bytes.indexOf(10);
  if (headerEnd < 0) throw new Error(`the header line is missing (expected ${EXPECTED})`);
  const header = bytes.toString("utf8", 0, headerEnd);
  const count = headerCount(header);
  if (count === undefined)
    throw new Error(`unsupported header ${JSON.stringify(header)} (expected ${EXPECTED})`);
  const entries: RawShard["entries"] = [];
  let skipped = 0;
  for (let start = headerEnd + 1; start < bytes.length;) {
    const lineNo = entries.length + skipped + 2;
    const end = bytes.indexOf(10, start);
    if (end < 0) throw new Error(`line ${lineNo} is cut short (no newline at the end of the file)`);
    if (skip?.(bytes, start, end)) {
      skipped += 1;
      start = end + 1;
      continue;
    }
    let value: unknown;
    try {
      value = parseRecordLine(bytes.subarray(start, end), file && { file, offset: start });
    } catch (error) {
      throw new Error(`line ${lineNo} is not valid JSON (${errorText(error)})`, { cause: error });
    }
    entries.push([idOf(value) ?? "", value]);
    start = end + 1;
  }
  if (entries.length + skipped !== count)
    throw new Error(
      `it holds ${entries.length + skipped} records where its header says ${count}: it was cut or added to`,
    );
  return { entries, skipped, bytes: bytes.length };
}

/** The record count a header line names, or undefined when it is not this format's header. */
function headerCount(line: string): number | undefined {
  let header: unknown;
  try {
    header = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isPlainObject(header) || header.shard !== FORMAT.shard || header.version !== FORMAT.version)
    return undefined;
  const { records } = header;
  return typeof records === "number" && Number.isSafeInteger(records) && records >= 0 ? records : undefined;
}
