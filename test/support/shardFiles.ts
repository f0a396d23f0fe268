import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { shardOf } from "../../src/persistence/index.js";
import { readShard, shardHeader } from "../../src/persistence/shardFormat.js";

/** A live shard file's text holding these values, valid records or not. */
export function shardFileText(values: readonly unknown[]): string {
  return shardHeader(values.length) + values.map((value) => `${JSON.stringify(value)}\n`).join("");
}

/** The records in a live shard file, by id. */
export async function shardRecords(file: string): Promise<Record<string, unknown>> {
  return Object.fromEntries(readShard(await readFile(file)).entries);
}

/** The live shard that holds `id` in a store of `shards` shards (two digits, as below 100 shards). */
export function shardPath(dir: string, id: string, shards: number): string {
  return join(dir, "actors", `shard-${String(shardOf(id, shards)).padStart(2, "0")}.ndjson`);
}
