import { keepInQuarantine, quarantineStamp } from "./quarantine.js";

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
