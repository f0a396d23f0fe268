import { access, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { syncDirectory } from "./DurableJsonFile.js";

/** The file-name-safe timestamp used in quarantine names: 2024-05-01T12-30-00-000Z. */
export function quarantineStamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, "-");
}

/**
 * Moves a file that cannot be used out of the way, keeping it for inspection instead of
 * overwriting it: `<file>.corrupt-<time>`. If that name is taken (same file, same millisecond,
 * e.g. under a fixed test clock), `-1`, `-2`, … is appended rather than replacing the earlier copy.
 * Returns the new path.
 */
export async function quarantineFile(file: string, now: number): Promise<string> {
  const target = await freeQuarantineName(file, now);
  await rename(file, target);
  await syncDirectory(dirname(file));
  return target;
}

/** The first free `<file>.corrupt-<time>[-n]` name. */
export async function freeQuarantineName(file: string, now: number): Promise<string> {
  const base = `${file}.corrupt-${quarantineStamp(now)}`;
  for (let n = 0; ; n++) {
    const target = n === 0 ? base : `${base}-${n}`;
    if (!(await exists(target))) return target;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
