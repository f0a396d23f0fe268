import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { errorCode, errorText } from "./DurableJsonFile.js";

// What writeFileDurably and the lock leave when killed between writing a temp file and renaming it.
const TEMP_FILE = /\.tmp-[^/]*$/;

/**
 * Removes every `*.tmp-<anything>` file in `dir` and its subfolders (symbolic links are not
 * followed). Call it only while holding the directory's lock: then no live writer owns such a
 * file, every one is a killed writer's and was never renamed into place. Returns the removed
 * paths; a file or folder that cannot be read or removed is reported through `onWarning`.
 */
export async function removeLeftoverTempFiles(
  dir: string,
  onWarning: (message: string) => void = () => {},
): Promise<string[]> {
  const removed: string[] = [];
  const visit = async (folder: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch (error) {
      if (errorCode(error) !== "ENOENT")
        onWarning(`could not list ${folder} for leftover temp files: ${errorText(error)}`);
      return;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await visit(path);
      else if (TEMP_FILE.test(entry.name)) {
        try {
          await rm(path, { force: true });
          removed.push(path);
        } catch (error) {
          onWarning(`could not remove the leftover temp file ${path}: ${errorText(error)}`);
        }
      }
    }
  };
  await visit(dir);
  return removed;
}
