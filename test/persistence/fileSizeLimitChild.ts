/**
 * Child of journalFileSizeLimit.test.ts, run under `ulimit -f`: puts records into a LowdbSnapshotStore in
 * `argv[2]` one at a time and prints `ack <id> <n>` once a put resolved (acknowledged), `failed <n>`
 * when it failed. A failed put is retried with flush(); after FAILURES_TO_STOP failures in a row (or
 * MAX_PUTS puts) it prints `stuck` and waits to be killed. The parent SIGKILLs it and checks that every acknowledged put is on disk.
 */
import { LowdbSnapshotStore } from "../../src/persistence/index.js";

const FAILURES_TO_STOP = 3;
const MAX_PUTS = 1500;
const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: fileSizeLimitChild.ts <state dir>");

const store = await LowdbSnapshotStore.open({
  dir,
  machineVersions: { mention: 1 },
  onWarning: (message) => process.stderr.write(`${message}\n`),
});
const filler = "x".repeat(1500);
let failures = 0;
for (let n = 0; failures < FAILURES_TO_STOP && n < MAX_PUTS; n++) {
  const id = `m${n % 40}`;
  try {
    await store.put({
      id,
      machineId: "mention",
      machineVersion: 1,
      snapshot: { value: "waiting", n, filler },
      status: "active",
      updatedAt: n,
    });
    process.stdout.write(`ack ${id} ${n}\n`);
    failures = 0;
  } catch {
    failures += 1;
    process.stdout.write(`failed ${n}\n`);
    await store.flush().catch(() => undefined);
  }
}
process.stdout.write("stuck\n");
setInterval(() => undefined, 60_000);
