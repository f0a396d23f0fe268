// This project in the peers benchmark: the workload as an XState machine on the durable host, on the
// lowdb store (PEER_JOB.stateDir) or the PostgreSQL store (PEER_JOB.connectionString). Plain node on the
// built dist/, importing what a user imports.
import { performance } from "node:perf_hooks";
import { assign, fromPromise, setup } from "xstate";
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

const job = readJob();
const effects = openEffects(job.effectsFile);

const workflow = setup({
  actors: { effect: fromPromise(async ({ input }) => effects.run(input.key, input.due)) },
  delays: {
    firstSleep: ({ context }) => context.firstSleep,
    secondSleep: ({ context }) => context.secondSleep,
  },
}).createMachine({
  id: "workflow",
  context: ({ input }) => ({ ...input, firstDoneAt: 0 }),
  initial: "sleeping",
  states: {
    sleeping: { after: { firstSleep: "first" } },
    first: {
      invoke: {
        src: "effect",
        input: ({ context }) => ({ key: `${context.id}#1`, due: context.createdAt + context.firstSleep }),
        onDone: { target: "sleepingAgain", actions: assign({ firstDoneAt: ({ event }) => event.output }) },
      },
    },
    sleepingAgain: { after: { secondSleep: "second" } },
    second: {
      invoke: {
        src: "effect",
        input: ({ context }) => ({ key: `${context.id}#2`, due: context.firstDoneAt + context.secondSleep }),
        onDone: "done",
      },
    },
    done: { type: "final" },
  },
});

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
