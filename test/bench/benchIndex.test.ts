// `npm run bench` (bench/index.ts): the flags after a benchmark's name reach that benchmark. Each case
// ends at once: scale.bench.ts checks its flags before it does anything.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

async function bench(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "bench/index.ts", ...args],
      { cwd: root, env: { ...process.env, ...env } },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("npm run bench", () => {
  it("passes the flags after a benchmark's name on to it, over its environment variable", async () => {
    // SCALE_SIZES would be read if the flag were lost: it is just as invalid, so nothing long runs.
    const run = await bench(["scale", "--sizes", "5"], { SCALE_SIZES: "7" });
    expect(run.stderr).toContain(
      "--sizes takes whole numbers ≥ 132 (one per agent pair), comma-separated; got 5",
    );
    expect(run.stdout).toMatch(/\| scale\.bench\.ts \| [\d.]+ \| exit code 1 \|/);
    expect(run.code).toBe(1);
  });

  it("checks the peers benchmark's flags before it installs or starts anything", async () => {
    const run = await bench(["peers", "--systems", "lowdb,temporal"]);
    expect(run.stderr).toContain("unknown system temporal: one of lowdb, pg1, pg2, dbos, pgboss");
    expect(run.code).toBe(1);
  });

  it("refuses flags that no single benchmark is named for, running none", async () => {
    const run = await bench(["--seconds", "1"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--seconds 1 is for one benchmark: name it first");
    expect(run.stdout).toBe("");
  });
});
