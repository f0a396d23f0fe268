// A process hosting a race of two XState delays on a durable host (lowdb store in <stateDir>): region
// `slow` schedules its delay first, region `fast` falls due first; the first to fire wins. Each firing
// appends the region's name to <stateDir>/order.log.
//
// Usage: dueOrderChild.ts <stateDir> spawn <fastMs> <slowMs>
//   spawns actor "race-1", prints "due <fastDue> <slowDue>" once it is durable, then blocks its event
//   loop (no delay can fire) until it is killed.
// Usage: dueOrderChild.ts <stateDir> resume
//   resumes the stored actor, prints "ready <ms>", then "final <json>" ({ status, value, context })
//   once the actor is done, and stops.
import { appendFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createDurableHost } from "../../src/durable/index.js";
import { raceMachine } from "./conformance/race.js";

async function main(args: string[]): Promise<void> {
  const [stateDir = "", mode = "resume", fastMs = "0", slowMs = "0"] = args;
  const race = raceMachine((label) => appendFileSync(join(stateDir, "order.log"), `${label}\n`));
  const host = createDurableHost({
    stateDir,
    machines: { race: { machine: race, version: 1 } },
    logger: { warn: () => {} },
  });
  await host.start();
  if (mode === "spawn") {
    const startedAt = Date.now();
    await host.spawn("race", "race-1", { fastMs: Number(fastMs), slowMs: Number(slowMs) });
    const line = `due ${startedAt + Number(fastMs)} ${startedAt + Number(slowMs)}\n`;
    await new Promise<void>((written) => process.stdout.write(line, () => written()));
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    return;
  }
  process.stdout.write(`ready ${Date.now()}\n`);
  for (;;) {
    const info = await host.get("race-1");
    if (info !== undefined && info.status !== "active") {
      const { status, value, context } = info;
      process.stdout.write(`final ${JSON.stringify({ status, value, context })}\n`);
      break;
    }
    await new Promise((done) => setTimeout(done, 20));
  }
  await host.stop();
}

// Imported by the test for the machine only; run as a script, it hosts the race.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv.slice(2));
}
