// The peers benchmark's workload, the same for every system: workflow i sleeps durably for
// firstSleep(i), runs effect 1 exactly once, sleeps secondSleep(i), runs effect 2 exactly once. The
// effects append to one file that the orchestrator reads; each line says when the effect ran and when it
// was due, so lateness, losses, duplicates and re-runs are counted the same way for everyone.
import { performance } from "node:perf_hooks";
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";

/** The job a worker gets from the orchestrator, as JSON in PEER_JOB. */
export function readJob() {
  const text = process.env.PEER_JOB;
  if (text === undefined)
    throw new Error("a peers worker needs PEER_JOB (run it through bench/peers.bench.ts)");
  return JSON.parse(text);
}

/** 5–15 s, spread evenly by the workflow's number (no randomness: every system gets the same sleeps). */
export function firstSleep(i, job) {
  return job.sleepMinMs + ((i * 7919) % (job.sleepMaxMs - job.sleepMinMs + 1));
}
export function secondSleep(i, job) {
  return job.sleepMinMs + ((i * 104_729 + 13) % (job.sleepMaxMs - job.sleepMinMs + 1));
}
export const workflowId = (i) => `wf-${i}`;

/**
 * The effects file, opened for appending. `run(key, due)` is the effect: the first run of a key writes
 * a line; a later run of a key already written (after a restart, or a peer's retry) is a re-run,
 * written as such and not repeated: the idempotency key every system is told to give its effects.
 */
export function openEffects(file) {
  const seen = new Set();
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line === "") continue;
      seen.add(JSON.parse(line).key);
    }
  }
  const fd = openSync(file, "a");
  const write = (entry) => writeSync(fd, `${JSON.stringify({ ...entry, pid: process.pid })}\n`);
  return {
    run(key, due) {
      const at = Date.now();
      if (seen.has(key)) {
        write({ key, at, due, rerun: true });
        return at;
      }
      seen.add(key);
      write({ key, at, due });
      return at;
    },
    close: () => closeSync(fd),
  };
}

/** A line on stdout for the orchestrator. */
export function tell(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Creates workflows first..last-1 with `create(i)` (resolving once durable), `window` at a time; tells how long it took. */
export async function createAll(job, create) {
  const started = performance.now();
  let next = job.first;
  const lane = async () => {
    while (next < job.last) {
      const i = next;
      next += 1;
      await create(i);
    }
  };
  await Promise.all(Array.from({ length: job.window }, lane));
  tell({ event: "created", count: job.last - job.first, ms: performance.now() - started });
}

/** SIGTERM: `stop()` then exit, for the orchestrator's clean end of a run. */
export function stopOnSigterm(stop) {
  process.once("SIGTERM", () => {
    void Promise.resolve()
      .then(stop)
      .finally(() => process.exit(0));
  });
}
