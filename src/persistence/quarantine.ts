import { access, mkdir, open, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { syncDirectory } from "./DurableJsonFile.js";

/** The file-name-safe timestamp used in quarantine names: 2024-05-01T12-30-00-000Z. */
export function quarantineStamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, "-");
}

/** Moves an unusable file aside to the first free `<file>.corrupt-<time>[-n]`; returns the new path. */
export async function quarantineFile(file: string, now: number): Promise<string> {
  const base = `${file}.corrupt-${quarantineStamp(now)}`;
  let target = base;
  for (let n = 1; (await access(target).catch(() => "free")) !== "free"; n++) target = `${base}-${n}`;
  await rename(file, target);
  await syncDirectory(dirname(file));
  return target;
}

/**
 * Keeps `content` in `<stateDir>/quarantine/<name>[-n]<ext>`: created exclusively (nothing kept earlier is
 * overwritten), owner-only, fsynced with its folder. Returns the path and the bytes written.
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

/** Keeps entries that failed validation in `<stateDir>/quarantine/<name>-<time>.json`; returns its path. */
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
