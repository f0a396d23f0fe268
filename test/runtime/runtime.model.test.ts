/**
 * Model-based test of the whole runtime (issue 11): random sequences of discordSend, replies from
 * the target's bot or a human, time passing, stop()+start(), crashes between any two writes (while
 * sending, answering, starting or as time passes; with a write cut short before some) and two
 * processes starting at once, run against a small reference model of mentions (test/support/model/). After every command the runtime's mentions() agrees with
 * the model and Discord holds every reminder and escalation owed, once, at its due time.
 *
 * Each simulated process is a runtime in this process: `node:fs/promises` is wrapped so that a
 * process's calls can be cut off at a crash point (the kernel then closes its files), `process.pid`
 * and `process.kill(pid, 0)` see simulated pids, and a virtual clock drives its timers.
 *
 * Runs: 500 sequences with CI set, 50 otherwise, or A2A_MODEL_RUNS. A failure prints fast-check's
 * report with the seed, path and the commands' replay path; replay it exactly with
 *   A2A_MODEL_SEED=<seed> A2A_MODEL_PATH=<path> A2A_MODEL_REPLAY=<replayPath> npx vitest run test/runtime/runtime.model.test.ts
 */
import type * as FsPromises from "node:fs/promises";
import fc from "fast-check";
import { afterAll, beforeAll, describe, it, vi } from "vitest";
import { modelCommands } from "../support/model/commands.js";
import { simulateProcesses } from "../support/model/generations.js";
import { MentionModel } from "../support/model/mentionModel.js";
import { LIFECYCLE, MODEL_CONFIG, T0 } from "../support/model/settings.js";
import { SimulatedGateway } from "../support/model/simulatedGateway.js";

vi.mock("node:fs/promises", async (importOriginal) => {
  const { crashableFs } = await import("../support/model/crashableFs.js");
  return crashableFs(await importOriginal<typeof FsPromises>());
});

const env = process.env;
const RUNS = Number(env.A2A_MODEL_RUNS ?? (env.CI ? 500 : 50));
const replay =
  env.A2A_MODEL_SEED === undefined
    ? {}
    : { seed: Number(env.A2A_MODEL_SEED), ...(env.A2A_MODEL_PATH ? { path: env.A2A_MODEL_PATH } : {}) };

let restoreProcesses: () => void;
beforeAll(() => {
  restoreProcesses = simulateProcesses();
});
afterAll(() => restoreProcesses());

describe("the runtime against a model of mentions", () => {
  it(
    "keeps every acknowledged mention and posts each reminder and escalation once, on time, through stops, crashes and racing starts",
    { timeout: 170_000 },
    async () => {
      await fc.assert(
        fc.asyncProperty(modelCommands(env.A2A_MODEL_REPLAY), async (commands) => {
          const real = new SimulatedGateway(MODEL_CONFIG, T0);
          try {
            await real.start();
            await fc.asyncModelRun(
              () => ({
                model: { mentions: new MentionModel(LIFECYCLE), sends: 0, now: real.clock.now },
                real,
              }),
              commands,
            );
          } catch (error) {
            // The runtime's own words (stale lock taken over, corrupt journal…) explain most failures.
            if (error instanceof Error && real.warnings.length > 0)
              error.message += `\nruntime warnings:\n  ${real.warnings.join("\n  ")}`;
            throw error;
          } finally {
            await real.dispose();
          }
        }),
        { numRuns: RUNS, ...replay },
      );
    },
  );
});
