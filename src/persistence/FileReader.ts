import { closeSync, fstatSync, openSync, readSync } from "node:fs";

/**
 * Reads whole files, one after another, into one buffer it reuses: a start reads hundreds of MB of
 * shards and journal segments, and memory touched for the first time is what costs (a fresh buffer
 * per file took 470–700 ms for 256 MB on a 2-vCPU VM, the same bytes into one reused buffer 22 ms).
 * So nothing read may keep a view of the bytes: a record's snapshot kept unparsed stays in its file
 * (SnapshotFile). Synchronous, as `readFileSync` was: through the thread pool, a file of megabytes is a
 * round trip per 512 KB, and a start has nothing else to do meanwhile.
 */
export class FileReader {
  private buffer = Buffer.alloc(0);

  /**
   * The file's bytes: a view of this reader's buffer, valid until its next read.
   * @throws the `fs` error (ENOENT when the file does not exist).
   */
  read(path: string): Buffer {
    const fd = openSync(path, "r");
    try {
      return this.readOpen(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** As read(), for a file open as `fd` (left open). */
  readOpen(fd: number): Buffer {
    const size = fstatSync(fd).size;
    if (this.buffer.length < size) this.buffer = Buffer.allocUnsafe(Math.max(size, 2 * this.buffer.length));
    let length = 0;
    while (length < size) {
      const read = readSync(fd, this.buffer, length, size - length, length);
      if (read === 0) break; // cut short since the stat: what is there is the file
      length += read;
    }
    return this.buffer.subarray(0, length);
  }
}
