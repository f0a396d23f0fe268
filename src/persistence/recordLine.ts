import { A2AError } from "../errors/A2AError.js";
import type { ActorRecord } from "./actorRecord.js";
import { errorText } from "./DurableJsonFile.js";
import { isPlainObject } from "./recordShape.js";
import type { FileSpan, SnapshotFile } from "./SnapshotFile.js";

/**
 * A record's line in the lowdb store's files (live shards, journal, archive): the record as JSON, or,
 * when its snapshot is large, three parts separated by tabs: the record without its snapshot, the
 * snapshot's outline (the snapshot without any `context`, its children's neither), and the snapshot.
 * JSON text holds no raw tab, so the parts split unambiguously.
 *
 * A reader parses the first two parts and leaves the snapshot where it is: a start reads what it needs
 * (ids, due times, meta, the states to check, whether each actor only waits) and a snapshot is read and
 * parsed when it is wanted, once its actor wakes. Parsing whole records took most of a start at 100,000
 * live actors of the runtime, and holding their snapshots' bytes most of what was left.
 */

const TAB = 0x09;

/**
 * Snapshots shorter than this (in JSON characters) are written whole: a small one parses faster than
 * two parts and a getter are made, and its outline would be most of it again. The runtime's
 * collaborations (~1,600) are split; a workflow of a few fields (~300) is not.
 */
const SPLIT_AT = 1_024;

/** A record's line, part by part: JSON texts; no outline when the snapshot is small (written whole). */
export interface RecordParts {
  record: string;
  outline?: string;
  snapshot: string;
}

/** Where a stored record keeps its outline and its snapshot's JSON: a string, or a span of the file it was read from. */
const PARTS = Symbol("record line parts");

interface StoredParts {
  outline: unknown;
  snapshot: string | FileSpan;
}

const partsOf = (record: object): StoredParts | undefined => (record as { [PARTS]?: StoredParts })[PARTS];

/** A stored snapshot whose text is not JSON: the file was damaged after it was written. */
export class CorruptSnapshotError extends A2AError {
  override readonly code = "CORRUPT_SNAPSHOT";
  override readonly name = "CorruptSnapshotError";

  constructor(
    readonly id: string,
    readonly problem: string,
  ) {
    super(`snapshot store: the stored snapshot of actor ${JSON.stringify(id)} is not JSON (${problem})`);
  }
}

/**
 * A stored record's snapshot, parsed anew at each read: the store's record stays its text, and each
 * reader gets its own copy.
 * @throws CorruptSnapshotError when the text is not JSON; StateFileReadError when its file cannot be read.
 */
function readSnapshot(this: ActorRecord): unknown {
  const text = snapshotText(partsOf(this) as StoredParts);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CorruptSnapshotError(String(this.id), errorText(error));
  }
}

/** A snapshot's JSON text, as kept or read from its file now. */
function snapshotText({ snapshot }: StoredParts): string {
  return typeof snapshot === "string" ? snapshot : snapshot.file.read(snapshot).toString("utf8");
}

/**
 * The value of a line's bytes (without its newline): a record in parts comes back with its snapshot
 * unparsed, read through a getter (JSON.stringify, spreading and structuredClone read it too). Given
 * the line alone, so that looking for its tabs never reads past it.
 *
 * With `from` (the file the line is in, kept open, and the line's offset there), the snapshot stays in
 * the file, read again at each read of the record's snapshot: at 100,000 records, copying their bytes
 * out took half of a store's open, and their memory most of what the open left held. Without, it is
 * decoded to a string: `line` is a view of a buffer its reader reuses for the next file (FileReader).
 * @throws SyntaxError when the line is not JSON, or not three parts of it.
 */
export function parseRecordLine(line: Buffer, from?: { file: SnapshotFile; offset: number }): unknown {
  const first = line.indexOf(TAB);
  if (first < 0) return JSON.parse(line.toString("utf8"));
  const second = line.indexOf(TAB, first + 1);
  if (second < 0) throw new SyntaxError("a record line in parts holds two parts, not three");
  const start = second + 1;
  return storedRecord(
    line.toString("utf8", 0, first),
    line.toString("utf8", first + 1, second),
    from === undefined
      ? line.toString("utf8", start)
      : from.file.span(from.offset + start, line.length - start),
  );
}

/**
 * A record read from its parts' JSON, its snapshot kept unparsed.
 * @throws SyntaxError when a part is not JSON, or the first one is not a record without its snapshot.
 */
export function storedRecord(head: string, outline: string, snapshot: string | FileSpan): unknown {
  const record: unknown = JSON.parse(head);
  if (!isPlainObject(record) || Object.hasOwn(record, "snapshot"))
    throw new SyntaxError("the first part of a record line in parts is not a record without its snapshot");
  // A finished actor's outline holds its own output or error: shared by no other record.
  const parts: StoredParts = { outline: frozenOutline(outline, record.status === "active"), snapshot };
  Object.defineProperties(record, {
    snapshot: { get: readSnapshot, enumerable: true },
    [PARTS]: { value: parts },
  });
  return record;
}

/**
 * Parsed outlines of live records by their text. Thousands of live records share a few states, so each
 * state's outline is parsed and held once, and every record in that state holds the same frozen object.
 * Bounded: a machine has few states, and a damaged store may have any number of them.
 */
const outlines = new Map<string, unknown>();
const OUTLINES_KEPT = 1_000;
/** An outline longer than this is parsed for its record alone. */
const OUTLINE_KEPT_CHARS = 4_096;

/** The outline of this JSON text, frozen; when `shared`, the one object every record with this text holds. */
function frozenOutline(text: string, shared: boolean): unknown {
  const known = shared ? outlines.get(text) : undefined;
  if (known !== undefined) return known;
  const outline = deepFreeze(JSON.parse(text) as unknown);
  if (shared && outlines.size < OUTLINES_KEPT && text.length <= OUTLINE_KEPT_CHARS)
    outlines.set(text, outline);
  return outline;
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}

/**
 * A record's line in parts: each text made once, the snapshot's too (a small one is then written whole
 * from them); undefined for a value that is not a record with a JSON snapshot. A stored record's is
 * written from its text, unparsed.
 * @throws what JSON.stringify throws (a BigInt, a cycle).
 */
export function recordParts(record: Readonly<ActorRecord>): RecordParts | undefined {
  if (!isPlainObject(record)) return undefined;
  const parts = partsOf(record);
  let snapshot: string | undefined;
  let outline: string | undefined;
  if (parts !== undefined) {
    snapshot = snapshotText(parts);
    outline = JSON.stringify(parts.outline);
  } else {
    if (record.snapshot === undefined) return undefined;
    snapshot = JSON.stringify(record.snapshot) as string | undefined;
    if (snapshot === undefined) return undefined;
    if (snapshot.length >= SPLIT_AT) outline = JSON.stringify(outlineOf(record.snapshot));
  }
  // Id, time and status first: readers find them from a line's first bytes (leadingId, leadingTime).
  const { id, updatedAt, status, machineId, machineVersion, delayed, meta } = record;
  const head = JSON.stringify({ id, updatedAt, status, machineId, machineVersion, delayed, meta });
  return { record: head, outline, snapshot };
}

/** The line (without its newline) of a record's parts. */
export function partsLine({ record, outline, snapshot }: RecordParts): string {
  if (outline !== undefined) return `${record}\t${outline}\t${snapshot}`;
  // The record as JSON, its snapshot last: the head's fields, then the snapshot's text.
  return `${record.slice(0, -1)}${record === "{}" ? "" : ","}"snapshot":${snapshot}}`;
}

/** The line (without its newline) the store writes for a record. */
export function recordLine(record: Readonly<ActorRecord>): string {
  const parts = recordParts(record);
  return parts === undefined ? JSON.stringify(record) : partsLine(parts);
}

/** Records per piece of a file's text: a few hundred KB, a few ms of JSON.stringify each. */
const RECORDS_PER_PIECE = 200;

/**
 * The lines of `records`, each with its newline, after `head`, in pieces of RECORDS_PER_PIECE records,
 * each made as it is taken: a file's text made at once blocked the event loop for tens of ms at a few
 * thousand records, and for a quarter of a second at 30,000. Records are never changed in place, so
 * later pieces are safe.
 */
export function* recordLinePieces(records: readonly ActorRecord[], head = ""): Generator<string> {
  let piece = head;
  for (let i = 0; i < records.length; i++) {
    piece += `${recordLine(records[i] as ActorRecord)}\n`;
    if ((i + 1) % RECORDS_PER_PIECE === 0) {
      yield piece;
      piece = "";
    }
  }
  if (piece !== "") yield piece;
}

/**
 * What a check of a record's state reads (its status, value, children): a stored record's outline, or
 * the snapshot itself, which holds all of it. Reading it never parses a stored snapshot. A stored
 * record's outline is frozen and shared by every record in the same state: never hand it out.
 */
export function snapshotOutline(record: Readonly<ActorRecord>): unknown {
  const parts = partsOf(record);
  return parts === undefined ? record.snapshot : parts.outline;
}

/** The record's snapshot, for a caller to own and change: a stored record's parsed anew, another's cloned. */
export function ownSnapshot(record: Readonly<ActorRecord>): unknown {
  return partsOf(record) !== undefined ? record.snapshot : structuredClone(record.snapshot);
}

/** A record whose snapshot is a plain value: a stored record's parsed, for a caller to own and change. */
export function plainRecord(record: ActorRecord): ActorRecord {
  return partsOf(record) !== undefined ? { ...record } : record;
}

/**
 * A value as it is kept aside (quarantined): a stored record with its snapshot parsed, or, when its
 * snapshot is damaged, with that snapshot's text, so that nothing read is lost.
 */
export function keptRecord(value: unknown): unknown {
  const parts = isPlainObject(value) ? partsOf(value) : undefined;
  if (parts === undefined) return value;
  try {
    return plainRecord(value as ActorRecord);
  } catch {
    const fields = Object.keys(value as object).filter((key) => key !== "snapshot");
    const kept = Object.fromEntries(fields.map((key) => [key, (value as Record<string, unknown>)[key]]));
    return { ...kept, snapshot: snapshotText(parts) };
  }
}

/** A snapshot without any `context`, in its children's snapshots too. */
function outlineOf(snapshot: unknown): unknown {
  if (!isPlainObject(snapshot)) return snapshot;
  const outline: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(snapshot)) {
    if (key === "context") continue;
    outline[key] = key === "children" && isPlainObject(value) ? childrenOutline(value) : value;
  }
  return outline;
}

function childrenOutline(children: Record<string, unknown>): Record<string, unknown> {
  const outline: Record<string, unknown> = {};
  for (const [id, child] of Object.entries(children))
    outline[id] = isPlainObject(child) ? { ...child, snapshot: outlineOf(child.snapshot) } : child;
  return outline;
}
