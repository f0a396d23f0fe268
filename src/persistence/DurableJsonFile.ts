import { readFileSync } from "node:fs";
import { type FileHandle, open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import type { Adapter } from "lowdb";
import { A2AError } from "../errors/A2AError.js";

/** A state file exists but does not hold what it should (truncated, not JSON, wrong shape). */
export class CorruptStateFileError extends A2AError {
  override readonly code = "CORRUPT_STATE_FILE";
  override readonly name = "CorruptStateFileError";

  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`corrupt state file ${file}: ${reason}`);
  }
}

/** A state file could not be read for a reason other than its absence (permissions, a directory in its place). */
export class StateFileReadError extends A2AError {
  override readonly code = "STATE_FILE_UNREADABLE";
  override readonly name = "StateFileReadError";
  /** What the file system said. */
  declare readonly cause: unknown;

  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(`cannot read state file ${file}: ${errorText(cause)}`, { cause });
  }
}

export interface DurableJsonFileOptions<T> {
  /** The file's bytes as a value, when the file is not one JSON text; a throw reports the file as corrupt. */
  decode?: (bytes: Buffer) => unknown;
  /** Checks the parsed JSON and returns it typed; a throw makes `read()` report the file as corrupt. */
  parse?: (json: unknown) => T;
  /** Called after each completed write with the number of bytes written (benchmarks, stats). */
  onWrite?: (bytes: number) => void;
  /**
   * `data`'s JSON text in pieces, each written before the next is made, so the event loop runs between
   * them. Called synchronously at `write()`; the pieces must not depend on later changes to `data`.
   */
  chunks?: (data: T) => Iterable<string>;
}

/**
 * A lowdb adapter that survives power loss (lowdb's `JSONFile` never fsyncs, typicode/lowdb#549): see
 * writeFileDurably. One `write()` of a file at a time: the temp name is per process.
 */
export class DurableJsonFile<T> implements Adapter<T> {
  constructor(
    readonly file: string,
    private readonly options: DurableJsonFileOptions<T> = {},
  ) {}

  /** The parsed file, or null when it does not exist; its bytes read by `bytesOf` (a caller's own buffer). */
  async read(bytesOf: (path: string) => Buffer = readFileSync): Promise<T | null> {
    let bytes: Buffer;
    try {
      bytes = bytesOf(this.file);
    } catch (error) {
      if (errorCode(error) === "ENOENT") return null;
      throw new StateFileReadError(this.file, error);
    }
    let json: unknown;
    try {
      json = (this.options.decode ?? decodeJson)(bytes);
    } catch (error) {
      throw new CorruptStateFileError(this.file, bytes.length === 0 ? "the file is empty" : errorText(error));
    }
    if (!this.options.parse) return json as T;
    try {
      return this.options.parse(json);
    } catch (error) {
      throw new CorruptStateFileError(this.file, errorText(error));
    }
  }

  async write(data: T): Promise<void> {
    // Serialised before the first await: later changes to `data` do not leak into this write.
    const text = this.options.chunks?.(data) ?? JSON.stringify(data);
    const bytes = await writeFileDurably(this.file, text);
    this.options.onWrite?.(bytes);
  }
}

/**
 * One JSON text. Decoded from bytes in one go: `readFile(file, "utf8")` decodes in 512 KB pieces into a
 * rope that JSON.parse must flatten first, about twice as slow for a file of megabytes.
 */
function decodeJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw new Error(`not valid JSON (${errorText(error)})`, { cause: error });
  }
}

/**
 * Writes `<file>.tmp-<pid>`, fsyncs it, renames it over `file` and fsyncs the directory: a crash
 * leaves the old file or the new one, never a mix. `text` may come in pieces. Resolves the bytes written.
 */
export async function writeFileDurably(file: string, text: string | Iterable<string | Uint8Array>) {
  let bytes = 0;
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    // Owner-only: state files hold message text.
    const handle = await open(tmp, "w", 0o600);
    try {
      // writeFile writes all of each piece (it loops over short writes) from the current position.
      for (const piece of typeof text === "string" ? [text] : text) {
        await handle.writeFile(piece);
        bytes += typeof piece === "string" ? Buffer.byteLength(piece) : piece.byteLength;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(file));
  return bytes;
}

/** Writes all of `bytes` at `position`, looping over short writes. */
export async function writeAll(
  handle: FileHandle,
  bytes: Uint8Array,
  position: number | null,
): Promise<void> {
  for (let done = 0; done < bytes.length;) {
    const at = position === null ? null : position + done; // null: at the end of a file opened to append
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, at);
    if (bytesWritten <= 0) throw new Error(`the write stopped after ${done} of ${bytes.length} bytes`);
    done += bytesWritten;
  }
}

/** fsync a directory so that a rename or unlink in it survives power loss. */
export async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (error) {
    // Some platforms and file systems cannot open or fsync a directory; the data file itself is synced.
    const code = errorCode(error);
    if (code !== "EISDIR" && code !== "EINVAL" && code !== "EPERM" && code !== "ENOTSUP") throw error;
  } finally {
    await handle?.close();
  }
}

export function errorCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}
