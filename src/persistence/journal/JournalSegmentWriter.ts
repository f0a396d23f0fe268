import { type FileHandle, open } from "node:fs/promises";
import { dirname } from "node:path";
import { errorText, syncDirectory, writeAll } from "../DurableJsonFile.js";
import { JOURNAL_BLOCK_BYTES, JOURNAL_HEADER } from "./segmentFormat.js";

const HEADER = Buffer.from(JOURNAL_HEADER, "utf8");

/**
 * Appends whole batches to one journal segment (segmentFormat.ts), resolving once every byte and the
 * fdatasync landed. A failed append's bytes are zeroed (or cut off) and synced, so later appends go on
 * here; when even that fails the writer is `broken` (the caller seals the segment), and what is left
 * reads as a torn, never acknowledged, tail.
 */
export class JournalSegmentWriter {
  private handle: FileHandle | undefined;
  /** The file being made (prepare() or the first append): created, its first block allocated, its name synced. */
  private making: Promise<void> | undefined;
  /** Where the next append goes: the end of the header and the whole batches written so far. */
  private end = 0;
  /** The file's size: the preallocated (zero) space ends here. */
  private allocated = 0;
  private brokenBy: unknown;

  constructor(readonly path: string) {}

  /** A failed append could not be undone: append nothing more here. */
  get broken(): boolean {
    return this.brokenBy !== undefined;
  }

  /** Bytes of data (header and batches) in the segment. */
  get size(): number {
    return this.end;
  }

  /** Writes `batch` (whole lines) after the last acknowledged one and fdatasyncs it. */
  async append(batch: Buffer): Promise<void> {
    if (this.brokenBy !== undefined) {
      throw new Error(
        `journal segment ${this.path} is sealed after a failed append: ${errorText(this.brokenBy)}`,
      );
    }
    const handle = await this.opened();
    const start = this.end;
    const buffer = start === 0 ? Buffer.concat([HEADER, batch]) : batch;
    try {
      // At least one zero byte must follow the data: it is how a reader finds where the data ends.
      const needed = start + buffer.length + 1;
      if (needed > this.allocated) {
        const size = Math.ceil(needed / JOURNAL_BLOCK_BYTES) * JOURNAL_BLOCK_BYTES;
        await handle.truncate(size);
        this.allocated = size;
      }
      await writeAll(handle, buffer, start);
      await handle.datasync();
    } catch (error) {
      await this.undo(handle, start, buffer.length, error);
      throw error;
    }
    this.end = start + buffer.length;
  }

  /**
   * Makes the file now, without waiting: its first block, and its name durable. The first append then
   * syncs no directory, and that sync takes as long as the file system's commit of everything else
   * written (0.4 s seen on a restart, 1 s behind a compaction's writes). A failure is left for the
   * first append, which tries again and reports it.
   */
  prepare(): void {
    this.make().catch(() => undefined);
  }

  /** Resolves once the file is made (prepare()), or its making failed. */
  async prepared(): Promise<void> {
    await this.making?.catch(() => undefined);
  }

  /** Closes the file; a later append reopens it. */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private make(): Promise<void> {
    if (this.making === undefined) {
      const making = this.create();
      this.making = making;
      making.catch(() => {
        if (this.making === making) this.making = undefined;
      });
    }
    return this.making;
  }

  // "w": a segment is never reopened for appending by a later process; it always starts a new one.
  private async create(): Promise<void> {
    const handle = await open(this.path, "w", 0o600);
    try {
      await handle.truncate(JOURNAL_BLOCK_BYTES);
      await syncDirectory(dirname(this.path)); // the name survives a power cut
    } finally {
      await handle.close();
    }
    this.allocated = JOURNAL_BLOCK_BYTES;
  }

  private async opened(): Promise<FileHandle> {
    if (this.handle !== undefined) return this.handle;
    if (this.allocated === 0) await this.make();
    // Opened by path, so a folder moved or replaced meanwhile fails the append rather than writing elsewhere.
    this.handle = await open(this.path, "r+", 0o600);
    return this.handle;
  }

  /** Zeroes what a failed append may have written; failing that, cuts it off and regrows the file (sparse). */
  private async undo(handle: FileHandle, start: number, span: number, cause: unknown): Promise<void> {
    try {
      await writeAll(handle, Buffer.alloc(span), start);
      await handle.datasync();
      return;
    } catch {
      // Try the other way below.
    }
    try {
      await handle.truncate(start);
      await handle.truncate(this.allocated);
      await handle.datasync();
    } catch {
      this.brokenBy = cause;
      this.handle = undefined;
      await handle.close().catch(() => undefined);
    }
  }
}
