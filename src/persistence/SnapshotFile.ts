import { closeSync, openSync, readSync } from "node:fs";
import { StateFileReadError } from "./DurableJsonFile.js";
import type { FileReader } from "./FileReader.js";

/** Where a stored snapshot's JSON is: `length` bytes at `offset` of `file`. */
export interface FileSpan {
  file: SnapshotFile;
  offset: number;
  length: number;
}

/**
 * A store file read at open and kept open, so that the snapshots of the records read from it stay on
 * disk and are read when wanted (once their actor wakes). Read through its descriptor: a shard rewritten
 * (renamed over) or a segment folded and deleted since is still read as it was, so a span never points
 * into bytes written later. The cost: such a file keeps its disk space until the store closes it.
 */
export class SnapshotFile {
  private fd: number | undefined;
  /** How many spans were handed out: a file with none need not stay open. */
  private spans = 0;

  private constructor(
    readonly path: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /**
   * Reads the whole file with `reader` (its bytes valid until the reader's next read) and keeps it open.
   * @throws the `fs` error (ENOENT when the file does not exist).
   */
  static open(path: string, reader: FileReader): { bytes: Buffer; file: SnapshotFile } {
    const fd = openSync(path, "r");
    try {
      return { bytes: reader.readOpen(fd), file: new SnapshotFile(path, fd) };
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** The span of `length` bytes at `offset` of this file. */
  span(offset: number, length: number): FileSpan {
    this.spans += 1;
    return { file: this, offset, length };
  }

  /** Whether a record read from the file keeps its snapshot here. */
  get holdsSnapshots(): boolean {
    return this.spans > 0;
  }

  /**
   * The bytes of a span of this file.
   * @throws StateFileReadError when the file is closed (its store is) or cannot be read.
   */
  read({ offset, length }: FileSpan): Buffer {
    if (this.fd === undefined)
      throw new StateFileReadError(
        this.path,
        new Error("its store is closed: snapshots are read while it is open"),
      );
    const bytes = Buffer.allocUnsafe(length);
    let done = 0;
    try {
      while (done < length) {
        const read = readSync(this.fd, bytes, done, length - done, offset + done);
        if (read === 0) throw new Error(`it ends before byte ${offset + length}`);
        done += read;
      }
    } catch (error) {
      throw new StateFileReadError(this.path, error);
    }
    return bytes;
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
