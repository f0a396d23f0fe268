// A lowdb store's put is durable once it resolves: a process SIGKILLed right after loses nothing.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { createLowdbStore } from "../../src/persistence/index.js";
import { STORE_T0 } from "../support/storeRecords.js";
import { tempDir } from "../support/tempDir.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Batches acknowledged before the kill: enough that a few compactions (journalMaxBytes 4096) ran. */
const KILL_AFTER = 30;

it("keeps every batch whose put resolved when the process is SIGKILLed right after", async () => {
  const stateDir = tempDir("a2a-store-kill-");
  const child = spawn(process.execPath, ["--import", "tsx", "test/persistence/storeKillChild.ts", stateDir], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  let acked = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    acked = (JSON.parse(line) as { acked: number }).acked;
    if (acked >= KILL_AFTER) {
      child.kill("SIGKILL"); // at once: the child is already putting the next batch
      break;
    }
  }
  expect(await exited, stderr).toBe("SIGKILL");
  expect(acked).toBe(KILL_AFTER);

  const store = createLowdbStore({ stateDir, shards: 4 });
  const report = await store.open({
    now: Date.now,
    rules: { machineVersions: { mention: 2 } },
    onWarning: () => {},
  });
  try {
    expect(report.damagedJournals).toEqual([]);
    expect((await store.get("a"))?.updatedAt).toBeGreaterThanOrEqual(STORE_T0 + acked);
    const ids = new Set((await store.list("live")).map((record) => record.id));
    for (let n = 1; n <= acked; n++) expect(ids.has(`r${n}`), `r${n}`).toBe(true);
  } finally {
    await store.close();
  }
});
