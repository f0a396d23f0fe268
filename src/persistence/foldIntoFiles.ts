import { type ArchiveFiles, ArchiveWriteError } from "./archive/ArchiveFiles.js";
import type { SnapshotLayout } from "./snapshotLayout.js";
import { SnapshotStoreWriteError } from "./snapshotStoreOptions.js";

/**
 * A compaction's writes, in the order that keeps every record somewhere on disk: the finished
 * records appended to the archive first (their live copies stay in their shards until then), then
 * every dirty shard written whole and durably. Throws SnapshotStoreWriteError naming what could not
 * be written (what did not land stays queued or dirty, for the next compaction).
 */
export async function foldIntoFiles(o: {
  layout: SnapshotLayout;
  archive: ArchiveFiles;
  archiveDir: string;
  warn: (message: string) => void;
}): Promise<void> {
  const { layout } = o;
  const fail = (failures: Array<{ file: string; cause: unknown }>): never => {
    const error = new SnapshotStoreWriteError(failures);
    o.warn(error.message);
    throw error;
  };
  const toArchive = [...layout.finished.values()];
  if (toArchive.length > 0) {
    try {
      await o.archive.append(toArchive);
    } catch (cause) {
      fail([cause instanceof ArchiveWriteError ? cause : { file: o.archiveDir, cause }]);
    }
    // Archived: their live copies go with the shards written below.
    layout.archived(toArchive);
  }
  const files = [...layout.dirty];
  layout.dirty.clear();
  const failures = await layout.writeFiles(files, layout.freeableCopies(files));
  if (failures.length > 0) fail(failures);
}
