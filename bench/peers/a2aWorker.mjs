// This project in the peers benchmark: the workload as an XState machine on the durable host, on the
// lowdb store (PEER_JOB.stateDir) or the PostgreSQL store (PEER_JOB.connectionString). Plain node on the
// built dist/, importing what a user imports.
import { performance } from "node:perf_hooks";
import { createDurableHost } from "a2a-statecharts/durable";
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
import { workflowMachine } from "./workflow.mjs";

const job = readJob();
const effects = openEffects(job.effectsFile);

const workflow = workflowMachine((key, due) => effects.run(key, due));

const store =
  job.connectionString === undefined
    ? undefined
    : (await import("a2a-statecharts/postgres")).createPostgresStore({
        connectionString: job.connectionString,
      });
const host = createDurableHost({
  ...(store === undefined ? { stateDir: job.stateDir } : { store, instance: job.instance }),
  machines: { workflow: { machine: workflow, version: 1 } },
  ...(job.dormantAfterMs === undefined ? {} : { dormantAfterMs: job.dormantAfterMs }),
});
const started = performance.now();
await host.start();
tell({ event: "started", ms: performance.now() - started });
stopOnSigterm(() => host.stop());
if (job.create) {
  await createAll(job, (i) =>
    host.spawn("workflow", workflowId(i), {
      id: workflowId(i),
      createdAt: Date.now(),
      firstSleep: firstSleep(i, job),
      secondSleep: secondSleep(i, job),
    }),
  );
}
