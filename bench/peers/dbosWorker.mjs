// DBOS Transact in the peers benchmark: the workload as a DBOS workflow (durable DBOS.sleep, each effect
// a step) on PostgreSQL. DBOS recovers the workflows this executor left pending when it launches again.
import { performance } from "node:perf_hooks";
import { DBOS } from "@dbos-inc/dbos-sdk";
import {
  createAll,
  firstSleep,
  openEffects,
  readJob,
  secondSleep,
  stopOnSigterm,
  tell,
  workflowId,
} from "./workload.mjs";

const job = readJob();
const effects = openEffects(job.effectsFile);

const workflow = DBOS.registerWorkflow(
  async (i, createdAt) => {
    const first = firstSleep(i, job);
    const second = secondSleep(i, job);
    await DBOS.sleep(first);
    const firstDoneAt = await DBOS.runStep(async () => effects.run(`${workflowId(i)}#1`, createdAt + first), {
      name: "first",
    });
    await DBOS.sleep(second);
    await DBOS.runStep(async () => effects.run(`${workflowId(i)}#2`, firstDoneAt + second), {
      name: "second",
    });
  },
  { name: "workflow" },
);

DBOS.setConfig({ name: "peers", systemDatabaseUrl: job.connectionString, logLevel: "error" });
const started = performance.now();
await DBOS.launch();
tell({ event: "started", ms: performance.now() - started });
stopOnSigterm(() => DBOS.shutdown());
if (job.create) {
  await createAll(job, (i) => DBOS.startWorkflow(workflow, { workflowID: workflowId(i) })(i, Date.now()));
}
