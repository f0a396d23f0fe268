// scripts/smoke-discord.mjs, the real-Discord smoke test, run as a child process against the emulator
// (DISCORD_SMOKE_API_URL) on src/ (DISCORD_SMOKE_FROM_SOURCE=1 under tsx: the suite runs without a build),
// with the reminder after 1.5 s instead of 30 s.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DiscordEmulator, emulatorToken, startDiscordEmulator } from "../../src/testing/index.js";
import { until } from "../support/discordClients.js";

const ROOT = resolve(import.meta.dirname, "../..");
const GUILD = "1700000000000000001";
const CHANNEL = "1700000000000000010";
const REQUESTER = "1700000000000000101";
const TARGET = "1700000000000000102";
const OWNER = "1700000000000000103";
const HUMAN = "1700000000000000900";
const TOKENS = [REQUESTER, TARGET, OWNER].map(emulatorToken).join(",");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let running: ChildProcess | undefined;

/** The script in a child process with only the DISCORD_SMOKE_* variables given here. */
function runScript(env: Record<string, string>, whileRunning?: () => Promise<void>): Promise<Run> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("DISCORD_SMOKE_")),
  );
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/smoke-discord.mjs"], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running = child;
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Run>((done) => child.once("exit", (code) => done({ code, stdout, stderr })));
  return Promise.all([exited, whileRunning?.()]).then(([run]) => run);
}

let emulator: DiscordEmulator;

beforeEach(async () => {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: CHANNEL, name: "smoke" }],
    users: [
      { id: REQUESTER, name: "requester-bot", bot: true },
      { id: TARGET, name: "target-bot", bot: true },
      { id: OWNER, name: "owner-bot", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
  });
});

afterEach(async () => {
  // Only a test that failed half-way leaves the script running.
  if (running?.exitCode === null && running.signalCode === null) running.kill("SIGKILL");
  running = undefined;
  await emulator.close();
});

const against = (more: Record<string, string> = {}) => ({
  DISCORD_SMOKE_TOKENS: TOKENS,
  DISCORD_SMOKE_CHANNEL_ID: CHANNEL,
  DISCORD_SMOKE_API_URL: emulator.apiUrl,
  DISCORD_SMOKE_FROM_SOURCE: "1",
  DISCORD_SMOKE_REMINDER_MS: "1500",
  ...more,
});

/** The bots' posts in the run's one thread (Discord's system messages left out). */
function threadPosts() {
  const threads = emulator.threads();
  expect(threads).toHaveLength(1);
  const threadId = threads[0]?.id ?? "";
  return { threadId, posts: emulator.messages(threadId).filter((m) => m.content !== "") };
}

describe("smoke:discord", () => {
  it("runs the timeline: the request, one reminder, one escalation pinging the owner's bot; exit 0 and the checklist", async () => {
    const run = await runScript(against());
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const { threadId, posts } = threadPosts();
    expect(posts.map((m) => [m.authorId, m.content.split("\n")[0], m.mentionIds])).toEqual([
      [REQUESTER, expect.stringMatching(new RegExp(`^<@${TARGET}> smoke test of a2a-statecharts`)), [TARGET]],
      [REQUESTER, `[리마인더 1/2] <@${TARGET}> 위 요청에 대해 확인 부탁해요.`, [TARGET]],
      [REQUESTER, "⚠️ 응답 없음 (2회 시도, 0분 경과)", [OWNER]],
    ]);
    expect(posts[2]?.content).toContain(`<@${OWNER}> 확인 필요`);
    const out = run.stdout;
    expect(out).toContain(`Look at it in Discord: https://discord.com/channels/${GUILD}/${threadId}`);
    expect(out).toMatch(/1\. the request, right away: pings @target-bot\n/);
    expect(out).toMatch(
      /2\. the reminder, about 2 s later: pings @target-bot again\n +\[리마인더 1\/2\] @target-bot/,
    );
    expect(out).toMatch(
      /3\. the escalation, about 2 s after that: pings @owner-bot \(the owner's bot\) only; names @target-bot without pinging it\n/,
    );
    expect(out).toContain("Must not be there: a second copy of any of them");
    expect(out).toContain("✔ the reminder is in the thread once");
    expect(out).toContain("✔ the escalation pings @owner-bot only");
    expect(out).not.toContain("✘");
    expect(out).toMatch(/mentions\(\): \S+ → target: escalated, attempts 2/);
    expect(out).toMatch(/smoke:discord passed in [\d.]+ s: reminded and escalated once each\n$/);
  }, 60_000);

  it("with DISCORD_SMOKE_HUMAN_ID and DISCORD_SMOKE_LOCALE=en, the escalation pings that person, in English", async () => {
    const run = await runScript(against({ DISCORD_SMOKE_HUMAN_ID: HUMAN, DISCORD_SMOKE_LOCALE: "en" }));
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const { posts } = threadPosts();
    expect(posts.map((m) => [m.content.split("\n")[0], m.mentionIds])).toEqual([
      [expect.stringContaining("smoke test"), [TARGET]],
      [`[Reminder 1/2] <@${TARGET}> could you take a look at the request above?`, [TARGET]],
      ["⚠️ No response (2 attempts, 0 min)", [HUMAN]],
    ]);
    expect(run.stdout).toContain(`pings the user ${HUMAN} only`);
    expect(run.stdout).toContain("✔ the owner's bot got 0 pings over its gateway");
  }, 60_000);

  it("fails (exit 1) when the thread holds a message that must not be there, and names it", async () => {
    const run = await runScript(against(), async () => {
      await until(() => emulator.threads().length === 1, "the thread", 30_000);
      const threadId = emulator.threads()[0]?.id ?? "";
      await emulator.postAsUser({ userId: OWNER, channelId: threadId, content: "an extra message" });
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('✘ nothing else is posted in the thread (1 more: "an extra message")');
    expect(run.stderr).toMatch(/^smoke:discord failed after [\d.]+ s: nothing else is posted in the thread/);
  }, 60_000);

  it("fails (exit 1) when a reminder is in the thread twice", async () => {
    const run = await runScript(against(), async () => {
      await until(() => emulator.threads().length === 1, "the thread", 30_000);
      const threadId = emulator.threads()[0]?.id ?? "";
      const reminder = () => emulator.messages(threadId).find((m) => m.content.startsWith("[리마인더 1/2]"));
      await until(() => reminder() !== undefined, "the reminder", 30_000);
      await emulator.postAsUser({
        userId: REQUESTER,
        channelId: threadId,
        content: reminder()?.content ?? "",
      });
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("✘ the reminder is in the thread 2 times");
    expect(run.stdout).toContain("✔ the escalation is in the thread once");
    expect(run.stderr).toMatch(
      /^smoke:discord failed after [\d.]+ s: the reminder is in the thread 2 times\n$/,
    );
  }, 60_000);

  it("without tokens and channel: one line saying it is skipped and what to set, exit 0", async () => {
    const run = await runScript({});
    expect(run).toEqual({
      code: 0,
      stdout:
        "smoke:discord skipped: set DISCORD_SMOKE_TOKENS (three bot tokens, comma-separated: requester, target, " +
        "owner) and DISCORD_SMOKE_CHANNEL_ID to run it on a Discord server (docs/discord-smoke.md)\n",
      stderr: "",
    });
  });

  it.each([
    [
      "no tokens",
      { DISCORD_SMOKE_CHANNEL_ID: CHANNEL },
      "DISCORD_SMOKE_TOKENS is not set: three bot tokens, comma-separated (requester, target, owner)",
    ],
    [
      "no channel",
      { DISCORD_SMOKE_TOKENS: TOKENS },
      "DISCORD_SMOKE_CHANNEL_ID is not set: the id of a server text channel",
    ],
    [
      "two tokens",
      { DISCORD_SMOKE_TOKENS: "a.b.c,d.e.f", DISCORD_SMOKE_CHANNEL_ID: CHANNEL },
      "DISCORD_SMOKE_TOKENS must hold three bot tokens separated by commas (requester, target, owner); it holds 2",
    ],
    [
      "a token twice",
      { DISCORD_SMOKE_TOKENS: "a.b.c,d.e.f,a.b.c", DISCORD_SMOKE_CHANNEL_ID: CHANNEL },
      "DISCORD_SMOKE_TOKENS[0] and [2] are the same token",
    ],
    [
      "a channel name",
      { DISCORD_SMOKE_TOKENS: TOKENS, DISCORD_SMOKE_CHANNEL_ID: "#smoke" },
      'DISCORD_SMOKE_CHANNEL_ID must be a Discord id (17 to 20 digits), got "#smoke"',
    ],
    [
      "a human name",
      { DISCORD_SMOKE_TOKENS: TOKENS, DISCORD_SMOKE_CHANNEL_ID: CHANNEL, DISCORD_SMOKE_HUMAN_ID: "me" },
      'DISCORD_SMOKE_HUMAN_ID must be a Discord user id (17 to 20 digits), got "me"',
    ],
    [
      "a reminder in seconds",
      { DISCORD_SMOKE_TOKENS: TOKENS, DISCORD_SMOKE_CHANNEL_ID: CHANNEL, DISCORD_SMOKE_REMINDER_MS: "30s" },
      'DISCORD_SMOKE_REMINDER_MS must be a whole number of milliseconds above 0, got "30s"',
    ],
    [
      "an unknown locale",
      { DISCORD_SMOKE_TOKENS: TOKENS, DISCORD_SMOKE_CHANNEL_ID: CHANNEL, DISCORD_SMOKE_LOCALE: "fr" },
      'DISCORD_SMOKE_LOCALE must be ko or en, got "fr"',
    ],
  ])("a bad value (%s): one line naming the variable, exit 1", async (_, env, message) => {
    expect(await runScript(env)).toEqual({ code: 1, stdout: "", stderr: `smoke:discord: ${message}\n` });
  });

  it("a token Discord refuses: exit 1 naming it, nothing posted", async () => {
    const tokens = [emulatorToken(REQUESTER), "not-a-bot-token", emulatorToken(OWNER)].join(",");
    const run = await runScript(against({ DISCORD_SMOKE_TOKENS: tokens }));
    expect(run).toEqual({
      code: 1,
      stdout: "",
      stderr: "smoke:discord: DISCORD_SMOKE_TOKENS[1] was refused by Discord (401): not a valid bot token\n",
    });
    expect(emulator.messages()).toEqual([]);
  });

  it("a channel the bots cannot see: exit 1 naming DISCORD_SMOKE_CHANNEL_ID", async () => {
    const run = await runScript(against({ DISCORD_SMOKE_CHANNEL_ID: "1700000000000000099" }));
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "smoke:discord: DISCORD_SMOKE_CHANNEL_ID 1700000000000000099: DISCORD_SMOKE_TOKENS[0] (the requester's bot) " +
        "cannot see it (404 Unknown Channel); invite the bot to the server and let it view the channel\n",
    );
  });

  it(
    "a channel the requester may not post in: exit 1 naming the permissions it needs",
    { timeout: 60_000 },
    async () => {
      emulator.deny(CHANNEL, REQUESTER);
      const run = await runScript(against());
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^smoke:discord: DISCORD_SMOKE_CHANNEL_ID 1700000000000000010: the requester's bot \(DISCORD_SMOKE_TOKENS\[0\]\) may not post or open a thread there \(.*\); it needs View Channel, Send Messages, Create Public Threads, Send Messages in Threads and Read Message History\n$/,
      );
    },
  );
});
