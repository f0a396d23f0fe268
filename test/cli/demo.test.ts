import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli as run } from "../support/cli.js";
import { SCENARIOS } from "../../src/cli/demo/scenarios.js";
import { emulatorToken, startDiscordEmulator } from "../../src/testing/index.js";
import { acquireStateDirLock } from "../../src/persistence/index.js";
import { tempDir } from "../support/tempDir.js";

/** A transition line: its scenario tag, actor and cause. */
const TRANSITION = /^ {2}\+\d\d:\d\d\.\d {2}(\[\d+ [\w-]+\])? +(\S.*?) {2,}\S+ → \S+ +(\S+)$/;

/**
 * The timeline a person can follow: every line (a warning aside) carries its scenario's tag, each
 * scenario's actors are between one pair of agents, no scenario is named by a design section, and a
 * child's final transition comes before the parent's transition it causes.
 */
function expectAFollowableTimeline(out: string): void {
  expect(out).not.toMatch(/design 00\d|§/);
  // Every timed line names its scenario but a warning, which belongs to none.
  for (const line of out.split("\n").filter((l) => /^ {2}\+\d\d:\d\d\.\d /.test(l))) {
    expect(line).toMatch(/^ {2}\+\d\d:\d\d\.\d {2}(\[\d+ [\w-]+\] +\S| +warning: )/);
  }
  const byTag = new Map<string, Array<{ actor: string; line: string; cause: string }>>();
  for (const line of out.split("\n")) {
    const m = TRANSITION.exec(line);
    if (m === null) continue;
    const [, tag, actor = "", cause = ""] = m;
    expect(tag, line).toBeDefined();
    const lines = byTag.get(tag ?? "") ?? [];
    lines.push({ actor, line, cause });
    byTag.set(tag ?? "", lines);
  }
  expect([...byTag.keys()].sort()).toEqual(
    ["restart", ...SCENARIOS.map((s) => s.key)].map((key, i) => `[${i + 1} ${key}]`).sort(),
  );
  for (const [tag, lines] of byTag) {
    const parties = new Set(lines.map((l) => /(\w+→\w+)/.exec(l.actor)?.[1]));
    expect([...parties], tag).toHaveLength(1);
    lines.forEach(({ actor, line, cause }, i) => {
      const child = /^xstate\.done\.actor\.(replyWait|pingPong|mention)$/.exec(cause)?.[1];
      if (child === undefined) return;
      const ofChild = (l: { actor: string }) => l.actor === `${actor} › ${child}`;
      expect(lines.slice(0, i).some(ofChild), line).toBe(true);
      // After the parent's line, that child only shows up again as a new one.
      const next = lines.slice(i + 1).find(ofChild);
      expect(next === undefined || /\((start|resumed)\) → /.test(next.line), `${line}\n${next?.line}`).toBe(
        true,
      );
    });
  }
}

describe("a2a-statecharts demo", () => {
  // The whole system: emulator, three discord.js bots, a gateway process killed with SIGKILL, the
  // restarted runtime. At 200× the 20 minutes of demo time take about 6 s.
  it("plays every scenario to its expected end on the emulator, and status lists the actors after", async () => {
    const dir = join(tempDir("a2a-demo-"), "state");
    const demo = await run("demo", "--speed", "200", "--state-dir", dir);
    expect(demo.err).toBe("");
    expect(demo.code, demo.out).toBe(0);
    const total = SCENARIOS.length + 1;
    expect(demo.out).toContain(`scenarios: ${total} reached their expected end, 0 did not`);
    expect(demo.out.match(/^ {2}✔ /gm)).toHaveLength(total);
    // The timeline shows the kill, the resumption and the reminder it still owed.
    expect(demo.out).toMatch(/killed with SIGKILL/);
    expect(demo.out).toMatch(/collaborate ruda→seum +\(resumed\) → awaitingResponse/);
    expect(demo.out).toMatch(/a2a\.mention\.escalated +seum, attempt 3\/3, 15 min/);
    expect(demo.out).toMatch(/escalations 1 ·/);
    expectAFollowableTimeline(demo.out);

    const status = await run("status", "--state-dir", dir, "--json");
    expect(status.code).toBe(0);
    const report = JSON.parse(status.out) as { actors: Array<{ machine: string; status: string }> };
    const machines = report.actors.map((a) => a.machine).sort();
    expect(machines.filter((m) => m === "collaborate")).toHaveLength(4);
    expect(machines.filter((m) => m === "a2aFlow")).toHaveLength(4);
  }, 90_000);

  it("wipes the state dir of a previous demo, and refuses a directory it did not make", async () => {
    const base = tempDir("a2a-demo-");
    const foreign = join(base, "foreign");
    mkdirSync(foreign);
    writeFileSync(join(foreign, "notes.txt"), "mine");
    const refused = await run("demo", "--state-dir", foreign);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`${foreign} holds files the demo did not make`);
    expect(readFileSync(join(foreign, "notes.txt"), "utf8")).toBe("mine");
    expect(existsSync(join(foreign, "a2a-demo.json"))).toBe(false);
  });

  it("rejects bad flags and values with one line naming them, exit 2", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--speed", "0"], /--speed must be a number above 0, got "0"/],
      [["--speed", "fast"], /--speed must be a number above 0, got "fast"/],
      [["--response-timeout=-5"], /--response-timeout must be a number above 0/],
      [["--token", "ruda=abc"], /needs a token for every agent; missing: eden, seum/],
      [["--token", "nobody=abc"], /--token must be AGENT=TOKEN with AGENT one of ruda, eden, seum/],
      [["--token", "ruda=a", "--token", "eden=b", "--token", "seum=c"], /real Discord needs --channel/],
      [
        ["--token", "ruda=a", "--token", "eden=b", "--token", "seum=c", "--channel", "1", "--speed", "60"],
        /--speed must be 1 with real Discord/,
      ],
      [["--discord-api", "http://127.0.0.1:1/api"], /--discord-api needs --token and --channel/],
      [["--bogus"], /--bogus/],
      [["extra"], /unexpected argument "extra"/],
    ];
    for (const [args, message] of cases) {
      const result = await run("demo", ...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.err, args.join(" ")).toMatch(message);
      expect(result.err.split("\n"), args.join(" ")).toHaveLength(1);
    }
  });
});

describe("a2a-statecharts demo against a Discord it does not start (the real-Discord path)", () => {
  it("logs the bots in with --token, runs at real speed, and skips only the scenario that needs the emulator", async () => {
    const bots = { ruda: "1400000000000000201", eden: "1400000000000000202", seum: "1400000000000000203" };
    const channel = "1400000000000000600";
    const discord = await startDiscordEmulator({
      channels: [{ id: channel, name: "collab" }],
      users: [
        ...Object.entries(bots).map(([name, id]) => ({ id, name, bot: true })),
        { id: "1400000000000000901", name: "human", bot: false },
      ],
    });
    try {
      const dir = join(tempDir("a2a-demo-"), "state");
      const tokens = Object.entries(bots).flatMap(([name, id]) => [
        "--token",
        `${name}=${emulatorToken(id)}`,
      ]);
      const demo = await run(
        "demo",
        ...tokens,
        "--channel",
        channel,
        "--human",
        "1400000000000000901",
        "--discord-api",
        discord.apiUrl,
        "--response-timeout",
        "1",
        "--state-dir",
        dir,
      );
      expect(demo.err).toBe("");
      expect(demo.code, demo.out).toBe(0);
      expect(demo.out).toContain("demo time runs 1× real time");
      expect(demo.out).toContain(`Discord: the Discord API at ${discord.apiUrl}`);
      expect(demo.out).toMatch(
        new RegExp(`scenarios: ${SCENARIOS.length} reached their expected end, 0 did not, 1 skipped`),
      );
      expect(demo.out).toContain("skipped: posting as the human needs the emulator");
      // The escalation pinged the human given with --human, in the Discord the bots were pointed at.
      const escalation = discord.messages().find((m) => m.content.startsWith("⚠️ 응답 없음"));
      expect(escalation?.mentionIds).toEqual(["1400000000000000901"]);
    } finally {
      await discord.close();
    }
  }, 90_000);

  it("reports a state dir held by a live process, and touches nothing in it", async () => {
    const dir = tempDir("a2a-demo-");
    writeFileSync(join(dir, "a2a-demo.json"), "{}\n");
    // Held by this process (the lock is per open file: the demo, running in-process here, is refused too).
    const lock = await acquireStateDirLock(dir);
    try {
      const content = readFileSync(join(dir, ".lock"), "utf8");
      const held = await run("demo", "--state-dir", dir);
      expect(held.code).toBe(1);
      expect(held.err).toContain(`state directory ${dir} is locked by process ${process.pid}`);
      expect(held.err.split("\n")).toHaveLength(1);
      expect(readFileSync(join(dir, ".lock"), "utf8")).toBe(content);
      expect(existsSync(join(dir, "a2a-demo.json"))).toBe(true);
    } finally {
      await lock.release();
    }
  });
});
