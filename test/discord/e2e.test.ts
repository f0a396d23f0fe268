// End-to-end: the runtime over strict discord.js clients and the local Discord emulator, in real time
// with short configured timeouts.
import type { Client } from "discord.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bridgeDiscordJs, createDiscordJsPort } from "../../src/discord/index.js";
import { type DiscordEmulator, startDiscordEmulator } from "../../src/testing/index.js";
import {
  type A2AEvent,
  type A2ARuntime,
  createA2ARuntime,
  type DiscordPort,
  type InboundDiscordMessage,
} from "../../src/index.js";
import { loginStrictClient, until } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";
import { textLogger } from "../../src/runtime/logger.js";

const GUILD = "1500000000000000001";
const CHANNEL = "1500000000000000010";
const OTHER_CHANNEL = "1500000000000000011";
const RUDA = "1500000000000000101";
const EDEN = "1500000000000000102";
const HUMAN = "1500000000000000900";

let emulator: DiscordEmulator;
const clients: Client[] = [];
const runtimes: A2ARuntime[] = [];
const detachers: Array<() => void> = [];

beforeEach(async () => {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [
      { id: CHANNEL, name: "collab" },
      { id: OTHER_CHANNEL, name: "elsewhere" },
    ],
    users: [
      { id: RUDA, name: "ruda", bot: true },
      { id: EDEN, name: "eden", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
  });
});

afterEach(async () => {
  for (const detach of detachers.splice(0)) detach();
  for (const r of runtimes.splice(0)) await r.stop();
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await emulator.close();
});

function login(userId: string): Promise<Client<true>> {
  return loginStrictClient(emulator, userId, clients);
}

interface Harness {
  runtime: A2ARuntime;
  ruda: Client<true>;
  eden: Client<true>;
  events: A2AEvent[];
  /** What the runtime warned about. */
  warnings: string[];
  /** Every message the bridge forwarded, with the runtime's decision. */
  handled: Array<{
    message: InboundDiscordMessage;
    result: Awaited<ReturnType<A2ARuntime["handleDiscordMessage"]>>;
  }>;
}

async function setUp(
  options: {
    a2aRetry?: Record<string, unknown>;
    collaboration?: Record<string, unknown>;
    /** Wraps the discord.js port, to watch what the runtime asks of it. */
    wrapPort?: (port: DiscordPort) => DiscordPort;
  } = {},
): Promise<Harness> {
  const [ruda, eden] = await Promise.all([login(RUDA), login(EDEN)]);
  const warnings: string[] = [];
  const clientsById = { ruda, eden };
  const runtime = createA2ARuntime({
    stateDir: tempDir("a2a-e2e-"),
    config: {
      agents: {
        ruda: { discordBotId: RUDA, name: "루다" },
        eden: { discordBotId: EDEN, name: "이든" },
      },
      discord: {
        a2aRetry: {
          responseTimeoutMs: 300,
          urgentResponseTimeoutMs: 150,
          maxAttempts: 3,
          escalationMentionId: HUMAN,
          ...options.a2aRetry,
        },
        collaboration: {
          defaultChannel: CHANNEL,
          allowedChannels: [CHANNEL],
          ...options.collaboration,
        },
      },
    },
    discord: (options.wrapPort ?? ((port) => port))(createDiscordJsPort(clientsById)),
    logger: textLogger((message) => warnings.push(message)),
  });
  runtimes.push(runtime);
  await runtime.start();
  const events: A2AEvent[] = [];
  runtime.onEvent((e) => events.push(e));
  const handled: Harness["handled"] = [];
  const recording: Pick<A2ARuntime, "handleDiscordMessage"> = {
    handleDiscordMessage: async (message) => {
      const result = await runtime.handleDiscordMessage(message);
      handled.push({ message, result });
      return result;
    },
  };
  detachers.push(bridgeDiscordJs(recording, clientsById, { onError: () => {} }));
  return { runtime, ruda, eden, events, warnings, handled };
}

async function mentionOf(runtime: A2ARuntime, id: string) {
  return (await runtime.mentions()).find((m) => m.id === id);
}

async function sendInThread(client: Client<true>, threadId: string, content: string, mentionIds: string[]) {
  await until(() => client.channels.cache.has(threadId), "the client to know the thread");
  const thread = client.channels.cache.get(threadId);
  if (!thread?.isThread()) throw new Error("not a thread");
  return thread.send({ content, allowedMentions: { parse: [], users: mentionIds } });
}

describe("collaboration end to end over discord.js and the emulator", () => {
  it("no reply: two reminders pinging eden, then an escalation pinging only the human", async () => {
    const { runtime } = await setUp();
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "배포 확인해줘",
    });
    expect(sent.status).toBe("sent");
    if (sent.status !== "sent") return;

    await until(
      async () => (await mentionOf(runtime, sent.mentionId))?.status === "escalated",
      "the mention to escalate",
    );
    const inThread = emulator.messages(sent.threadId);
    const reminder1 = inThread.find((m) => m.content.includes("[리마인더 1/3]"));
    const reminder2 = inThread.find((m) => m.content.includes("[리마인더 2/3]"));
    const escalation = inThread.find((m) => m.content.includes("⚠️ 응답 없음 (3회 시도"));
    expect(reminder1).toMatchObject({ authorId: RUDA, mentionIds: [EDEN] });
    expect(reminder1?.content).toContain(`<@${EDEN}>`);
    expect(reminder2).toMatchObject({ authorId: RUDA, mentionIds: [EDEN] });
    expect(escalation).toMatchObject({ authorId: RUDA, mentionIds: [HUMAN] });
    expect(escalation?.content).toContain(`<@${HUMAN}>`);
    // Order: reminder 1, reminder 2, escalation; nothing posted twice.
    const ids = inThread.map((m) => m.id);
    expect(ids.indexOf(reminder1?.id ?? "")).toBeLessThan(ids.indexOf(reminder2?.id ?? ""));
    expect(ids.indexOf(reminder2?.id ?? "")).toBeLessThan(ids.indexOf(escalation?.id ?? ""));
    expect(inThread.filter((m) => m.content.includes("[리마인더"))).toHaveLength(2);
    expect(inThread.filter((m) => m.content.includes("⚠️ 응답 없음"))).toHaveLength(1);
    expect(await mentionOf(runtime, sent.mentionId)).toMatchObject({ status: "escalated", attempts: 3 });
  });

  it("a new thread: the mention is posted inside it and eden's bot is asked to handle it there", async () => {
    const { runtime, handled } = await setUp({ a2aRetry: { responseTimeoutMs: 60_000 } });
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "인증 모듈 리뷰 부탁해",
    });
    if (sent.status !== "sent") throw new Error(`not sent: ${JSON.stringify(sent)}`);

    // The channel holds the thread's starter only: it pings nobody and is merely observed.
    const inChannel = emulator.messages(CHANNEL);
    expect(inChannel).toEqual([
      expect.objectContaining({ id: sent.threadId, authorId: RUDA, mentionIds: [] }),
    ]);
    expect(inChannel[0]?.content).not.toContain("<@");
    expect(emulator.threads()).toEqual([expect.objectContaining({ id: sent.threadId, parentId: CHANNEL })]);
    expect(emulator.messages(sent.threadId)).toEqual([
      expect.objectContaining({ id: sent.messageId, authorId: RUDA, mentionIds: [EDEN] }),
    ]);

    await until(() => handled.some((h) => h.message.messageId === sent.messageId), "the bridged mention");
    const mention = handled.find((h) => h.message.messageId === sent.messageId);
    expect(mention?.message).toMatchObject({ threadId: sent.threadId, parentChannelId: CHANNEL });
    // Before the fix the mention was posted in the channel, where a sibling bot's message is only observed.
    expect(mention?.result).toEqual({
      action: "handle",
      agentId: "eden",
      sessionKey: `agent:eden:discord:channel:${sent.threadId}`,
    });
    await until(() => handled.some((h) => h.message.messageId === sent.threadId), "the bridged starter");
    expect(handled.find((h) => h.message.messageId === sent.threadId)?.result).toEqual({ action: "observe" });
    expect((await mentionOf(runtime, sent.mentionId))?.status).toBe("pending");
  });

  it("a human posting in the thread does not end the mention; eden's bot does", async () => {
    // Long timeouts: no reminder interferes with this case.
    const { runtime, eden, handled } = await setUp({
      a2aRetry: { responseTimeoutMs: 60_000, urgentResponseTimeoutMs: 30_000 },
    });
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "리뷰 부탁해",
    });
    if (sent.status !== "sent") throw new Error(`not sent: ${JSON.stringify(sent)}`);

    const human = await emulator.postAsUser({
      userId: HUMAN,
      channelId: sent.threadId,
      content: "제가 봤어요",
    });
    await until(() => handled.some((h) => h.message.messageId === human.messageId), "the human's message");
    expect((await mentionOf(runtime, sent.mentionId))?.status).toBe("pending");

    const reply = await sendInThread(eden, sent.threadId, `<@${RUDA}> 확인했습니다`, [RUDA]);
    await until(() => handled.some((h) => h.message.messageId === reply.id), "eden's reply");
    await until(
      async () => (await mentionOf(runtime, sent.mentionId))?.status === "responded",
      "the mention to end responded",
    );
  });

  it("reuses the thread within threadReuseTTL", async () => {
    const { runtime } = await setUp({ a2aRetry: { responseTimeoutMs: 60_000 } });
    const first = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "첫 번째",
    });
    const second = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "두 번째",
    });
    if (first.status !== "sent" || second.status !== "sent") throw new Error("not sent");
    expect(second.threadId).toBe(first.threadId);
    expect(emulator.threads()).toHaveLength(1);
    expect(emulator.messages(first.threadId)).toContainEqual(
      expect.objectContaining({ id: second.messageId, authorId: RUDA, mentionIds: [EDEN] }),
    );
  });

  it("opens a new thread once threadReuseTTL (1 ms) has passed", async () => {
    const { runtime } = await setUp({
      a2aRetry: { responseTimeoutMs: 60_000 },
      collaboration: { threadReuseTTL: 1 },
    });
    const first = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "첫 번째",
    });
    await new Promise((r) => setTimeout(r, 10));
    const second = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "두 번째",
    });
    if (first.status !== "sent" || second.status !== "sent") throw new Error("not sent");
    expect(second.threadId).not.toBe(first.threadId);
    expect(emulator.threads()).toHaveLength(2);
  });

  it("rejects a channel outside allowedChannels and posts nothing", async () => {
    const { runtime } = await setUp();
    const result = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "여기로",
      channelId: OTHER_CHANNEL,
    });
    expect(result).toMatchObject({ status: "rejected", error: { code: "channel_not_allowed" } });
    expect(emulator.messages()).toEqual([]);
    expect(emulator.threads()).toEqual([]);
  });

  it("403: rejected discord_permission with an escalating a2a.collaborate.failed event", async () => {
    const { runtime, events } = await setUp();
    emulator.deny(CHANNEL, RUDA);
    const result = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "권한 없음",
    });
    expect(result).toMatchObject({ status: "rejected", error: { code: "discord_permission" } });
    await until(() => events.some((e) => e.type === "a2a.collaborate.failed"), "the failed event");
    const failed = events.find((e) => e.type === "a2a.collaborate.failed");
    // The notice goes to the default channel, where ruda is denied too: the event says nobody was told.
    expect(failed?.data).toMatchObject({
      escalate: true,
      notified: false,
      noticeErrorCode: "discord_permission",
    });
    expect(emulator.messages().filter((m) => m.authorId === RUDA)).toEqual([]);
  });

  it("404: an unknown thread is rejected discord_not_found, and one notice in the default channel pings the human", async () => {
    const { runtime, events } = await setUp();
    const result = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "없는 스레드",
      threadId: "1500000000000009999",
    });
    expect(result).toMatchObject({ status: "rejected", error: { code: "discord_not_found" } });
    await until(() => events.some((e) => e.type === "a2a.collaborate.failed"), "the failed event");
    expect(events.find((e) => e.type === "a2a.collaborate.failed")?.data).toMatchObject({
      escalate: true,
      notified: true,
    });
    const posted = emulator.messages().filter((m) => m.authorId === RUDA);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ channelId: CHANNEL, mentionIds: [HUMAN] });
    expect(posted[0]?.content).toContain("discord_not_found");
    expect(posted[0]?.content).toContain(`<@${HUMAN}> 봇/채널 존재 확인 필요`);
  });

  it("an escalation answered 429, then 503, is retried and pings the human exactly once", async () => {
    const escalationPosts: Array<"ok" | "failed"> = [];
    const { runtime, events } = await setUp({
      a2aRetry: { maxAttempts: 1 },
      wrapPort: (port) => ({
        ...port,
        sendMessage: async (p) => {
          if (!p.content.startsWith("⚠️ 응답 없음")) return port.sendMessage(p);
          try {
            const result = await port.sendMessage(p);
            escalationPosts.push("ok");
            return result;
          } catch (error) {
            escalationPosts.push("failed");
            throw error;
          }
        },
      }),
    });
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "응답 부탁",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    // The next two posts in the thread (the escalation, at the first timeout) meet a 429, then a 503.
    const path = `/channels/${sent.threadId}/messages`;
    emulator.injectFault({ kind: "rateLimit", method: "POST", path, userId: RUDA, retryAfterMs: 300 });
    emulator.injectFault({ kind: "serverError", method: "POST", path, userId: RUDA, status: 503 });

    await until(
      async () => (await mentionOf(runtime, sent.mentionId))?.status === "escalated",
      "the mention to escalate",
      12_000,
    );
    expect(escalationPosts).toEqual(["failed", "failed", "ok"]);
    const escalations = emulator.messages(sent.threadId).filter((m) => m.content.startsWith("⚠️ 응답 없음"));
    expect(escalations).toHaveLength(1);
    expect(escalations[0]).toMatchObject({ authorId: RUDA, mentionIds: [HUMAN] });
    const escalated = events.filter((e) => e.type === "a2a.mention.escalated");
    expect(escalated).toHaveLength(1);
    expect(escalated[0]?.data).toMatchObject({ notified: true });
  }, 20_000);

  it("an escalation Discord refuses (403 in the thread) ends escalated, not notified, with a warning", async () => {
    const { runtime, events, warnings } = await setUp({ a2aRetry: { maxAttempts: 1 } });
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "응답 부탁",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    emulator.deny(sent.threadId, RUDA);
    await until(
      async () => (await mentionOf(runtime, sent.mentionId))?.status === "escalated",
      "the mention to escalate",
    );
    expect(emulator.messages(sent.threadId).filter((m) => m.content.startsWith("⚠️"))).toEqual([]);
    expect(events.find((e) => e.type === "a2a.mention.escalated")?.data).toMatchObject({
      notified: false,
      failedPost: "escalation",
      errorCode: "discord_permission",
    });
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `mention ${sent.mentionId}: the escalation could not be posted.*discord_permission.*nobody was notified`,
        ),
      ),
    ]);
  });

  it("429: honours retry-after and still sends", async () => {
    const { runtime } = await setUp({ a2aRetry: { responseTimeoutMs: 60_000 } });
    emulator.injectFault({ kind: "rateLimit", method: "POST", path: /\/messages$/, retryAfterMs: 300 });
    const start = Date.now();
    const sent = await runtime.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "천천히" });
    const elapsed = Date.now() - start;
    expect(sent.status).toBe("sent");
    if (sent.status !== "sent") return;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(emulator.messages().filter((m) => m.id === sent.messageId)).toHaveLength(1);
  });

  it("@everyone in the agent's message pings nobody but eden", async () => {
    const { runtime, ruda } = await setUp({ a2aRetry: { responseTimeoutMs: 60_000 } });
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "@everyone @here 긴급 확인",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    const posted = emulator.messages().find((m) => m.id === sent.messageId);
    expect(posted?.content).toContain("@everyone");
    expect(posted?.mentionIds).toEqual([EDEN]);
    // The thread's starter quotes the text too, and pings nobody.
    const starter = emulator.messages(CHANNEL).find((m) => m.id === sent.threadId);
    expect(starter?.mentionIds).toEqual([]);
    // The gateway payload's mention_everyone, as discord.js saw it.
    await until(() => ruda.channels.cache.has(sent.threadId), "the thread");
    const channel = ruda.channels.cache.get(sent.threadId);
    if (!channel?.isTextBased()) throw new Error("not text");
    const fetched = await channel.messages.fetch(sent.messageId);
    expect(fetched.mentions.everyone).toBe(false);
    expect([...fetched.mentions.users.keys()]).toEqual([EDEN]);
  });

  it("loop guard: the 4th agent message in a thread within the window, the mention first, is dropped (maxMessagesPerThread 3)", async () => {
    const { runtime, ruda, eden, handled } = await setUp({
      a2aRetry: { responseTimeoutMs: 60_000 },
      collaboration: { loopGuard: { maxMessagesPerThread: 3 } },
    });
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "같이 보자",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    await until(() => handled.some((h) => h.message.messageId === sent.messageId), "the mention");
    const results: string[] = [];
    const speakers: Array<[Client<true>, string]> = [
      [eden, RUDA],
      [ruda, EDEN],
      [eden, RUDA],
    ];
    for (const [i, [client, other]] of speakers.entries()) {
      // Long, different and asking: no early ending of the bot exchange comes before the loop guard.
      const text = `<@${other}> 메시지 ${i + 1}: part ${i * 17} of the plan needs another look, agreed?`;
      const posted = await sendInThread(client, sent.threadId, text, [other]);
      await until(() => handled.some((h) => h.message.messageId === posted.id), `message ${i + 1}`);
      const entry = handled.find((h) => h.message.messageId === posted.id);
      results.push(
        entry?.result.action === "drop" ? `drop:${entry.result.reason}` : (entry?.result.action ?? ""),
      );
    }
    expect(results).toEqual(["handle", "handle", "drop:loop_guard"]);
    // The first agent message after the mention was eden's answer: it ended the mention.
    expect((await mentionOf(runtime, sent.mentionId))?.status).toBe("responded");
  });
});

describe("a runtime stopped and restarted mid-wait", () => {
  it("neither loses nor duplicates a reminder: the one due while it was down is posted once, on start", async () => {
    const stateDir = tempDir("a2a-e2e-restart-");
    const config = {
      agents: { ruda: { discordBotId: RUDA, name: "루다" }, eden: { discordBotId: EDEN, name: "이든" } },
      discord: {
        a2aRetry: {
          responseTimeoutMs: 400,
          urgentResponseTimeoutMs: 150,
          maxAttempts: 3,
          escalationMentionId: HUMAN,
        },
        collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] },
      },
    };
    const [ruda, eden] = await Promise.all([login(RUDA), login(EDEN)]);
    const first = createA2ARuntime({
      stateDir,
      config,
      discord: createDiscordJsPort({ ruda, eden }),
      logger: textLogger(() => {}),
    });
    await first.start();
    const sent = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "재시작 테스트",
    });
    if (sent.status !== "sent") throw new Error(`not sent: ${JSON.stringify(sent)}`);
    await first.stop(); // before the first reminder is due

    const reminders = () =>
      emulator.messages(sent.threadId).filter((m) => m.content.startsWith("[리마인더 1/3]"));
    await new Promise((r) => setTimeout(r, 500)); // down past the due time
    expect(reminders()).toHaveLength(0);

    const second = createA2ARuntime({
      stateDir,
      config,
      discord: createDiscordJsPort({ ruda, eden }),
      logger: textLogger(() => {}),
    });
    runtimes.push(second);
    await second.start();
    await until(() => reminders().length === 1, "the overdue reminder");
    await until(async () => (await second.mentions())[0]?.attempts === 2, "attempts 2");
    expect(reminders()).toHaveLength(1);
    expect(reminders()[0]?.authorId).toBe(RUDA);
  });
});
