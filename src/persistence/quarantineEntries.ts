import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { syncDirectory } from "./DurableJsonFile.js";
import { quarantineStamp } from "./quarantine.js";

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
  const dir = join(stateDir, "quarantine");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify(content, null, 2)}\n`;
  for (let n = 0; ; n++) {
    const file = join(dir, `${name}-${quarantineStamp(now)}${n === 0 ? "" : `-${n}`}.json`);
    let handle;
    try {
      handle = await open(file, "wx", 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await syncDirectory(dir);
    return file;
  }
}
