import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli as run } from "../support/cli.js";
import { tempDir } from "../support/tempDir.js";

describe("a2a-statecharts CLI", () => {
  it("config: prints the defaults without a file and names the bad path of a bad file", async () => {
    const defaults = await run("config");
    expect(defaults.code).toBe(0);
    expect(JSON.parse(defaults.out).session.agentToAgent.maxPingPongTurns).toBe(5);

    const dir = tempDir("a2a-cli-");
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
    for (const command of ["demo", "status", "diagram", "config"]) {
      const help = await run(command, "--help");
      expect(help.code, command).toBe(0);
      expect(help.out, command).toMatch(new RegExp(`Usage:\\s+a2a-statecharts ${command}`));
    }
    const flag = await run("demo", "--bogus");
    expect(flag.code).toBe(2);
    expect(flag.err).toContain("--bogus");
    expect(flag.err.split("\n")).toHaveLength(1);
  });
});
