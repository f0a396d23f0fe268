import { mkdir, open, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { syncDirectory } from "../DurableJsonFile.js";
import { quarantineStamp } from "../quarantine.js";

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
  const dir = join(stateDir, "quarantine");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const taken = new Set(await readdir(dir));
  const base = `${basename(segmentPath)}.damaged-${quarantineStamp(now)}`;
  let name = base;
  for (let n = 1; taken.has(name); n++) name = `${base}-${n}`;
  const path = join(dir, name);
  const handle = await open(path, "wx", 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await syncDirectory(dir);
  return path;
}
