import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { statechartDocs } from "../../src/machines/index.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tempDir.js";

describe("a2a-statecharts diagram", () => {
  it("writes one page per machine and an index, then --check finds them fresh, stale or orphaned", async () => {
    const out = join(tempDir("a2a-diagram-"), "statecharts");
    const written = await runCli("diagram", "--out", out);
    expect(written.code).toBe(0);
    const docs = statechartDocs();
    expect(readdirSync(out).sort()).toEqual(docs.map((d) => basename(d.file)).sort());
    for (const doc of docs) expect(readFileSync(join(out, basename(doc.file)), "utf8")).toBe(doc.content);
    expect(written.out).toMatch(/created +.*mentionMachine\.md/);

    const again = await runCli("diagram", "--out", out);
    expect(again.out).toMatch(/unchanged .*mentionMachine\.md/);

    expect((await runCli("diagram", "--out", out, "--check")).code).toBe(0);
    const page = join(out, "mentionMachine.md");
    writeFileSync(page, "edited by hand\n");
    writeFileSync(join(out, "oldMachine.md"), "a machine that is gone\n");
    const stale = await runCli("diagram", "--out", out, "--check");
    expect(stale.code).toBe(1);
    expect(stale.err).toContain(`stale:   ${page}`);
    expect(stale.err).toContain(`orphan:  ${join(out, "oldMachine.md")}`);
    // --check writes nothing.
    expect(readFileSync(page, "utf8")).toBe("edited by hand\n");

    const missing = join(tempDir("a2a-diagram-"), "none");
    const none = await runCli("diagram", "--out", missing, "--check");
    expect(none.code).toBe(1);
    expect(none.err).toContain("missing:");
    expect(existsSync(missing)).toBe(false);
  });

  // Two cold starts of the CLI through tsx: seconds each on a busy machine, so more than the default 5 s.
  it("in another project, writes nothing there: the pages go to stdout, and --check asks for --out", async () => {
    const project = tempDir("a2a-diagram-consumer-");
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "my-gateway", private: true }));
    const root = resolve(import.meta.dirname, "../..");
    // tsx by its path: the project has none of our packages.
    const tsx = pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href;
    const bin = join(root, "src/cli/bin.ts");
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, ["--import", tsx, bin, "diagram", ...args], {
        cwd: project,
        env: { ...process.env, TSX_TSCONFIG_PATH: join(root, "tsconfig.json") },
      });

    const printed = await run();
    expect(printed.stdout).toContain(statechartDocs()[0]?.content);
    expect(printed.stdout).toContain("stateDiagram-v2");
    expect(readdirSync(project)).toEqual(["package.json"]);

    const check = await run("--check").catch((error: { code: number; stderr: string }) => error);
    expect(check).toMatchObject({ code: 2, stderr: expect.stringContaining("--check needs --out") });
  }, 30_000);

  it("rejects unknown flags with one line, exit 2", async () => {
    const bad = await runCli("diagram", "--format", "svg");
    expect(bad.code).toBe(2);
    expect(bad.err.split("\n")).toHaveLength(1);
    expect(bad.err).toContain("--format");
  });
});
