import { chmod, copyFile, type FileHandle, mkdir, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { errorCode, errorText, writeFileDurably } from "./DurableJsonFile.js";
import { removeLeftoverTempFiles } from "./leftoverTempFiles.js";
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
  /** The folder holding `state.json` and `changes.ndjson` (created 0700 if missing). */
  dir: string;
  now: () => number;
  onWarning: (message: string) => void;
}

const STATE_FILE = "state.json";
const LOG_FILE = "changes.ndjson";
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/**
 * A keyed state saved as a snapshot (`state.json`) plus an append-only log of changes
 * (`changes.ndjson`, one JSON line per change, fsynced), so a save costs the size of the change, not
 * of the state. `compact()` folds everything into the snapshot and empties the log.
 *
 * Damage is told apart: a last line without its newline is a write that never completed (never
 * acknowledged: ignored); a bad line elsewhere means acknowledged data is damaged, so the log is copied
 * aside (`changes.ndjson.corrupt-<time>`, never deleted), reported, and the valid lines after it kept.
 * A snapshot that is not a JSON state is moved aside the same way and reported.
 *
 * One writer: the caller must not start an `append()` or `compact()` before the previous one settles.
 */
export class ChangeLogFile {
  private size = 0;
  /** A failed append whose partial line could not be cut off: the next append cuts it first. */
  private tornAt: number | undefined;

  private constructor(
    private readonly dir: string,
    private handle: FileHandle | undefined,
  ) {}

  /** Opens the log, folding the snapshot and every valid change; the log is compacted before it returns. */
  static async open(o: ChangeLogOpenOptions): Promise<{ log: ChangeLogFile; state: FoldedState }> {
    await mkdir(o.dir, { recursive: true, mode: DIR_MODE });
    await chmod(o.dir, DIR_MODE);
    // One process holds the state dir: any temp file here is a crashed compaction's.
    await removeLeftoverTempFiles(o.dir);
    const state = await readSnapshot(join(o.dir, STATE_FILE), o);
    await foldLog(join(o.dir, LOG_FILE), state, o);
    const log = new ChangeLogFile(o.dir, undefined);
    try {
      await log.compact(entriesOf(state));
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
    const state = await readSnapshot(join(o.dir, STATE_FILE), reading);
    await foldLog(join(o.dir, LOG_FILE), state, reading);
    return state;
  }

  /** Bytes in the change log since the last compaction. */
  get logBytes(): number {
    return this.size;
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
      for (let written = 0; written < bytes.length;) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written);
        if (bytesWritten <= 0) throw new Error(`${LOG_FILE}: the write made no progress`);
        written += bytesWritten;
      }
      await handle.sync();
    } catch (error) {
      await handle.truncate(start).catch(() => (this.tornAt = start));
      throw error;
    }
    this.size = start + bytes.length;
    return bytes.length;
  }

  /** Writes `entries` as the whole state (temp file, fsync, rename) and then empties the log. */
  async compact(entries: Iterable<Change>): Promise<void> {
    const collections: Record<string, Record<string, unknown>> = {};
    for (const { c, k, v } of entries) (collections[c] ??= {})[k] = v;
    await writeFileDurably(
      join(this.dir, STATE_FILE),
      JSON.stringify({ version: 1, collections }),
      FILE_MODE,
    );
    const handle = await this.appendHandle();
    // The snapshot holds every change now; a crash before this truncate replays them again, harmlessly.
    await handle.truncate(0);
    await handle.sync();
    this.size = 0;
    this.tornAt = undefined;
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
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

async function readSnapshot(file: string, o: Reading): Promise<FoldedState> {
  const state: FoldedState = new Map();
  const text = await readIfPresent(file);
  if (text === undefined) return state;
  let collections: unknown;
  try {
    collections = (JSON.parse(text) as { collections?: unknown }).collections;
  } catch {
    collections = undefined;
  }
  if (!isRecord(collections) || !Object.values(collections).every(isRecord)) {
    if (o.readOnly) {
      o.onWarning(`${file} is not a saved state (not JSON, or no collections)`);
      return state;
    }
    const moved = await quarantineFile(file, o.now());
    o.onWarning(`${file} is not a saved state (not JSON, or no collections); moved it to ${moved}`);
    return state;
  }
  for (const [c, entries] of Object.entries(collections))
    state.set(c, new Map(Object.entries(entries as Record<string, unknown>)));
  return state;
}

async function foldLog(file: string, state: FoldedState, o: Reading): Promise<void> {
  const text = await readIfPresent(file);
  if (text === undefined || text === "") return;
  const lines = text.split("\n");
  // A last line without its newline was still being written: never acknowledged.
  const torn = lines.pop() !== "";
  const bad: number[] = [];
  lines.forEach((line, i) => {
    const change = parseChange(line);
    if (change === undefined) bad.push(i + 1);
    else if (!("v" in change)) state.get(change.c)?.delete(change.k);
    else {
      const entries = state.get(change.c) ?? new Map<string, unknown>();
      entries.set(change.k, change.v);
      state.set(change.c, entries);
    }
  });
  if (torn)
    o.onWarning(`${file}: ignored an incomplete last line (a write cut off before it was acknowledged)`);
  if (bad.length === 0) return;
  if (o.readOnly) {
    o.onWarning(`${file} is damaged: line(s) ${bad.join(", ")} are not changes`);
    return;
  }
  const copy = await freeQuarantineName(file, o.now());
  await copyFile(file, copy);
  await chmod(copy, FILE_MODE);
  o.onWarning(
    `${file} is damaged: line(s) ${bad.join(", ")} are not changes, so saved data is missing; ` +
      `kept the valid lines and a copy of the whole log in ${copy}`,
  );
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
