import { rm } from "node:fs/promises";
import type { ArchiveFiles } from "./archive/ArchiveFiles.js";
import { ArchiveWriteError } from "./archive/ArchiveFiles.js";
import { errorText, syncDirectory } from "./DurableJsonFile.js";
import type { JournalSegmentWriter } from "./journal/JournalSegmentWriter.js";
import type { SnapshotLayout } from "./snapshotLayout.js";
import { SnapshotStoreWriteError } from "./snapshotStoreOptions.js";

/** A journal segment of a LowdbSnapshotStore; its file is created on the first append. */
export interface Segment {
  seq: number;
  path: string;
  writer: JournalSegmentWriter;
}

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

/** Deletes folded journal segments (a failure is reported, and tried again next time); returns those deleted. */
export async function deleteSegments(
  segments: readonly Segment[],
  actorsDir: string,
  warn: (message: string) => void,
): Promise<Segment[]> {
  const deleted: Segment[] = [];
  for (const segment of segments) {
    try {
      await rm(segment.path, { force: true });
      deleted.push(segment);
    } catch (error) {
      warn(`snapshot store: could not delete the folded journal ${segment.path}: ${errorText(error)}`);
    }
  }
  if (deleted.length > 0) await syncDirectory(actorsDir);
  return deleted;
}
