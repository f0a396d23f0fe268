// End-to-end: an escalation Discord accepted just before a crash, re-run by a restart later than the
// emulator's nonce window (5 min), over strict discord.js clients. The human is pinged once.
import type { Client } from "discord.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createDiscordJsPort } from "../../src/discord/index.js";
import { type DiscordEmulator, startDiscordEmulator } from "../../src/testing/index.js";
import { type A2ARuntime, createA2ARuntime, type DiscordPort } from "../../src/index.js";
import { loginStrictClient, until } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";
import { textLogger } from "../../src/runtime/logger.js";

const GUILD = "1500000000000000001";
const CHANNEL = "1500000000000000010";
const RUDA = "1500000000000000101";
const EDEN = "1500000000000000102";
const HUMAN = "1500000000000000900";
const MINUTE = 60_000;

/** Real time plus a jump: the emulator and the runtime share it, so a restart can come minutes later. */
let jumpedMs = 0;
const clock = () => Date.now() + jumpedMs;

let emulator: DiscordEmulator;
const clients: Client[] = [];
const runtimes: A2ARuntime[] = [];

beforeEach(async () => {
  jumpedMs = 0;
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: CHANNEL, name: "collab" }],
    users: [
      { id: RUDA, name: "ruda", bot: true },
      { id: EDEN, name: "eden", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
    now: clock,
  });
});

afterEach(async () => {
  for (const r of runtimes.splice(0)) await r.stop();
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await emulator.close();
});

function runtimeOn(stateDir: string, discord: DiscordPort): A2ARuntime {
  const runtime = createA2ARuntime({
    stateDir,
    now: clock,
    config: {
      agents: {
        ruda: { discordBotId: RUDA, name: "루다" },
        eden: { discordBotId: EDEN, name: "이든" },
      },
      discord: {
        a2aRetry: { responseTimeoutMs: 300, maxAttempts: 1, escalationMentionId: HUMAN },
        collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] },
      },
    },
    discord,
    logger: textLogger(() => {}),
  });
  runtimes.push(runtime);
  return runtime;
}

it("an escalation accepted before a crash is not posted again by a restart 8 minutes later", async () => {
  const [ruda, eden] = await Promise.all([RUDA, EDEN].map((id) => loginStrictClient(emulator, id, clients)));
  if (ruda === undefined || eden === undefined) throw new Error("no clients");
  const port = createDiscordJsPort({ ruda, eden });
  // The gateway "crashes" once Discord has accepted the escalation: its answer never arrives.
  const crashing: DiscordPort = {
    ...port,
    async sendMessage(p) {
      const sent = await port.sendMessage(p);
      return p.content.startsWith("⚠️") ? new Promise<never>(() => {}) : sent;
    },
  };
  const stateDir = tempDir("a2a-e2e-nonce-");
  const first = runtimeOn(stateDir, crashing);
  await first.start();
  const sent = await first.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "코드 리뷰 해줘",
  });
  if (sent.status !== "sent") throw new Error(`not sent: ${JSON.stringify(sent)}`);
  const escalations = () => emulator.messages(sent.threadId).filter((m) => m.content.startsWith("⚠️"));
  await until(() => escalations().length === 1, "the escalation Discord accepts");
  await first.stop();

  // Back after twice Discord's nonce window: the nonce no longer deduplicates.
  jumpedMs += 2 * 4 * MINUTE;
  const second = runtimeOn(stateDir, port);
  await second.start();
  await until(
    async () => (await second.mentions()).some((m) => m.id === sent.mentionId && m.status === "escalated"),
    "the escalation recorded",
  );
  expect(escalations()).toEqual([expect.objectContaining({ authorId: RUDA, mentionIds: [HUMAN] })]);
});
