import type { ActorRecord } from "../../src/persistence/index.js";
import { parseRecordLine, plainRecord } from "../../src/persistence/recordLine.js";

/** The time the snapshot-store tests start at. */
export const STORE_T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** A small live mention record (machine version 2) with one timer; `over` replaces any field. */
export function storeRecord(id: string, over: Partial<ActorRecord> = {}): ActorRecord {
  return {
    id,
    machineId: "mention",
    machineVersion: 2,
    snapshot: { status: "active", value: "waiting", context: { id } },
    delayed: [{ id: "remind", source: [], target: [], event: { type: "REMIND" }, dueAt: STORE_T0 + 300_000 }],
    status: "active",
    updatedAt: STORE_T0,
    ...over,
  };
}

/** The records in a state dir's archive: each hour file's lines, parsed (snapshots too), by file name. */
export async function archiveLines(dir: string): Promise<Record<string, unknown[]>> {
  const { readFile, readdir } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const out: Record<string, unknown[]> = {};
  for (const name of (await readdir(join(dir, "archive"))).sort()) {
    if (!name.endsWith(".ndjson")) continue;
    const text = await readFile(join(dir, "archive", name), "utf8");
    out[name] = text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => plainRecord(parseRecordLine(Buffer.from(line)) as ActorRecord));
  }
  return out;
}
