import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { dirname } from "node:path";
import { syncDirectory, writeAll } from "../DurableJsonFile.js";

/**
 * Appends to a file durably, whole units or nothing: the file is first cut back to its last whole unit
 * (a newline, or a multiple of `unit` bytes), and a failed append is cut off again.
 */
export class DurableAppender {
  constructor(private readonly onWrite: (bytes: number) => void) {}

  /**
   * Appends `pieces` one after another (each made as it is taken, the event loop running between
   * them), and syncs once: all of it lands, or none.
   */
  async append(path: string, pieces: Iterable<string | Uint8Array>, unit: "line" | number): Promise<void> {
    let handle: FileHandle | undefined;
    let before: number | undefined;
    try {
      // Read-write, not append mode: positional writes go where the last whole unit ends.
      handle = await open(path, constants.O_RDWR | constants.O_CREAT, 0o600);
      const size = (await handle.stat()).size;
      before = await wholeUnits(handle, size, unit);
      if (size !== before) await handle.truncate(before);
      let end = before;
      for (const piece of pieces) {
        const bytes = typeof piece === "string" ? Buffer.from(piece, "utf8") : piece;
        await writeAll(handle, bytes, end);
        end += bytes.length;
      }
      await handle.datasync();
      await handle.close();
      handle = undefined;
      // A new file's name must reach the disk too.
      if (before === 0) await syncDirectory(dirname(path));
      this.onWrite(end - before);
    } catch (error) {
      // Cut the partial append off; if even that fails, the next append cuts it.
      if (handle !== undefined && before !== undefined) await handle.truncate(before).catch(() => undefined);
      await handle?.close().catch(() => undefined);
      throw error;
    }
  }
}

/** The length of the file's whole units: up to its last newline, or a multiple of `unit` bytes. */
async function wholeUnits(handle: FileHandle, size: number, unit: "line" | number): Promise<number> {
  if (unit !== "line") return size - (size % unit);
  // Look back for the last newline, 64 KiB at a time.
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const { bytesRead } = await handle.read(chunk, 0, end - start, start);
    const at = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}
