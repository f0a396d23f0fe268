// Two agents whose gateway always answers what it is handed, wired as a gateway does it (real
// discord.js clients against the emulator, bridgeDiscordJs with onHandle, the reply posted in the
// thread by the agent's own bot): their exchange ends within 1 + maxPingPongTurns handled messages,
// by a termination reason the events carry, before the thread's loop guard.
import { expect, it } from "vitest";
import { bridgeDiscordJs, createDiscordJsPort, type HandleDecision } from "../../src/discord/index.js";
import { type A2AEvent, createA2ARuntime, type PreflightResult } from "../../src/index.js";
import { loginStrictClient, until, useTwoBotEmulator } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";
import { textLogger } from "../../src/runtime/logger.js";

const CHANNEL = "1710000000000000010";
const RUDA = "1710000000000000101";
const EDEN = "1710000000000000102";
const HUMAN = "1710000000000000900";
const BOT_OF = { ruda: RUDA, eden: EDEN } as const;
const MAX_TURNS = 3;

const fx = useTwoBotEmulator({
  guild: "1710000000000000001",
  channel: CHANNEL,
  ruda: RUDA,
  eden: EDEN,
  human: HUMAN,
});

/** What each agent's scripted "LLM" says on its n-th run: always something, new each time. */
type Script = (agentId: "ruda" | "eden", run: number) => { text: string; mention: boolean };

async function converse(script: Script) {
  const [ruda, eden] = await Promise.all([
    loginStrictClient(fx.emulator, RUDA, fx.clients),
    loginStrictClient(fx.emulator, EDEN, fx.clients),
  ]);
  const byAgent = { ruda, eden };
  const runtime = createA2ARuntime({
    stateDir: tempDir("a2a-exchange-"),
    config: {
      agents: { ruda: { discordBotId: RUDA }, eden: { discordBotId: EDEN } },
      discord: { collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] } },
      session: { agentToAgent: { maxPingPongTurns: MAX_TURNS } },
    },
    discord: createDiscordJsPort(byAgent),
    logger: textLogger(() => {}),
  });
  fx.runtime = runtime;
  await runtime.start();
  const events: A2AEvent[] = [];
  runtime.onEvent((e) => events.push(e));
  const decisions: Array<{ channelId: string; decision: PreflightResult }> = [];
  const handled: HandleDecision[] = [];
  const replying = new Set<Promise<unknown>>();
  const runs = { ruda: 0, eden: 0 };
  fx.detach = bridgeDiscordJs(runtime, byAgent, {
    onDecision: (decision, message) => decisions.push({ channelId: message.channelId, decision }),
    // The gateway: run the agent in its session, then post its reply in the thread with its own bot.
    onHandle: (h) => {
      const agentId = h.agentId as "ruda" | "eden";
      const other = agentId === "ruda" ? "eden" : "ruda";
      runs[agentId] += 1;
      const { text, mention } = script(agentId, runs[agentId]);
      const channel = byAgent[agentId].channels.cache.get(h.message.channelId);
      if (channel === undefined || !channel.isSendable())
        throw new Error(`no channel ${h.message.channelId}`);
      const reply = channel.send(mention ? `<@${BOT_OF[other]}> ${text}` : text);
      replying.add(reply);
      void reply.finally(() => replying.delete(reply));
      handled.push(h);
    },
    onError: (error) => {
      throw error;
    },
  });

  const sent = await runtime.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "Can you review the cache layer change?",
  });
  if (sent.status !== "sent") throw new Error(`not sent: ${sent.error.code}`);
  // Quiet: every reply posted, and every message in the thread decided (the thread's starter is in the channel).
  const inThread = () => decisions.filter((d) => d.channelId === sent.threadId);
  const posted = () => fx.emulator.messages(sent.threadId).length;
  await until(
    () => replying.size === 0 && posted() >= 2 && inThread().length === posted(),
    "the conversation to go quiet",
    15_000,
  );
  const mentions = await runtime.mentions();
  return { decisions: inThread(), handled, events, threadId: sent.threadId, mentions };
}

// Different enough each time that no reply repeats the one before it (word overlap ≤ 0.85).
const TOPICS = [
  "cache eviction",
  "retry budget",
  "schema migration",
  "index rebuild",
  "lock ordering",
  "log rotation",
];
const chatty = (agentId: string, run: number) => {
  const topic = TOPICS[(run * 2 + (agentId === "ruda" ? 1 : 0)) % TOPICS.length];
  return `${agentId} #${run}: about the ${topic}, step ${run * 7 + agentId.length} looks risky to me; can you check it?`;
};

it("two bots that always answer each other by mention: 1 + maxPingPongTurns handled, then turn_limit, never the loop guard", async () => {
  const { decisions, handled, events, threadId, mentions } = await converse((agentId, run) => ({
    text: chatty(agentId, run),
    mention: true,
  }));
  expect(handled).toHaveLength(1 + MAX_TURNS);
  expect(handled.map((h) => h.agentId)).toEqual(["eden", "ruda", "eden", "ruda"]);
  const drops = decisions.flatMap(({ decision }) => (decision.action === "drop" ? [decision.reason] : []));
  expect(drops).toEqual(["turn_limit"]);
  expect(events.filter((e) => e.type === "a2a.exchange.ended")).toEqual([
    expect.objectContaining({
      data: expect.objectContaining({ threadId, reason: "turn_limit", handled: 1 + MAX_TURNS }),
    }),
  ]);
  // eden's first reply answered the mention.
  expect(mentions).toEqual([expect.objectContaining({ threadId, status: "responded" })]);
});

it("two bots that always answer each other without mentions: only the mention is handled; the rest is observed", async () => {
  const { decisions, handled, mentions } = await converse((agentId, run) => ({
    text: chatty(agentId, run),
    mention: false,
  }));
  expect(handled.map((h) => h.agentId)).toEqual(["eden"]);
  expect(decisions.map(({ decision }) => decision.action)).toEqual(["handle", "observe"]);
  expect(mentions).toEqual([expect.objectContaining({ status: "responded" })]);
});

it("a bot that concludes ends the exchange early: conclusion_detected, in the events", async () => {
  const { handled, events } = await converse((agentId, run) => ({
    text:
      agentId === "eden" && run === 2 ? "Thanks, got it. I will ship it after lunch." : chatty(agentId, run),
    mention: true,
  }));
  // Runs: eden on the mention, ruda on eden's answer, eden on ruda's turn; eden's concluding reply is not handed on.
  expect(handled.map((h) => h.agentId)).toEqual(["eden", "ruda", "eden"]);
  expect(events.filter((e) => e.type === "a2a.exchange.ended")).toEqual([
    expect.objectContaining({ data: expect.objectContaining({ reason: "conclusion_detected", handled: 3 }) }),
  ]);
});
