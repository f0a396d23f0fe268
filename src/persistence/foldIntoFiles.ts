import { rm } from "node:fs/promises";
import { type ArchiveFiles, ArchiveWriteError } from "./archive/ArchiveFiles.js";
import { syncDirectory } from "./DurableJsonFile.js";
import type { SnapshotLayout } from "./snapshotLayout.js";
import { SnapshotStoreWriteError } from "./snapshotStoreOptions.js";

/**
 * A compaction's writes, in the order that keeps every record somewhere on disk: the finished
 * records appended to the archive first (their live copies stay in their shards until then), the
 * earlier-format archive days they came from deleted, then every dirty shard written whole and
 * durably. Throws SnapshotStoreWriteError naming what could not be written (what did not land stays
 * queued or dirty, for the next compaction).
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
  const legacy = [...layout.legacyArchives];
  if (toArchive.length > 0) {
    try {
      await o.archive.append(toArchive);
    } catch (cause) {
      fail([cause instanceof ArchiveWriteError ? cause : { file: o.archiveDir, cause }]);
    }
    // Archived: their live copies go with the shards written below.
    layout.archived(toArchive);
  }
  if (legacy.length > 0) {
    for (const path of legacy) await rm(path, { force: true });
    await syncDirectory(o.archiveDir);
    const left = layout.legacyArchives.filter((path) => !legacy.includes(path));
    layout.legacyArchives.splice(0, layout.legacyArchives.length, ...left);
  }
  const files = [...layout.dirty];
  layout.dirty.clear();
  const failures = await layout.writeFiles(files, layout.freeableCopies(files));
  if (failures.length > 0) fail(failures);
}
