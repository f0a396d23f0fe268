// The runtime's limiter against Discord's buckets, as the emulator applies them, over strict discord.js
// clients (which refuse a request themselves once a bucket is empty): bursts are queued until the
// bucket's reset, never refused and never dropped. Real time, with a small bucket so it runs quickly.
import { type Client, RateLimitError } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { createDiscordJsPort } from "../../src/discord/index.js";
import { type A2ARuntime, createA2ARuntime, type DiscordPort } from "../../src/index.js";
import { type DiscordEmulator, emulatorToken } from "../../src/testing/index.js";
import { loginStrictClient, startTwoBotEmulator, until } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";
import { textLogger } from "../../src/runtime/logger.js";

const GUILD = "1700000000000000001";
const CHANNEL = "1700000000000000010";
const RUDA = "1700000000000000101";
const EDEN = "1700000000000000102";
const HUMAN = "1700000000000000900";

let emulator: DiscordEmulator;
const clients: Client[] = [];
const runtimes: A2ARuntime[] = [];

/** An emulator with Discord's default buckets, or the message bucket given. */
async function startEmulator(messages?: { limit: number; windowMs: number }) {
  const ids = { guild: GUILD, channel: CHANNEL, ruda: RUDA, eden: EDEN, human: HUMAN };
  emulator = await startTwoBotEmulator(ids, messages && { rateLimits: { messages } });
}

afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop();
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await emulator.close();
});

function config(responseTimeoutMs: number) {
  return {
    agents: { ruda: { discordBotId: RUDA, name: "루다" }, eden: { discordBotId: EDEN, name: "이든" } },
    discord: {
      a2aRetry: { responseTimeoutMs, maxAttempts: 3, escalationMentionId: HUMAN },
      collaboration: {
        defaultChannel: CHANNEL,
        allowedChannels: [CHANNEL],
        loopGuard: { maxCollaboratePerPair: 100, maxMessagesPerThread: 100 },
        // Higher than the bucket allows: Discord's answers, not this setting, must pace the posts.
        rateLimit: { messagePerChannelPerSecond: 100 },
      },
    },
  };
}

/** The port, recording every post Discord (or the strict client itself) refused. */
function watched(port: DiscordPort, refused: unknown[]): DiscordPort {
  return {
    ...port,
    async sendMessage(p) {
      try {
        return await port.sendMessage(p);
      } catch (error) {
        refused.push(error);
        throw error;
      }
    },
  };
}

async function startRuntime(stateDir: string, responseTimeoutMs: number, refused: unknown[]) {
  const [ruda, eden] = await Promise.all([
    loginStrictClient(emulator, RUDA, clients),
    loginStrictClient(emulator, EDEN, clients),
  ]);
  const runtime = createA2ARuntime({
    stateDir,
    config: config(responseTimeoutMs),
    discord: watched(createDiscordJsPort({ ruda, eden }), refused),
    logger: textLogger(() => {}),
  });
  runtimes.push(runtime);
  await runtime.start();
  return runtime;
}

async function sendMentions(runtime: A2ARuntime, count: number) {
  const first = await runtime.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "m0" });
  if (first.status !== "sent") throw new Error(`not sent: ${JSON.stringify(first)}`);
  const rest = await Promise.all(
    Array.from({ length: count - 1 }, (_, i) =>
      runtime.discordSend({
        fromAgentId: "ruda",
        targetAgentId: "eden",
        message: `m${i + 1}`,
        threadId: first.threadId,
      }),
    ),
  );
  return { threadId: first.threadId, results: [first, ...rest] };
}

describe("bursts against Discord's buckets, over strict discord.js clients", () => {
  it("30 reminders due at once in one thread are queued to the bucket's resets: none refused, none dropped", async () => {
    // Discord's message bucket, scaled down so the test runs quickly: 5 per 250 ms (Discord: 5 per 5 s).
    await startEmulator({ limit: 5, windowMs: 250 });
    const stateDir = tempDir("a2a-bursts-");
    const refused: unknown[] = [];
    const responseTimeoutMs = 2_500;
    const first = await startRuntime(stateDir, responseTimeoutMs, refused);
    // 30 mentions in one thread: a burst of its own, queued the same way.
    const { threadId, results } = await sendMentions(first, 30);
    expect(results.map((r) => r.status)).toEqual(Array(30).fill("sent"));
    const lastPostedAt = Date.now();
    await first.stop(); // before the first reminder is due
    runtimes.splice(runtimes.indexOf(first), 1);

    // Down past every due time: on start, all 30 reminders are due at once.
    await new Promise((r) => setTimeout(r, lastPostedAt + responseTimeoutMs + 50 - Date.now()));
    const second = await startRuntime(stateDir, responseTimeoutMs, refused);
    const reminders = () => emulator.messages(threadId).filter((m) => m.content.startsWith("[리마인더 1/3]"));
    await until(() => reminders().length >= 30, "30 reminders", 10_000);
    await until(
      async () => (await second.mentions()).filter((m) => m.attempts >= 2).length === 30,
      "every mention reminded",
    );
    expect(refused).toEqual([]);
    expect(reminders()).toHaveLength(30);
    expect(reminders().every((m) => m.authorId === RUDA && m.mentionIds.includes(EDEN))).toBe(true);
    // One reminder per mention: each quotes its own mention's message.
    const quoted = new Set(reminders().map((m) => /m\d+/.exec(m.content)?.[0]));
    expect(quoted.size).toBe(30);
  }, 20_000);

  it("a bucket emptied by another client of the same bot: the post meets one 429 and is retried after the reset", async () => {
    await startEmulator(); // Discord's own numbers: 5 messages per 5 s per channel
    const refused: unknown[] = [];
    const runtime = await startRuntime(tempDir("a2a-bursts-"), 60_000, refused);
    const first = await runtime.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "first" });
    if (first.status !== "sent") throw new Error("not sent");

    // The gateway's own client for the same bot empties the thread's bucket: the runtime's client
    // cannot know, and meets Discord's 429.
    for (let remaining = "1"; remaining !== "0";) {
      const res = await fetch(`${emulator.apiUrl}/v10/channels/${first.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bot ${emulatorToken(RUDA)}`, "Content-Type": "application/json" },
        body: JSON.stringify({ content: "other" }),
      });
      expect(res.status).toBe(200);
      remaining = res.headers.get("x-ratelimit-remaining") ?? "0";
    }
    const sends = await Promise.all(
      ["a", "b", "c"].map((message) =>
        runtime.discordSend({
          fromAgentId: "ruda",
          targetAgentId: "eden",
          message,
          threadId: first.threadId,
        }),
      ),
    );
    expect(sends.map((s) => s.status)).toEqual(["sent", "sent", "sent"]);
    // The first post met Discord's 429; the ones queued behind it waited for the reset instead.
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(RateLimitError);
    expect(refused[0]).toMatchObject({ global: false, hash: "messages" });
    const posted = emulator
      .messages(first.threadId)
      .filter((m) => m.authorId === RUDA && !m.content.startsWith("other"));
    expect(posted).toHaveLength(4);
    expect(new Set(posted.map((m) => m.id)).size).toBe(4);
  }, 15_000);
});
