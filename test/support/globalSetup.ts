/**
 * vitest `globalSetup`: the whole run gets a temp folder of its own (TMPDIR, so os.tmpdir() in tests
 * and in the processes they spawn points into it); when the run ends, anything still in it is a
 * test that did not clean up, and fails the run (the folder is then kept for a look; on a clean run
 * it is removed).
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Left there by tools, not by our tests: tsx's compile cache (`tsx-<uid>`). */
const NOT_OURS = /^tsx-/;

export default function setup(): () => void {
  // Each vitest project runs the global setup again in the same process: the first one's folder serves all.
  if (process.env.A2A_TEST_RUN_DIR !== undefined) return () => undefined;
  const previous = process.env.TMPDIR;
  const runDir = mkdtempSync(join(tmpdir(), "a2a-test-run-"));
  process.env.TMPDIR = runDir;
  process.env.A2A_TEST_RUN_DIR = runDir;
  return () => {
    delete process.env.A2A_TEST_RUN_DIR;
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    const left = readdirSync(runDir).filter((name) => !NOT_OURS.test(name));
    if (left.length === 0) {
      rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
      return;
    }
    // Kept for a look (a failed crash test keeps its state dir on purpose). A throw here would only be
    // printed: the exit code is what fails the run.
    process.exitCode = 1;
    console.error(
      `\nFAIL: tests left ${left.length} entries in ${runDir} (test/support/tempDir.ts removes what it makes): ${left.join(", ")}\n`,
    );
  };
}
