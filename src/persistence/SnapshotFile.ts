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
  /** Whether a span was handed out: a file with none need not stay open. */
  private spanned = false;

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
    this.spanned = true;
    return { file: this, offset, length };
  }

  /** Whether a record read from the file keeps its snapshot here. */
  get holdsSnapshots(): boolean {
    return this.spanned;
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

/**
 * A process has few file descriptors (1,024 by default on Linux) and a store may have up to 4,096
 * shards: past this many files kept open, a file's snapshots are read into memory instead.
 */
export const MAX_SNAPSHOT_FILES = 256;

/** The files a store's open read and keeps open for their records' snapshots (SnapshotFile). */
export class SnapshotFiles {
  private readonly open: SnapshotFile[] = [];

  constructor(private readonly max = MAX_SNAPSHOT_FILES) {}

  /**
   * The whole file's bytes (valid until the reader's next read), and the file itself, to keep its
   * records' snapshots in, unless `max` files are kept already.
   * @throws the `fs` error (ENOENT when the file does not exist).
   */
  read(path: string, reader: FileReader): { bytes: Buffer; file?: SnapshotFile } {
    return this.open.length < this.max ? SnapshotFile.open(path, reader) : { bytes: reader.read(path) };
  }

  /** A file whose records were read: kept open while one of them keeps its snapshot there, closed otherwise. */
  keep(file: SnapshotFile): void {
    if (file.holdsSnapshots) this.open.push(file);
    else file.close();
  }

  /** The store closes: the snapshots of the records read at open can no longer be read. */
  close(): void {
    for (const file of this.open.splice(0)) file.close();
  }
}
