import { lstat, readdir, rm } from "node:fs/promises";
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

// What writeFileDurably and the lock leave when killed between writing a temp file and renaming it.
const TEMP_FILE = /\.tmp-[^/]*$/;

/**
 * The files under `dir`, at most `depth` folders down; symbolic links are not followed. A folder that
 * cannot be listed is told to `unlisted`, but for one removed meanwhile (a compaction, a prune).
 */
async function* filesUnder(
  dir: string,
  unlisted: (folder: string, error: unknown) => void,
  depth = Number.POSITIVE_INFINITY,
): AsyncGenerator<{ path: string; name: string }> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (errorCode(error) !== "ENOENT") unlisted(dir, error);
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth > 0) yield* filesUnder(path, unlisted, depth - 1);
    } else if (entry.isFile()) yield { path, name: entry.name };
  }
}

/**
 * Every quarantined file of a state directory, oldest first: `*.corrupt-*` files (4 folders deep at
 * most) and everything under `quarantine/`. A folder that cannot be read is reported in `problems`.
 */
export async function listQuarantined(
  root: string,
): Promise<{ files: QuarantinedFile[]; problems: Array<{ file: string; problem: string }> }> {
  const files: QuarantinedFile[] = [];
  const problems: Array<{ file: string; problem: string }> = [];
  const unreadable = (file: string, error: unknown): void => {
    if (errorCode(error) !== "ENOENT") problems.push({ file, problem: errorText(error) });
  };
  for await (const { path, name } of filesUnder(root, unreadable, 4)) {
    if (!CORRUPT_FILE.test(name) && !relative(root, path).startsWith(QUARANTINE_DIR + sep)) continue;
    try {
      const info = await lstat(path);
      files.push({ file: path, bytes: info.size, modifiedAt: Math.round(info.mtimeMs) });
    } catch (error) {
      unreadable(path, error);
    }
  }
  files.sort((a, b) => a.modifiedAt - b.modifiedAt || a.file.localeCompare(b.file));
  return { files, problems };
}

/**
 * Removes every `*.tmp-*` file under `dir`: only while holding its lock, when each is a killed
 * writer's. Returns the removed paths; what cannot be read or removed is told to `onWarning`.
 */
export async function removeLeftoverTempFiles(
  dir: string,
  onWarning: (message: string) => void = () => {},
): Promise<string[]> {
  const removed: string[] = [];
  const unlisted = (folder: string, error: unknown) =>
    onWarning(`could not list ${folder} for leftover temp files: ${errorText(error)}`);
  for await (const { path, name } of filesUnder(dir, unlisted)) {
    if (!TEMP_FILE.test(name)) continue;
    try {
      await rm(path, { force: true });
      removed.push(path);
    } catch (error) {
      onWarning(`could not remove the leftover temp file ${path}: ${errorText(error)}`);
    }
  }
  return removed;
}
