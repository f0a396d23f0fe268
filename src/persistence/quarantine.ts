import { access, mkdir, open, rename } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
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

/**
 * Keeps `content` for inspection in `<stateDir>/quarantine/<name><ext>` (`<name>-1<ext>`, `-2`, … when
 * taken): created exclusively, so nothing kept earlier is overwritten, owner-only (it may hold message
 * text), fsynced with its folder. Returns the path and the bytes written.
 */
export async function keepInQuarantine(
  stateDir: string,
  name: string,
  ext: string,
  content: string | Uint8Array,
): Promise<{ path: string; bytes: number }> {
  const dir = join(stateDir, "quarantine");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const data = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  for (let n = 0; ; n++) {
    const path = join(dir, `${name}${n === 0 ? "" : `-${n}`}${ext}`);
    let handle;
    try {
      handle = await open(path, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await syncDirectory(dir);
    return { path, bytes: data.byteLength };
  }
}

/**
 * Keeps entries that failed validation for inspection instead of dropping them silently: writes
 * `<stateDir>/quarantine/<name>-<time>.json` (owner-only, fsynced; `-1`, `-2`, … when the name is
 * taken) and returns its path.
 */
export async function quarantineEntries(
  stateDir: string,
  name: string,
  now: number,
  content: unknown,
): Promise<string> {
  const text = `${JSON.stringify(content, null, 2)}\n`;
  return (await keepInQuarantine(stateDir, `${name}-${quarantineStamp(now)}`, ".json", text)).path;
}

/** A damaged journal segment's copy in `quarantine/`: `journal-<n>.ndjson.damaged-<time>[-n]`. */
export const DAMAGED_JOURNAL_FILE = /^journal-\d+\.ndjson\.damaged-[^/]*$/;

/**
 * Keeps a durable copy (mode 0600) of a damaged journal segment in `<stateDir>/quarantine/`, so the
 * evidence of what was lost outlives the segment once its readable records are folded into the files.
 * Returns the copy's path.
 */
export async function keepDamagedJournal(
  stateDir: string,
  segmentPath: string,
  bytes: Uint8Array,
  now: number,
): Promise<string> {
  const name = `${basename(segmentPath)}.damaged-${quarantineStamp(now)}`;
  return (await keepInQuarantine(stateDir, name, "", bytes)).path;
}
