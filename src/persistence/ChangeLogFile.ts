import { chmod, copyFile, type FileHandle, mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { wholeLines } from "./archive/archiveFormat.js";
import { SHARD_COUNT, shardFilesIn, shardOf, writeShard } from "./changeLogShards.js";
import { errorCode, errorText, writeAll } from "./DurableJsonFile.js";
import { removeLeftoverTempFiles } from "./stateDirFiles.js";
import { freeQuarantineName, quarantineFile } from "./quarantine.js";

/** One change to a keyed collection: `v` is the entry's new value; without `v` the entry is deleted. */
export interface Change {
  c: string;
  k: string;
  v?: unknown;
}

/** What a change log folds to: collection → key → value. */
export type FoldedState = Map<string, Map<string, unknown>>;

export interface ChangeLogOpenOptions {
  /** The folder holding the snapshot files and `changes.ndjson` (created 0700 if missing). */
  dir: string;
  now: () => number;
  onWarning: (message: string) => void;
}

const LOG_FILE = "changes.ndjson";
const FILE_MODE = 0o600;
/** Entries a fold reads between two turns of the event loop (a few milliseconds' work). */
const YIELD_EVERY = 10_000;
const DIR_MODE = 0o700;

/**
 * A keyed state saved as a snapshot spread over shard files (`state-00.json` … `state-63.json`, each
 * key's shard a hash of the key) plus an append-only log of changes (`changes.ndjson`, one JSON line
 * per change, fsynced), so a save costs the size of the change, not of the state. `fold()` rewrites
 * only the shards the log touched, one file at a time, then empties the log; `compact()` rewrites
 * every shard. A crash at any point loses nothing acknowledged: the log is emptied only once every
 * shard it touched is durably written, and replaying lines already folded in changes nothing.
 *
 * Damage is told apart: a last line without its newline is a write that never completed (never
 * acknowledged: ignored); a bad line elsewhere means acknowledged data is damaged, so the log is copied
 * aside (`changes.ndjson.corrupt-<time>`, never deleted), reported, and the valid lines after it kept.
 * A snapshot file that is not a JSON state is moved aside the same way and reported.
 *
 * One writer: the caller must not start an `append()`, `fold()` or `compact()` before the previous
 * one settles.
 */
export class ChangeLogFile {
  private size = 0;
  /** A failed append whose partial line could not be cut off: the next append cuts it first. */
  private tornAt: number | undefined;
  /** Shards whose file lacks changes that are in the log. */
  private readonly dirty = new Set<number>();
  /** Bytes each shard file holds (0: no file). */
  private readonly shardBytes = new Map<number, number>();

  private constructor(
    private readonly dir: string,
    private handle: FileHandle | undefined,
  ) {}

  /**
   * Opens the log, folding the snapshot and every valid change. The log is kept as it is (its changes
   * are folded in by a later `fold()`), but for damage, which is folded at once.
   */
  static async open(o: ChangeLogOpenOptions): Promise<{ log: ChangeLogFile; state: FoldedState }> {
    await mkdir(o.dir, { recursive: true, mode: DIR_MODE });
    await chmod(o.dir, DIR_MODE);
    // One process holds the state dir: any temp file here is a crashed compaction's.
    await removeLeftoverTempFiles(o.dir);
    const log = new ChangeLogFile(o.dir, undefined);
    const { state, shardBytes } = await readSnapshots(o);
    for (const [n, bytes] of shardBytes) log.shardBytes.set(n, bytes);
    const folded = await foldLog(join(o.dir, LOG_FILE), state, o);
    for (const key of folded.keys) log.dirty.add(shardOf(key));
    log.size = folded.validBytes;
    try {
      // A damaged log's valid lines are folded in (a copy of it is kept).
      if (folded.damaged) await log.fold(entriesOf(state));
      else if (folded.validBytes < folded.bytes) {
        // Cut off now, so the next append starts on a clean line and the next start warns no more.
        const handle = await log.appendHandle();
        await handle.truncate(folded.validBytes);
        await handle.sync();
      }
    } catch (error) {
      await log.close();
      throw error;
    }
    return { log, state };
  }

  /**
   * The folded state as it is on disk, for a reader beside the process that holds the log: nothing is
   * moved, copied or cut; damage is only reported through `onWarning`.
   */
  static async read(o: ChangeLogOpenOptions): Promise<FoldedState> {
    const reading = { ...o, readOnly: true };
    const { state } = await readSnapshots(reading);
    await foldLog(join(o.dir, LOG_FILE), state, reading);
    return state;
  }

  /** Bytes in the change log since the last fold. */
  get logBytes(): number {
    return this.size;
  }

  /** Bytes in the snapshot files, as last read or written. */
  get stateBytes(): number {
    let bytes = 0;
    for (const n of this.shardBytes.values()) bytes += n;
    return bytes;
  }

  /**
   * Appends the changes as one write and fsyncs it; resolves with the bytes written once durable.
   * A failed or short write is cut back off, so the log never keeps half a change; then it rejects.
   */
  async append(changes: readonly Change[]): Promise<number> {
    if (changes.length === 0) return 0;
    const handle = await this.appendHandle();
    const bytes = Buffer.from(changes.map((change) => `${JSON.stringify(change)}\n`).join(""), "utf8");
    const start = this.size;
    try {
      if (this.tornAt !== undefined) {
        await handle.truncate(this.tornAt);
        this.tornAt = undefined;
      }
      await writeAll(handle, bytes, null);
      await handle.sync();
    } catch (error) {
      await handle.truncate(start).catch(() => (this.tornAt = start));
      throw error;
    }
    this.size = start + bytes.length;
    for (const change of changes) this.dirty.add(shardOf(change.k));
    return bytes.length;
  }

  /**
   * Folds the log into the snapshot: `entries` is the whole state; only the shards the log touched are
   * rewritten, one file after another, then the log is emptied. The event loop runs while `entries`
   * is read, so it may be a lazy view of a state that keeps changing: an entry read newer than the log
   * is harmless as long as that change is appended after the fold (a replay then sets it again), and
   * an entry without a value is skipped. `unlogged`: keys of changes made to `entries` but never
   * appended (too many to log), whose shards are rewritten too.
   */
  async fold(entries: Iterable<Change>, unlogged: Iterable<string> = []): Promise<void> {
    const shards = new Set(this.dirty);
    for (const key of unlogged) shards.add(shardOf(key));
    await this.writeShards(entries, shards);
  }

  /** Writes `entries` as the whole state (every shard file) and then empties the log. */
  async compact(entries: Iterable<Change>): Promise<void> {
    await this.writeShards(entries, undefined);
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  /** Rewrites the shards `only` names (all when undefined), then empties the log. */
  private async writeShards(entries: Iterable<Change>, only: ReadonlySet<number> | undefined): Promise<void> {
    // References only: each shard's object is built just before its write, so the state is never
    // held twice over, and the event loop runs between the files.
    const byShard = new Map<number, Change[]>();
    let read = 0;
    for (const change of entries) {
      // A state of a million entries is read in pieces, not in one block of the event loop.
      if (++read % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
      const n = shardOf(change.k);
      if (only !== undefined && !only.has(n)) continue;
      const list = byShard.get(n);
      if (list === undefined) byShard.set(n, [change]);
      else list.push(change);
    }
    const shards = only ?? new Set(Array.from({ length: SHARD_COUNT }, (_, n) => n));
    for (const n of shards) {
      const list = byShard.get(n) ?? [];
      // An empty shard that has no file is left as it is.
      if (list.length === 0 && (this.shardBytes.get(n) ?? 0) === 0) continue;
      const collections: Record<string, Array<[string, unknown]>> = {};
      for (const { c, k, v } of list) if (v !== undefined) (collections[c] ??= []).push([k, v]);
      this.shardBytes.set(n, await writeShard(this.dir, n, collections, FILE_MODE));
      byShard.delete(n);
    }
    const handle = await this.appendHandle();
    // The shards hold every change now; a crash before this truncate replays them again, harmlessly.
    await handle.truncate(0);
    await handle.sync();
    this.size = 0;
    this.tornAt = undefined;
    this.dirty.clear();
  }

  private async appendHandle(): Promise<FileHandle> {
    this.handle ??= await open(join(this.dir, LOG_FILE), "a", FILE_MODE);
    return this.handle;
  }
}

/** The folded state as changes (each a put), in a stable order. */
export function entriesOf(state: FoldedState): Change[] {
  return [...state].flatMap(([c, entries]) => [...entries].map(([k, v]) => ({ c, k, v })));
}

/** Options of a read; `readOnly`: report damage without setting anything aside. */
type Reading = ChangeLogOpenOptions & { readOnly?: boolean };

/** The snapshot: every shard file, folded. */
async function readSnapshots(o: Reading): Promise<{ state: FoldedState; shardBytes: Map<number, number> }> {
  const state: FoldedState = new Map();
  const shardBytes = new Map<number, number>();
  for (const [n, file] of await shardFilesIn(o.dir)) {
    const text = await readIfPresent(file);
    if (text === undefined) continue;
    if (await readSnapshot(file, text, state, o)) shardBytes.set(n, Buffer.byteLength(text));
  }
  return { state, shardBytes };
}

/**
 * Folds one shard file's text into `state`; false when it is not a saved state (then reported).
 * A shard holds each collection as `[key, value]` pairs (they parse faster than an object's keys).
 */
async function readSnapshot(file: string, text: string, state: FoldedState, o: Reading): Promise<boolean> {
  let collections: unknown;
  try {
    collections = (JSON.parse(text) as { collections?: unknown }).collections;
  } catch {
    collections = undefined;
  }
  if (!isRecord(collections) || !Object.values(collections).every(isPairs)) {
    if (o.readOnly) {
      o.onWarning(`${file} is not a saved state (not JSON, or no collections)`);
      return false;
    }
    const moved = await quarantineFile(file, o.now());
    o.onWarning(`${file} is not a saved state (not JSON, or no collections); moved it to ${moved}`);
    return false;
  }
  for (const [c, entries] of Object.entries(collections)) {
    let folded = state.get(c);
    if (folded === undefined) state.set(c, (folded = new Map()));
    for (const [k, v] of entries as Array<[string, unknown]>) folded.set(k, v);
  }
  return true;
}

function isPairs(value: unknown): value is Array<[string, unknown]> {
  return (
    Array.isArray(value) &&
    value.every((pair) => Array.isArray(pair) && pair.length === 2 && typeof pair[0] === "string")
  );
}

/**
 * Folds the log's valid lines into `state`. Returns the keys they touch, the log's bytes and the
 * bytes before a torn last line, and whether a line was damaged.
 */
async function foldLog(
  file: string,
  state: FoldedState,
  o: Reading,
): Promise<{ keys: Set<string>; bytes: number; validBytes: number; damaged: boolean }> {
  const keys = new Set<string>();
  const text = await readIfPresent(file);
  if (text === undefined || text === "") return { keys, bytes: 0, validBytes: 0, damaged: false };
  const end = text.lastIndexOf("\n") + 1;
  const bad: number[] = [];
  for (const { line, lineNo } of wholeLines(text)) {
    const change = parseChange(line);
    if (change === undefined) {
      bad.push(lineNo);
      continue;
    }
    keys.add(change.k);
    if (!("v" in change)) state.get(change.c)?.delete(change.k);
    else {
      const entries = state.get(change.c) ?? new Map<string, unknown>();
      entries.set(change.k, change.v);
      state.set(change.c, entries);
    }
  }
  const folded = {
    keys,
    bytes: Buffer.byteLength(text),
    validBytes: Buffer.byteLength(text.slice(0, end)),
    damaged: bad.length > 0,
  };
  // A last line without its newline was still being written: never acknowledged.
  if (end < text.length)
    o.onWarning(`${file}: ignored an incomplete last line (a write cut off before it was acknowledged)`);
  if (bad.length === 0) return folded;
  if (o.readOnly) {
    o.onWarning(`${file} is damaged: line(s) ${bad.join(", ")} are not changes`);
    return folded;
  }
  const copy = await freeQuarantineName(file, o.now());
  await copyFile(file, copy);
  await chmod(copy, FILE_MODE);
  o.onWarning(
    `${file} is damaged: line(s) ${bad.join(", ")} are not changes, so saved data is missing; ` +
      `kept the valid lines and a copy of the whole log in ${copy}`,
  );
  return folded;
}

function parseChange(line: string): Change | undefined {
  try {
    const json: unknown = JSON.parse(line);
    if (isRecord(json) && typeof json.c === "string" && typeof json.k === "string")
      return "v" in json ? { c: json.c, k: json.k, v: json.v } : { c: json.c, k: json.k };
  } catch {
    // Not JSON: reported by the caller with the line number.
  }
  return undefined;
}

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw new Error(`cannot read ${file}: ${errorText(error)}`, { cause: error });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
