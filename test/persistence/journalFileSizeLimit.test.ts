import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { LowdbSnapshotStore } from "../../src/persistence/index.js";
import { tempDirs } from "./tempDirs.js";

const ROOT = resolve(import.meta.dirname, "../..");
const dirs = tempDirs();
const children = new Set<ChildProcess>();
afterEach(async () => {
  for (const child of children) child.kill("SIGKILL");
  children.clear();
  await dirs.cleanup();
});

/** Runs the child under a file-size limit (KiB) until it is stuck, SIGKILLs it: the last `n` acknowledged per id. */
async function runUntilStuck(
  dir: string,
  limitKiB: number,
): Promise<{ acked: Map<string, number>; stderr: string; firstFailure?: number; lastAck: number }> {
  const child = spawn(
    "bash",
    [
      "-c",
      `ulimit -f ${limitKiB}; exec "$0" --import tsx test/persistence/fileSizeLimitChild.ts "$1"`,
      process.execPath,
      dir,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  children.add(child);
  const acked = new Map<string, number>();
  let firstFailure: number | undefined;
  let lastAck = -1;
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once("close", () => done()));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const [word, id, n] = line.split(" ");
    if (word === "ack" && id !== undefined) {
      acked.set(id, Number(n));
      lastAck = Number(n);
    }
    if (word === "failed") firstFailure ??= Number(id);
    if (word === "stuck") break;
  }
  child.kill("SIGKILL");
  await exited;
  children.delete(child);
  return { acked, stderr, lastAck, ...(firstFailure === undefined ? {} : { firstFailure }) };
}

describe("LowdbSnapshotStore under a real file-size limit (ulimit -f)", () => {
  it("loses no acknowledged put when the limit bites mid-append, goes on in a new segment, and survives a kill", async () => {
    const dir = await dirs.make();
    const { acked, stderr, firstFailure, lastAck } = await runUntilStuck(dir, 512);
    expect(acked.size).toBe(40); // every id was acknowledged at least once before the limit
    expect(stderr).toMatch(/EFBIG|file too large/i); // the limit did bite
    // The full segment is sealed and folded into the (small) shard files: puts go on in a new segment
    // instead of failing until a restart.
    expect(firstFailure).toBeDefined();
    expect(lastAck).toBeGreaterThan((firstFailure ?? 0) + 100);

    const store = await LowdbSnapshotStore.open({
      dir,
      machineVersions: { mention: 1 },
      onWarning: () => undefined,
    });
    try {
      for (const [id, n] of acked) {
        const snapshot = (await store.get(id))?.snapshot as { n?: number } | undefined;
        // The acknowledged put, or a later one that landed but whose answer the kill cut off.
        expect(snapshot?.n, id).toBeGreaterThanOrEqual(n);
      }
      expect(store.report().damagedJournals).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
