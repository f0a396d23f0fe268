// Child of storeKill.test.ts: puts batches into a lowdb store as fast as it can and prints
// {"acked":n} once batch n's put resolved; the parent SIGKILLs it mid-stream.
//
//   node --import tsx test/persistence/storeKillChild.ts <stateDir>
//
// Batch n puts "a" (updatedAt T0 + n, rewritten every batch) and a new record "r<n>".
import { createLowdbStore } from "../../src/persistence/index.js";
import { STORE_T0, storeRecord } from "../support/storeRecords.js";

const [stateDir] = process.argv.slice(2);
if (stateDir === undefined) throw new Error("usage: storeKillChild.ts <stateDir>");

// A small journal: compactions fold it into the shard files while batches go on, so a kill can land in one.
const store = createLowdbStore({ stateDir, shards: 4, journalMaxBytes: 4096 });
await store.open({ now: Date.now, rules: { machineVersions: { mention: 2 } }, onWarning: () => {} });
for (let n = 1; ; n++) {
  await store.put([storeRecord("a", { updatedAt: STORE_T0 + n }), storeRecord(`r${n}`)]);
  process.stdout.write(`${JSON.stringify({ acked: n })}\n`);
}
