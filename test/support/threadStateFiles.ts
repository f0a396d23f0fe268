import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The thread state as saved in `<stateDir>/threads/` (the shard files, then each line of
 * changes.ndjson), read without touching the files: `"<collection> <key>"` → value.
 */
export function savedThreadEntries(stateDir: string): Map<string, unknown> {
  const dir = join(stateDir, "threads");
  const entries = new Map<string, unknown>();
  for (const file of snapshotFiles(stateDir)) {
    const { collections } = JSON.parse(readFileSync(file, "utf8")) as {
      collections: Record<string, Array<[string, unknown]>>;
    };
    for (const [c, pairs] of Object.entries(collections))
      for (const [k, v] of pairs) entries.set(`${c} ${k}`, v);
  }
  const logFile = join(dir, "changes.ndjson");
  const lines = existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").filter(Boolean) : [];
  for (const line of lines) {
    const change = JSON.parse(line) as { c: string; k: string; v?: unknown };
    if ("v" in change) entries.set(`${change.c} ${change.k}`, change.v);
    else entries.delete(`${change.c} ${change.k}`);
  }
  return entries;
}

/** The thread state's snapshot files (`threads/state-<nn>.json`), as paths. */
export function snapshotFiles(stateDir: string): string[] {
  const dir = join(stateDir, "threads");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => /^state-\d{2}\.json$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Bytes in the thread state's files (the snapshot files together, and the change log). */
export function threadStateBytes(stateDir: string): { state: number; log: number } {
  const size = (file: string) => (existsSync(file) ? readFileSync(file).length : 0);
  const state = snapshotFiles(stateDir).reduce((sum, file) => sum + size(file), 0);
  return { state, log: size(join(stateDir, "threads", "changes.ndjson")) };
}
