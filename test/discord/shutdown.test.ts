// The README's SIGTERM handler ends a gateway for real: a child running it (two discord.js bots against
// the emulator, the runtime, the bridge) gets SIGTERM while messages still arrive, and exits by itself,
// code 0, within 5 s, without an error on stderr.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { DiscordEmulator } from "../../src/testing/index.js";
import { startTwoBotEmulator } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CHANNEL = "1600000000000000010";
const RUDA = "1600000000000000101";
const EDEN = "1600000000000000102";
const HUMAN = "1600000000000000900";

let emulator: DiscordEmulator;
let child: ChildProcess | undefined;

beforeEach(async () => {
  emulator = await startTwoBotEmulator({
    guild: "1600000000000000001",
    channel: CHANNEL,
    ruda: RUDA,
    eden: EDEN,
    human: HUMAN,
  });
});

afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  await emulator.close();
});

it("SIGTERM: the README's handler detaches, stops and destroys the clients, and the process exits 0 within 5 s", async () => {
  const stateDir = tempDir("a2a-shutdown-");
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", "test/discord/shutdownChild.ts", emulator.apiUrl, stateDir, CHANNEL, RUDA, EDEN],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  child = proc;
  let stderr = "";
  proc.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    proc.once("exit", (code, signal) => done({ code, signal })),
  );
  for await (const line of createInterface({ input: proc.stdout as NodeJS.ReadableStream })) {
    if (line === "ready") break;
  }
  const say = (n: number) =>
    emulator.postAsUser({ userId: HUMAN, channelId: CHANNEL, content: `<@${EDEN}> 확인 ${n}` });
  await say(1);
  proc.kill("SIGTERM");
  await say(2); // arrives while it stops
  const outcome = await Promise.race([
    exited,
    new Promise<"still running">((done) => setTimeout(() => done("still running"), 5_000).unref()),
  ]);
  expect(outcome).toEqual({ code: 0, signal: null });
  expect(stderr).not.toMatch(/Error|at .*\(/);
}, 30_000);
