// pg-boss in the peers benchmark: the workload as two delayed jobs (startAfter). Effect 1's job sends the
// job of effect 2; a job a killed worker held runs again once it expires (expireInSeconds), found by the
// maintenance loop, so both are short here: with pg-boss's defaults (15 min, 2 min) a kill would stall
// the run for minutes.
import { performance } from "node:perf_hooks";
import PgBoss from "pg-boss";
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
const QUEUE_OPTIONS = { expireInSeconds: 10, retryLimit: 1_000, retryDelay: 0 };
const WORK_OPTIONS = { pollingIntervalSeconds: 0.5, batchSize: 200 };

const boss = new PgBoss({ connectionString: job.connectionString, maintenanceIntervalSeconds: 5 });
boss.on("error", (error) => console.error(`pg-boss: ${error.message}`));
const started = performance.now();
await boss.start();
await boss.createQueue("first", QUEUE_OPTIONS);
await boss.createQueue("second", QUEUE_OPTIONS);
await boss.work("first", WORK_OPTIONS, async (jobs) => {
  for (const { data } of jobs) {
    const at = effects.run(`${workflowId(data.i)}#1`, data.due);
    const due = at + secondSleep(data.i, job);
    await boss.send("second", { i: data.i, due }, { startAfter: new Date(due) });
  }
});
await boss.work("second", WORK_OPTIONS, async (jobs) => {
  for (const { data } of jobs) effects.run(`${workflowId(data.i)}#2`, data.due);
});
tell({ event: "started", ms: performance.now() - started });
stopOnSigterm(() => boss.stop({ graceful: false, wait: true }));
if (job.create) {
  await createAll(job, (i) => {
    const due = Date.now() + firstSleep(i, job);
    return boss.send("first", { i, due }, { startAfter: new Date(due) });
  });
}
