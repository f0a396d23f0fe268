// The gateway example (examples/gateway) is what a newcomer copies: run as a child process, as a user
// would run it, it must meet every outcome it checks, shut itself down with its SIGTERM handler and exit
// 0 on its own, and leave nothing in the temp folder. It imports the package by name; here that name
// maps to src/ (sources.tsconfig.json), so the test covers the code as it is, without a build.
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { expect, it } from "vitest";
import { tempDir } from "../support/tempDir.js";

const ROOT = resolve(import.meta.dirname, "../..");

it("the gateway example meets every outcome, stops on SIGTERM and exits 0, leaving no temp files", async () => {
  const tmp = tempDir("a2a-example-");
  const child = spawn(process.execPath, ["--import", "tsx", "examples/gateway/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      TMPDIR: tmp,
      TSX_TSCONFIG_PATH: resolve(import.meta.dirname, "sources.tsconfig.json"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once("exit", (c) => done(c)));

  // On failure: each failed scenario with its detail line, and what went to stderr.
  const failed = out.match(/^FAIL .*\n.*/gm) ?? [];
  expect({ code, failed, err: err.match(/^failed: .*/gm) ?? [] }).toEqual({ code: 0, failed: [], err: [] });
  expect(out).toMatch(/^ok {3}a human mentions ruda in the channel/m);
  expect(out).toMatch(/status ok, 2 ping-pong turns, ended by conclusion_detected/);
  expect(out).toMatch(/mention responded in thread \d+/);
  expect(out).toMatch(
    /exchange ended by (?!loop_guard)\w+ after [1-4] handled messages \(at most 4\), 0 loop-guard/,
  );
  expect(out).toMatch(/^4 scenarios, 0 failures$/m);
  expect(out).toMatch(/^stopped; exit code 0$/m);
  // Its state dir was a temp dir, removed at shutdown (tsx keeps a compile cache there; not ours).
  expect(readdirSync(tmp).filter((name) => !name.startsWith("tsx-"))).toEqual([]);
}, 30_000);
