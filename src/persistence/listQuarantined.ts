import { lstat, readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { errorCode, errorText } from "./DurableJsonFile.js";

/** A file the runtime set aside (a damaged file, records or a journal it could not use), kept for inspection. */
export interface QuarantinedFile {
  /** Absolute path. */
  file: string;
  bytes: number;
  /** When it was last written (ms since the epoch): about when it was set aside. */
  modifiedAt: number;
}

/** The folder, inside a state directory, where quarantined records, thread state and journal copies go. */
export const QUARANTINE_DIR = "quarantine";

/** What quarantineFile leaves beside a damaged file: `<file>.corrupt-<time>[-n]`. */
const CORRUPT_FILE = /\.corrupt-[^/\\]*$/;

/** How deep the walk goes: the layout is at most a few folders deep; deeper is not the runtime's. */
const MAX_DEPTH = 4;

/**
 * Every quarantined file of a state directory, oldest first: each `*.corrupt-*` file anywhere in it,
 * and everything under `quarantine/`. Read-only. A folder that cannot be read is reported in
 * `problems` and the rest is listed.
 */
export async function listQuarantined(
  root: string,
): Promise<{ files: QuarantinedFile[]; problems: Array<{ file: string; problem: string }> }> {
  const files: QuarantinedFile[] = [];
  const problems: Array<{ file: string; problem: string }> = [];
  const visit = async (folder: string, depth: number): Promise<void> => {
    let names: string[];
    try {
      names = (await readdir(folder)).sort();
    } catch (error) {
      // A folder removed meanwhile (a compaction, a prune) had nothing quarantined to show.
      if (errorCode(error) !== "ENOENT") problems.push({ file: folder, problem: errorText(error) });
      return;
    }
    for (const name of names) {
      const path = join(folder, name);
      let info: Awaited<ReturnType<typeof lstat>>;
      try {
        info = await lstat(path);
      } catch (error) {
        if (errorCode(error) !== "ENOENT") problems.push({ file: path, problem: errorText(error) });
        continue;
      }
      if (info.isDirectory()) {
        if (depth < MAX_DEPTH) await visit(path, depth + 1);
        continue;
      }
      if (info.isFile() && (CORRUPT_FILE.test(name) || inQuarantine(root, path))) {
        files.push({ file: path, bytes: info.size, modifiedAt: Math.round(info.mtimeMs) });
      }
    }
  };
  await visit(root, 0);
  files.sort((a, b) => a.modifiedAt - b.modifiedAt || a.file.localeCompare(b.file));
  return { files, problems };
}

function inQuarantine(root: string, path: string): boolean {
  return relative(root, path).startsWith(QUARANTINE_DIR + sep);
}
