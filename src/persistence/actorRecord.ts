import { A2AError } from "../errors/A2AError.js";
import { errorText } from "./DurableJsonFile.js";
import { partsLine, recordParts, snapshotOutline, storedRecord } from "./recordLine.js";
import { isPlainObject, recordProblems } from "./recordShape.js";

export { isPlainObject };

export type ActorStatus = "active" | "done" | "error";

/** One persisted actor: what a host needs to restore it and re-arm its delays. */
export interface ActorRecord {
  id: string;
  machineId: string;
  machineVersion: number;
  /** The actor's persisted snapshot (`getPersistedSnapshot()`), JSON only. */
  snapshot: unknown;
  /**
   * The actor's pending XState delayed events (`after` transitions, delayed `raise`/`sendTo`), in its
   * own tree, by wall-clock due time: XState keeps them in memory only, so the host re-schedules them.
   */
  delayed?: DelayedEventRecord[];
  status: ActorStatus;
  updatedAt: number;
  meta?: Record<string, unknown>;
}

/** One pending XState delayed event of a stored actor tree. */
export interface DelayedEventRecord {
  /** XState's id for it (the `after` event's id, or a delayed action's `id`): cancelling uses it. */
  id: string;
  /** Who scheduled it and who receives it, as child-id paths from the root actor ([] is the root). */
  source: string[];
  target: string[];
  /** The event to deliver (for `after`, `xstate.after.<delay>.<state id>`), JSON only. */
  event: { type: string; [key: string]: unknown };
  dueAt: number;
  /**
   * false: `cancel(id)` no longer reaches it. XState's scheduler keeps one event per id and source: a
   * second one scheduled under the id takes the slot (the first one still fires), and the first one's
   * delivery empties it.
   */
  cancellable?: false;
}

/** A record the store will not take (put) — the message names the id and each problem. */
export class InvalidActorRecordError extends A2AError {
  override readonly code: string = "INVALID_ACTOR_RECORD";
  override readonly name: string = "InvalidActorRecordError";

  constructor(
    readonly id: string | undefined,
    readonly problem: string,
  ) {
    super(
      `snapshot store: record ${id === undefined ? "(without an id)" : JSON.stringify(id)} is invalid: ${problem}`,
    );
  }
}

/** A put of actors another process owns now (or this one's lease lapsed): the batch changed nothing. */
export class ActorTakenOverError extends InvalidActorRecordError {
  override readonly code = "ACTOR_TAKEN_OVER";
  override readonly name = "ActorTakenOverError";

  constructor(readonly ids: readonly string[]) {
    super(
      ids.length === 1 ? ids[0] : undefined,
      `${ids.length === 1 ? "it" : ids.join(", ")} may not be written by this process: another process owns it, or this process's lease lapsed`,
    );
  }
}

/** What makes a stored record usable: its machine's current version and how older ones are migrated. */
export interface ActorRecordRules {
  machineVersions: Record<string, number>;
  migrations?: Record<string, (snapshot: unknown, fromVersion: number) => unknown>;
  /**
   * At open: a problem text when a (migrated) snapshot cannot be restored by its machine. It judges the
   * snapshot by its state (status, value, children), not its context: it may be given the snapshot's
   * outline, which leaves out every `context` (recordLine.ts).
   */
  validateSnapshot?: (machineId: string, snapshot: unknown) => string | undefined;
}

/** Own copies of the rules' maps: a caller changing its objects later does not change what is valid. */
export function ownRules<T extends ActorRecordRules>(rules: T): T {
  const { machineVersions, migrations } = rules;
  return {
    ...rules,
    machineVersions: { ...machineVersions },
    ...(migrations === undefined ? {} : { migrations: { ...migrations } }),
  };
}

export type CheckedRecord =
  { ok: true; record: ActorRecord; fromVersion?: number } | { ok: false; problem: string };

/** A record migrated to its machine's current version, as a store's open report lists it. */
export interface MigratedRecord {
  id: string;
  machineId: string;
  fromVersion: number;
  toVersion: number;
}

/** Validates a record stored under `key`; `stored` (read at open): migrates an older one (into `migrated`) and runs validateSnapshot. */
export function checkActorRecord(
  key: string,
  value: unknown,
  rules: ActorRecordRules,
  stored: boolean,
  migrated?: MigratedRecord[],
): CheckedRecord {
  const parsed = parseRecord(key, value);
  if (!("record" in parsed)) return { ok: false, problem: parsed.problem };
  const { record } = parsed;
  const { machineId, machineVersion } = record;
  const expected = currentVersion(rules.machineVersions, machineId);
  if (expected === undefined) {
    const known = Object.keys(rules.machineVersions).join(", ") || "none";
    return { ok: false, problem: `unknown machine ${JSON.stringify(machineId)} (known: ${known})` };
  }
  if (machineVersion === expected) return stored ? restorable(record, rules) : { ok: true, record };
  const versions = otherVersion(machineId, expected, machineVersion);
  const migration = rules.migrations?.[machineId];
  if (!stored) return { ok: false, problem: versions };
  if (migration === undefined) return { ok: false, problem: `${versions} and no migration is registered` };
  let snapshot: unknown;
  try {
    snapshot = migration(record.snapshot, machineVersion);
    if (snapshot !== undefined) snapshot = JSON.parse(JSON.stringify(snapshot));
  } catch (error) {
    return { ok: false, problem: `${versions} and the migration failed: ${errorText(error)}` };
  }
  if (snapshot === undefined)
    return { ok: false, problem: `${versions} and the migration cannot convert it` };
  const checked = restorable({ ...record, machineVersion: expected, snapshot }, rules);
  if (!checked.ok) return checked;
  migrated?.push({ id: key, machineId, fromVersion: machineVersion, toVersion: expected });
  return { ...checked, fromVersion: machineVersion };
}

/** A value stored under `key` as a record, or what makes it none (its shape's problems, another id). */
function parseRecord(key: string, value: unknown): { record: ActorRecord } | { problem: string } {
  const problems = recordProblems(value);
  if (problems.length > 0) return { problem: problems.join("; ") };
  const record = value as ActorRecord;
  if (record.id !== key) return { problem: `its id ${JSON.stringify(record.id)} differs from its key` };
  return { record };
}

/** What a running store will do with a record of an unknown machine, or of another version. */
export interface RecordFate {
  unknown: string;
  otherVersion: string;
}

/**
 * A stored record as a read-only reader (status) sees it: a problem when it is unusable; else the
 * record, with a problem (and `fate`) when its machine or version is not the current one.
 */
export function inspectRecord(
  key: string,
  value: unknown,
  machineVersions: Record<string, number> | undefined,
  fate: RecordFate,
): { record: ActorRecord; problem?: string } | { record?: undefined; problem: string } {
  const parsed = parseRecord(key, value);
  if (!("record" in parsed) || machineVersions === undefined) return parsed;
  const { record } = parsed;
  const machine = JSON.stringify(record.machineId);
  const expected = currentVersion(machineVersions, record.machineId);
  if (expected === undefined) return { record, problem: `unknown machine ${machine}: ${fate.unknown}` };
  if (expected === record.machineVersion) return parsed;
  const versions = otherVersion(record.machineId, expected, record.machineVersion);
  return { record, problem: `${versions}: ${fate.otherVersion}` };
}

const currentVersion = (versions: Record<string, number>, machineId: string) =>
  Object.hasOwn(versions, machineId) ? versions[machineId] : undefined;
const otherVersion = (machineId: string, expected: number, got: number) =>
  `machine ${JSON.stringify(machineId)} is at version ${expected}, the snapshot is version ${got}`;

/** A record as a store keeps it when it is put, and its JSON text: what the store writes, made once. */
export interface RecordForPut {
  record: ActorRecord;
  text: string;
}

/**
 * What a store keeps of a record put now: a JSON copy (what a restart reads back), checked by `rules`,
 * and the text it was copied through.
 * @throws InvalidActorRecordError naming the record and what is wrong.
 */
export function recordForPut(record: ActorRecord, rules: ActorRecordRules): RecordForPut {
  return checkedCopy(record, rules, () => jsonCopy(record));
}

/**
 * As recordForPut, for a store that writes record lines (recordLine.ts): the text is the record's line,
 * and the copy is read back from its parts, its snapshot kept as text.
 * @throws InvalidActorRecordError naming the record and what is wrong.
 */
export function lineForPut(record: ActorRecord, rules: ActorRecordRules): RecordForPut {
  return checkedCopy(record, rules, () => {
    const parts = recordParts(record);
    if (parts === undefined) return jsonCopy(record);
    const text = partsLine(parts);
    const { record: head, outline, snapshot } = parts;
    return { text, copy: outline === undefined ? JSON.parse(text) : storedRecord(head, outline, snapshot) };
  });
}

function jsonCopy(record: ActorRecord): { text: string; copy: unknown } {
  const text = JSON.stringify(record);
  return { text, copy: JSON.parse(text) as unknown };
}

function checkedCopy(
  record: ActorRecord,
  rules: ActorRecordRules,
  copyOf: () => { text: string; copy: unknown },
): RecordForPut {
  let copied: { text: string; copy: unknown };
  try {
    copied = copyOf();
  } catch (error) {
    throw new InvalidActorRecordError(idOf(record), `it is not JSON data (${errorText(error)})`);
  }
  const checked = checkActorRecord(idOf(record) ?? "", copied.copy, rules, false);
  if (!checked.ok) throw new InvalidActorRecordError(idOf(record), checked.problem);
  return { record: checked.record, text: copied.text };
}

function restorable(record: ActorRecord, rules: ActorRecordRules): CheckedRecord {
  let problem: string | undefined;
  try {
    problem = rules.validateSnapshot?.(record.machineId, snapshotOutline(record));
  } catch (error) {
    problem = `the snapshot check failed: ${errorText(error)}`;
  }
  return problem === undefined
    ? { ok: true, record }
    : { ok: false, problem: `its snapshot cannot be restored: ${problem}` };
}

/** Whether a journal line replaces a file's copy: not when that is newer or the same (folded in already). */
export function journalCopyWins(line: ActorRecord, held: ActorRecord | undefined): boolean {
  if (held === undefined || newerRecord(line, held)) return true;
  // Only copies of one time can be the same: a crash during a fold leaves thousands of them.
  if (newerRecord(held, line)) return false;
  try {
    return !sameJson(held, line);
  } catch {
    return true; // a stored snapshot that is not JSON (CorruptSnapshotError): the journal's line is the later
  }
}

/**
 * Whether two JSON values hold the same data (object keys in any order). Written out: comparing their
 * JSON.stringify texts, or util.isDeepStrictEqual, took ~5× as long over 100,000 records.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const key in x) {
    keys += 1;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
  }
  for (const _ in y) keys -= 1;
  return keys === 0;
}

/** What tells two copies of one record apart in time. */
export type RecordTime = Pick<ActorRecord, "updatedAt" | "status">;

/** Which of two copies of one record to keep: the later update; on a tie the finished one (finishing is final). */
export function newerRecord(a: RecordTime, b: RecordTime): boolean {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt > b.updatedAt;
  return a.status !== "active" && b.status === "active";
}

export function idOf(record: unknown): string | undefined {
  return isPlainObject(record) && typeof record.id === "string" ? record.id : undefined;
}

/**
 * The id a record's line begins with, `{"id":"<id>"` (the stores write records id first), read from
 * the line's bytes without decoding or parsing it: a reader that wants some ids skips the other lines
 * unparsed. Undefined when the line begins otherwise or the id holds an escape or a character beyond
 * ASCII: such a line must be parsed to know its id. Byte by byte: a Buffer.toString call per line
 * cost twice as much.
 */
export function leadingId(bytes: Uint8Array, start = 0, end = bytes.length): string | undefined {
  for (let k = 0; k < ID_PREFIX.length; k++) if (bytes[start + k] !== ID_PREFIX[k]) return undefined;
  let id = "";
  for (let at = start + ID_PREFIX.length; at < end; at++) {
    const byte = bytes[at] as number;
    if (byte === 0x22) return id;
    if (byte === 0x5c || byte >= 0x80) return undefined;
    id += String.fromCharCode(byte);
  }
  return undefined;
}

const ID_PREFIX = Buffer.from('{"id":"', "utf8");

/**
 * The time a record's line begins with after its id, `{"id":"<id>","updatedAt":<ms>,"status":"<status>"`
 * (the stores write records in that order), read from the line's bytes as leadingId reads the id: a
 * replay skips a line that an already read copy supersedes (newerRecord) without parsing it.
 * Undefined when the line begins otherwise: it must be parsed.
 */
export function leadingTime(bytes: Uint8Array, start = 0, end = bytes.length): RecordTime | undefined {
  let at = expect(bytes, start, end, ID_PREFIX);
  if (at < 0) return undefined;
  while (at < end && bytes[at] !== 0x22) {
    if (bytes[at] === 0x5c) return undefined;
    at++;
  }
  at = expect(bytes, at + 1, end, UPDATED_AT);
  if (at < 0) return undefined;
  let updatedAt = 0;
  const digits = at;
  for (; at < end && at - digits <= MAX_TIME_DIGITS; at++) {
    const byte = bytes[at] as number;
    if (byte < 0x30 || byte > 0x39) break;
    updatedAt = updatedAt * 10 + (byte - 0x30);
  }
  if (at === digits || at - digits > MAX_TIME_DIGITS) return undefined;
  at = expect(bytes, at, end, STATUS);
  if (at < 0) return undefined;
  const found = STATUSES.find(({ text }) => expect(bytes, at, end, text) >= 0);
  return found === undefined ? undefined : { updatedAt, status: found.status };
}

/** The offset after `word` when the bytes at `at` are `word`, else -1. */
function expect(bytes: Uint8Array, at: number, end: number, word: Uint8Array): number {
  if (at + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (bytes[at + k] !== word[k]) return -1;
  return at + word.length;
}

const UPDATED_AT = Buffer.from(',"updatedAt":', "utf8");
const STATUS = Buffer.from(',"status":"', "utf8");
const STATUSES = (["active", "done", "error"] satisfies ActorStatus[]).map((status) => ({
  status,
  text: Buffer.from(`${status}"`, "utf8"),
}));
/** A millisecond time of up to 15 digits is an exact integer (Number.MAX_SAFE_INTEGER has 16). */
const MAX_TIME_DIGITS = 15;

export function describeId(record: unknown): string {
  const id = idOf(record);
  return id === undefined ? "a record without an id" : `record ${JSON.stringify(id)}`;
}
