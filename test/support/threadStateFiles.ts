import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The thread state as saved in `<stateDir>/threads/` (state.json, then each line of changes.ndjson),
 * read without touching the files: `"<collection> <key>"` → value.
 */
export function savedThreadEntries(stateDir: string): Map<string, unknown> {
  const dir = join(stateDir, "threads");
  const entries = new Map<string, unknown>();
  const stateFile = join(dir, "state.json");
  if (existsSync(stateFile)) {
    const { collections } = JSON.parse(readFileSync(stateFile, "utf8")) as {
      collections: Record<string, Record<string, unknown>>;
    };
    for (const [c, byKey] of Object.entries(collections))
      for (const [k, v] of Object.entries(byKey)) entries.set(`${c} ${k}`, v);
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

/** Bytes in the thread state's files (the snapshot and the change log). */
export function threadStateBytes(stateDir: string): { state: number; log: number } {
  const size = (name: string) => {
    const file = join(stateDir, "threads", name);
    return existsSync(file) ? readFileSync(file).length : 0;
  };
  return { state: size("state.json"), log: size("changes.ndjson") };
}
