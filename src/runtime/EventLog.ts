import { type FileHandle, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { errorCode, writeAll } from "../persistence/DurableJsonFile.js";
import {
  type A2AEvent,
  InvalidInputError,
  displayText,
  requireNonEmptyText,
  requireWholeNumber,
} from "../policies/index.js";

export const EVENT_LOG_FILE = "coordination-events.ndjson";

export interface EventLogOptions {
  /** The state directory; created when missing. */
  dir: string;
  /** The live file rotates before an append would take it past this size. */
  maxBytes?: number;
  /** How many rotated files (`.1` newest … `.keep` oldest) are kept; 0 keeps none. */
  keep?: number;
  onWarning?: (message: string) => void;
}

interface PendingLine {
  text: string;
  bytes: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * The append-only `coordination-events.ndjson`: one JSON event per line, rotated at a size limit.
 * Appends arriving while a write is in flight share the next write (group commit). fsync only on
 * flush() and close(): the log is an audit trail nothing recovers state from, so a power cut may lose
 * its last lines rather than every event paying the disk's sync latency.
 */
export class EventLog {
  private readonly pending: PendingLine[] = [];
  private draining: Promise<void> | undefined;
  private unsynced = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** maxBytes, or further on after a failed rotation, so a lasting failure warns once per maxBytes. */
  private rotateAt: number;

  private constructor(
    readonly file: string,
    private handle: FileHandle,
    private fileBytes: number,
    /** The live file ends in a torn line: the next write starts with a newline. */
    private needsNewline: boolean,
    private readonly maxBytes: number,
    private readonly keep: number,
    private readonly warn: (message: string) => void,
  ) {
    this.rotateAt = maxBytes;
  }

  static async open(options: EventLogOptions): Promise<EventLog> {
    const dir = requireNonEmptyText("EventLog.open", "dir", options.dir);
    const maxBytes = requireWholeNumber("EventLog.open", "maxBytes", options.maxBytes ?? 10 * 1024 * 1024, 1);
    const keep = requireWholeNumber("EventLog.open", "keep", options.keep ?? 5, 0);
    const warn = options.onWarning ?? ((message: string) => console.warn(`a2a-statecharts: ${message}`));
    await mkdir(dir, { recursive: true });
    const file = join(dir, EVENT_LOG_FILE);
    const handle = await open(file, "a+", 0o600); // holds message text: owner only
    try {
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      if (size > 0) await handle.read(last, 0, 1, size - 1);
      const needsNewline = size > 0 && last[0] !== 0x0a;
      if (needsNewline) {
        warn(`${file} does not end with a newline (a write cut short?); the next event starts on a new line`);
      }
      return new EventLog(file, handle, size, needsNewline, maxBytes, keep, warn);
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
  }

  /** Queues one event as one line; resolves once it is written (not yet fsynced: see flush()). */
  append(event: A2AEvent): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`EventLog.append: ${this.file} is closed`));
    let text: string;
    try {
      text = serialize(event);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(displayText(error)));
    }
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ text, bytes: Buffer.byteLength(text), resolve, reject });
      // Starting the drain a microtask later lets appends made in the same tick share one write.
      this.draining ??= Promise.resolve().then(() => this.drain());
    });
  }

  /** Waits for every queued append, then fsyncs the live file. */
  async flush(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    await this.drainAndSync();
  }

  /** Refuses new appends, writes the queued ones, fsyncs and closes. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    try {
      await this.drainAndSync();
    } finally {
      // Closed even when the last fsync fails: close() is called once, there is no later chance.
      await this.handle.close();
    }
  }

  private async drainAndSync(): Promise<void> {
    while (this.draining !== undefined) await this.draining;
    if (this.unsynced) {
      this.unsynced = false;
      await this.handle.sync();
    }
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0);
        try {
          await this.writeBatch(batch);
        } catch (error) {
          // Only rotation throws here; settling an already settled promise is a no-op.
          const failure = new Error(`EventLog: could not rotate ${this.file}: ${displayText(error)}`, {
            cause: error,
          });
          for (const line of batch) line.reject(failure);
        }
      }
    } finally {
      // Cleared synchronously with the loop's last check, so an append cannot slip in between.
      this.draining = undefined;
    }
  }

  /** Writes a batch in as few writes as possible: one, plus one per rotation it crosses. */
  private async writeBatch(batch: PendingLine[]): Promise<void> {
    let chunk: PendingLine[] = [];
    let chunkBytes = 0;
    for (const line of batch) {
      const projected = this.fileBytes + chunkBytes + line.bytes;
      if (projected > this.rotateAt && this.fileBytes + chunkBytes > 0) {
        await this.writeChunk(chunk);
        chunk = [];
        chunkBytes = 0;
        await this.rotate();
      }
      chunk.push(line);
      chunkBytes += line.bytes;
    }
    await this.writeChunk(chunk);
  }

  private async writeChunk(chunk: PendingLine[]): Promise<void> {
    if (chunk.length === 0) return;
    const prefix = this.needsNewline ? "\n" : "";
    const buffer = Buffer.from(prefix + chunk.map((line) => line.text).join(""));
    try {
      await writeAll(this.handle, buffer, null);
    } catch (error) {
      const failure = new Error(
        `EventLog: could not append ${chunk.length} event(s) to ${this.file}: ${displayText(error)}`,
        { cause: error },
      );
      for (const line of chunk) line.reject(failure);
      await this.cutBack();
      return;
    }
    this.needsNewline = false;
    this.unsynced = true;
    this.fileBytes += buffer.length;
    for (const line of chunk) line.resolve();
  }

  /** After a failed append: back to the last whole line, so a rejected event is not half in the file. */
  private async cutBack(): Promise<void> {
    try {
      await this.handle.truncate(this.fileBytes);
    } catch (error) {
      // Part of the chunk may be in the file: start the next write on a fresh line.
      this.needsNewline = true;
      this.warn(`could not cut ${this.file} back after a failed append: ${displayText(error)}`);
    }
  }

  /** coordination-events.ndjson → .1 → .2 … → .keep; the oldest is deleted. */
  private async rotate(): Promise<void> {
    // The rotated file is final: sync it once now rather than never.
    await this.handle.sync();
    await this.handle.close();
    let failed = true;
    try {
      if (this.keep === 0) {
        await rm(this.file, { force: true });
      } else {
        await rm(`${this.file}.${this.keep}`, { force: true });
        for (let n = this.keep - 1; n >= 1; n -= 1) {
          await renameIfPresent(`${this.file}.${n}`, `${this.file}.${n + 1}`);
        }
        await rename(this.file, `${this.file}.1`);
      }
      failed = false;
    } catch (error) {
      // Nothing is lost: the live file keeps growing past maxBytes until a later rotation succeeds.
      this.warn(`could not rotate ${this.file}: ${displayText(error)}; appending to it past maxBytes`);
    }
    this.handle = await open(this.file, "a+", 0o600);
    this.fileBytes = (await this.handle.stat()).size;
    this.rotateAt = failed ? this.fileBytes + this.maxBytes : this.maxBytes;
    this.unsynced = false;
  }
}

function serialize(event: A2AEvent): string {
  const type = (event as { type?: unknown } | null | undefined)?.type;
  if (typeof event !== "object" || event === null || typeof type !== "string") {
    throw new InvalidInputError("EventLog.append", "event", "an A2A event object with a string type", event);
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(event);
  } catch (error) {
    throw new Error(`EventLog.append: cannot serialise an event of type ${type}: ${displayText(error)}`, {
      cause: error,
    });
  }
  // JSON.stringify escapes newlines inside strings, so one event is always exactly one line.
  return `${json}\n`;
}

async function renameIfPresent(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
}

/** The event log's files in `dir`: coordination-events.ndjson.N (highest N = oldest first), then the live file. */
export async function listLogFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  const rotated = names
    .map((name) => ({ name, n: rotationNumber(name) }))
    .filter((file): file is { name: string; n: number } => file.n !== undefined)
    .sort((a, b) => b.n - a.n)
    .map((file) => join(dir, file.name));
  return names.includes(EVENT_LOG_FILE) ? [...rotated, join(dir, EVENT_LOG_FILE)] : rotated;
}

function rotationNumber(name: string): number | undefined {
  if (!name.startsWith(`${EVENT_LOG_FILE}.`)) return undefined;
  const suffix = name.slice(EVENT_LOG_FILE.length + 1);
  return /^[1-9][0-9]{0,5}$/.test(suffix) ? Number(suffix) : undefined;
}
