// The gateway example (examples/gateway) and the README's embedding code are what a newcomer copies
// first. Run as a user would run them (a child process, tsx), each must do what it claims, shut down
// with its SIGTERM handler and exit 0 on its own, leaving nothing in the temp folder. They import the
// package by name; here that name maps to src/ (sources.tsconfig.json), so no build is needed.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";
import { tempDir } from "../support/tempDir.js";

const ROOT = resolve(import.meta.dirname, "../..");
const EXAMPLE = join(ROOT, "examples/gateway");

/** Runs a TypeScript file with tsx as a child process whose TMPDIR is `tmp`: its exit code and output. */
async function runTsx(file: string, tmp: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", file], {
    cwd: ROOT, // where tsx is installed
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
  return { code, out, err };
}

it("the gateway example meets every outcome, stops on SIGTERM and exits 0, leaving no temp files", async () => {
  const tmp = tempDir("a2a-example-");
  const { code, out, err } = await runTsx(join(EXAMPLE, "main.ts"), tmp);
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

// The README's code, run as written: the first ts block of its "Embedding it in a gateway" section.
function readmeSnippet(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Embedding it in a gateway"));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error("README.md: no ts block under 'Embedding it in a gateway'");
  return code;
}

// What the README leaves to the reader: the bots' ids and clients, the gateway's own model calls, a
// logger and metrics. Here they are the example's.
const prelude = (dir: string) => `
process.chdir(${JSON.stringify(dir)}); // the snippet's state dir, .a2a-state, lands in the test's temp dir
import { IDS, startEmulatedDiscord } from ${JSON.stringify(join(EXAMPLE, "emulatedDiscord.ts"))};
import { ScriptedLlm } from ${JSON.stringify(join(EXAMPLE, "scriptedLlm.ts"))};
const { emulator, clients: emulated } = await startEmulatedDiscord();
const clients = emulated;
const [RUDA_BOT_ID, EDEN_BOT_ID, CHANNEL_ID] = [IDS.bots.ruda, IDS.bots.eden, IDS.channel];
const llm = new ScriptedLlm();
const port = llm.gatewayPort();
const gateway = {
  runAgent: port.agent,
  waitForRun: port.agentWait,
  lastReply: (sessionKey) => port.readLatestAssistantReply({ sessionKey }),
  runAgentAndReadReply: async (sessionKey, message) => llm.reply(sessionKey, message),
};
const log = { debug: () => {}, warn: (error) => console.error("onError:", error) };
const metrics = { record: () => {} };
`;

const EPILOGUE = `
async function until(what, check) {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 10));
  }
}
const asked = await emulator.postAsUser({ userId: IDS.human, channelId: IDS.channel, content: "<@" + IDS.bots.ruda + "> how is the release going?" });
await until("ruda's answer", () => {
  const messages = emulator.messages(IDS.channel);
  const after = messages.slice(messages.findIndex((m) => m.id === asked.messageId) + 1);
  return after.some((m) => m.authorId === IDS.bots.ruda);
});
console.log("mention answered");
console.log("sessions_send " + result.status + " " + result.terminationReason);
if (!sent.ok) throw new Error("discord_send: " + sent.text);
await until("the mention answered", async () =>
  (await runtime.mentions()).some((m) => m.id === sent.mentionId && m.status === "responded"));
console.log("discord_send responded");
// The emulator is this test's own Discord: closed once the README's handler has destroyed the clients.
process.once("SIGTERM", async () => {
  while (Object.values(clients).some((client) => client.isReady())) await new Promise((r) => setTimeout(r, 5));
  await emulator.close();
});
setTimeout(() => { console.error("still running 10 s after SIGTERM"); process.exit(1); }, 10000).unref();
process.kill(process.pid, "SIGTERM");
`;

it("the README's embedding code, run as written, answers, finishes its tools' calls and exits 0 on SIGTERM", async () => {
  const dir = tempDir("a2a-readme-");
  const [imports, ...body] = readmeSnippet().split(/(?<=from "a2a-statecharts\/discord";\n)/);
  // The snippet's types are erased, not checked, here: a JavaScript prelude fills in its free names.
  writeFileSync(join(dir, "gateway.mts"), `${imports}${prelude(dir)}${body.join("")}${EPILOGUE}`);
  const { code, out, err } = await runTsx(join(dir, "gateway.mts"), dir);

  expect({ code, err: err.split("\n").filter((line) => line !== "") }).toEqual({
    code: 0,
    err: [],
  });
  expect(out.trim().split("\n")).toEqual([
    "mention answered",
    "sessions_send ok conclusion_detected",
    "discord_send responded",
  ]);
}, 30_000);
