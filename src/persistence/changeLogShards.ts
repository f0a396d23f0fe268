import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { errorCode, errorText, syncDirectory, writeFileDurably } from "./DurableJsonFile.js";
import { shardOf as fnvShardOf } from "./snapshotLayout.js";

/** How many files the folded state is spread over: ~1.7 MB each at 1.3 million small entries. */
export const SHARD_COUNT = 64;

const SHARD_FILE = /^state-(\d{2})\.json$/;

/** The file of shard `n`: `state-00.json` … `state-63.json`. */
export function shardFile(n: number): string {
  return `state-${String(n).padStart(2, "0")}.json`;
}

/**
 * The shard of a key: FNV-1a of the key alone (as the snapshot store shards its actors), so every
 * entry of one thread (its parent, participants, exchange) lands in one shard and a burst of activity
 * in a thread dirties one file.
 */
export function shardOf(key: string): number {
  return fnvShardOf(key, SHARD_COUNT);
}

/** The shard files present in `dir`, by shard number. */
export async function shardFilesIn(dir: string): Promise<Map<number, string>> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return new Map();
    throw new Error(`cannot list ${dir}: ${errorText(error)}`, { cause: error });
  }
  const files = new Map<number, string>();
  for (const name of names) {
    const match = SHARD_FILE.exec(name);
    if (match !== null && Number(match[1]) < SHARD_COUNT) files.set(Number(match[1]), join(dir, name));
  }
  return files;
}

/**
 * Writes one shard durably (temp file, fsync, rename, directory fsync), or removes its file when it
 * holds nothing; resolves with the bytes it now holds on disk.
 */
export async function writeShard(
  dir: string,
  n: number,
  collections: Record<string, Array<[string, unknown]>>,
  mode: number,
): Promise<number> {
  const file = join(dir, shardFile(n));
  if (Object.keys(collections).length === 0) {
    await rm(file, { force: true });
    await syncDirectory(dir);
    return 0;
  }
  return writeFileDurably(file, JSON.stringify({ version: 2, collections }), mode);
}
