/**
 * Runs in every test file (vitest `setupFiles`): removes the file's temp dirs when it is done, and
 * fails the file if a FileHandle was left for the garbage collector to close (Node's DEP0137): some
 * code path opened a file and never closed it.
 */
import { afterAll } from "vitest";
import { removeTempDirs } from "./tempDir.js";

let leaked = 0;
process.on("warning", (warning: Error & { code?: string }) => {
  if (warning.code === "DEP0137") leaked += 1;
});

afterAll(async () => {
  removeTempDirs();
  // A leaked FileHandle is only reported when it is collected: collect now (--expose-gc, see
  // vitest.config.ts) and give the warning, emitted on a later tick, time to arrive.
  (globalThis as { gc?: () => void }).gc?.();
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  if (leaked > 0) {
    const count = leaked;
    leaked = 0;
    throw new Error(
      `${count} FileHandle(s) of this test file were closed by the garbage collector (DEP0137): a code path ` +
        `opened a file and never closed it. Close every handle in a finally block, on failure paths too.`,
    );
  }
});
