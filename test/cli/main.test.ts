import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { runPolicyDemo } from "../../src/cli/policyDemo.js";

async function run(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    argv,
    (line: string) => out.push(line),
    (line: string) => err.push(line),
  );
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("a2a-statecharts CLI", () => {
  it("demo: every scenario reaches its expected end and the command says so", async () => {
    const results = runPolicyDemo(() => {});
    expect(results.length).toBeGreaterThanOrEqual(5);
    for (const r of results) expect(r.actual, r.name).toBe(r.expected);
    const { code, out } = await run("demo");
    expect(code).toBe(0);
    expect(out).toContain("a2a.retry");
    expect(out).toContain(`scenarios: ${results.length} reached their expected end, 0 did not`);
  });

  it("config: prints the defaults without a file and names the bad path of a bad file", async () => {
    const defaults = await run("config");
    expect(defaults.code).toBe(0);
    expect(JSON.parse(defaults.out).session.agentToAgent.maxPingPongTurns).toBe(5);

    const dir = mkdtempSync(join(tmpdir(), "a2a-cli-"));
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ discord: { a2aRetry: { maxAttempts: 0 } } }));
    const rejected = await run("config", bad);
    expect(rejected.code).toBe(1);
    expect(rejected.err).toContain("discord.a2aRetry.maxAttempts: must be a whole number ≥ 1, got 0");

    const broken = join(dir, "broken.json");
    writeFileSync(broken, "{ not json");
    const unreadable = await run("config", broken);
    expect(unreadable.code).toBe(1);
    expect(unreadable.err).toContain(`cannot read ${broken}`);
    expect((await run("config", join(dir, "missing.json"))).err).toContain("ENOENT");
  });

  it("answers --help and --version, and rejects unknown commands and flags with a one-line reason", async () => {
    expect((await run("--help")).out).toContain("a2a-statecharts demo");
    expect((await run("--version")).out).toMatch(/^\d+\.\d+\.\d+$/);
    const noCommand = await run();
    expect(noCommand.code).toBe(2);
    const unknown = await run("launch");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toBe('a2a-statecharts: unknown command "launch" (see --help)');
    const flag = await run("demo", "--bogus");
    expect(flag.code).toBe(2);
    expect(flag.err).toContain("--bogus");
    expect(flag.err.split("\n")).toHaveLength(1);
  });
});
