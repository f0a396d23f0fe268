// A process hosting a generic machine (not one of the project's) on a durable host: a parent invokes
// a child machine that waits `after: { 3000 }`; when the wait fires, the parent appends the time to
// `fired.log`. Usage: hostChild.ts <stateDir> <spawn|resume>. Prints "ready <ms>" once started (and,
// with spawn, once the actor is durable), and "due <ms>" with the wait's due time.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { createMachine, setup } from "xstate";
import { createDurableHost } from "../../src/durable/index.js";

const [stateDir = "", mode = "resume"] = process.argv.slice(2);

const waiter = createMachine({
  id: "waiter",
  initial: "waiting",
  states: { waiting: { after: { 3000: "done" } }, done: { type: "final" } },
});

const job = setup({
  actors: { waiter },
  actions: { recordFired: () => appendFileSync(join(stateDir, "fired.log"), `${Date.now()}\n`) },
}).createMachine({
  id: "job",
  initial: "running",
  states: {
    running: { invoke: { src: "waiter", onDone: { target: "finished", actions: "recordFired" } } },
    finished: { type: "final" },
  },
});

const host = createDurableHost({
  stateDir,
  machines: { job: { machine: job, version: 1 } },
  logger: { warn: () => {} },
});
await host.start();
if (mode === "spawn") {
  const startedAt = Date.now();
  await host.spawn("job", "job-1");
  process.stdout.write(`due ${startedAt + 3000}\n`);
}
process.stdout.write(`ready ${Date.now()}\n`);
process.on("SIGTERM", () => void host.stop().then(() => process.exit(0)));
setInterval(() => {}, 1_000);
