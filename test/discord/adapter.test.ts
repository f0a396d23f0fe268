// The discord.js adapter (port and bridge) against the emulator, with real strict discord.js Clients.
import { type Client, DiscordAPIError, Events } from "discord.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bridgeDiscordJs, createDiscordJsPort } from "../../src/discord/index.js";
import { type DiscordEmulator, startDiscordEmulator } from "../../src/testing/index.js";
import { snowflakeTimestamp } from "../../src/testing/emulator/snowflake.js";
import { type A2ARuntime, createA2ARuntime, type InboundDiscordMessage } from "../../src/index.js";
import { loginStrictClient, until } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";
import { textLogger } from "../../src/runtime/logger.js";

const GUILD = "1500000000000000001";
const CHANNEL = "1500000000000000010";
const RUDA = "1500000000000000101";
const EDEN = "1500000000000000102";
const HUMAN = "1500000000000000900";
const UNKNOWN_CHANNEL = "1500000000000000999";

let emulator: DiscordEmulator;
const clients: Client[] = [];
const runtimes: A2ARuntime[] = [];
const detachers: Array<() => void> = [];

beforeEach(async () => {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: CHANNEL, name: "collab" }],
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

async function agents(): Promise<{ ruda: Client<true>; eden: Client<true> }> {
  const [ruda, eden] = await Promise.all([login(RUDA), login(EDEN)]);
  return { ruda, eden };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("createDiscordJsPort", () => {
  it("pings exactly the given users; @everyone in the text pings nobody", async () => {
    const port = createDiscordJsPort(await agents());
    const { messageId } = await port.sendMessage({
      asAgentId: "ruda",
      channelId: CHANNEL,
      content: `<@${EDEN}> look @everyone <@${HUMAN}>`,
      mentionUserIds: [EDEN],
      nonce: "n-ping-1",
    });
    expect(emulator.messages(CHANNEL)).toEqual([
      expect.objectContaining({ id: messageId, authorId: RUDA, nonce: "n-ping-1", mentionIds: [EDEN] }),
    ]);
    const quiet = await port.sendMessage({
      asAgentId: "eden",
      channelId: CHANNEL,
      content: "hello @everyone",
      mentionUserIds: [],
      nonce: "n-ping-2",
    });
    expect(emulator.messages(CHANNEL).find((m) => m.id === quiet.messageId)).toMatchObject({
      authorId: EDEN,
      mentionIds: [],
    });
  });

  it("posts once for the same nonce", async () => {
    const port = createDiscordJsPort(await agents());
    const p = { asAgentId: "ruda", channelId: CHANNEL, content: "once", mentionUserIds: [], nonce: "n-once" };
    const first = await port.sendMessage(p);
    const second = await port.sendMessage(p);
    expect(second.messageId).toBe(first.messageId);
    expect(emulator.messages(CHANNEL)).toHaveLength(1);
  });

  it("lists a channel's latest messages newest first, as Discord does: author, content, time, no nonce", async () => {
    const port = createDiscordJsPort(await agents());
    const sent: string[] = [];
    for (const [asAgentId, content] of [
      ["ruda", "one"],
      ["eden", "two"],
      ["ruda", "three"],
    ] as const) {
      sent.push(
        (
          await port.sendMessage({
            asAgentId,
            channelId: CHANNEL,
            content,
            mentionUserIds: [],
            nonce: content,
          })
        ).messageId,
      );
    }
    const listed = await port.recentMessages?.({ asAgentId: "eden", channelId: CHANNEL, limit: 2 });
    expect(listed).toEqual([
      { messageId: sent[2], authorId: RUDA, content: "three", createdAt: expect.any(Number) },
      { messageId: sent[1], authorId: EDEN, content: "two", createdAt: expect.any(Number) },
    ]);
    // The time Discord stamped it with, as its id (a snowflake) encodes it.
    expect(listed?.[0]?.createdAt).toBe(snowflakeTimestamp(sent[2] ?? ""));
  });

  it("opens a thread from a message (thread id = message id); a second one is 400 / 160004", async () => {
    const port = createDiscordJsPort(await agents());
    const { messageId } = await port.sendMessage({
      asAgentId: "ruda",
      channelId: CHANNEL,
      content: "start",
      mentionUserIds: [],
      nonce: "n-thread",
    });
    const { threadId } = await port.createThread({
      asAgentId: "ruda",
      channelId: CHANNEL,
      name: "work",
      fromMessageId: messageId,
    });
    expect(threadId).toBe(messageId);
    const error = await rejection(
      port.createThread({ asAgentId: "ruda", channelId: CHANNEL, name: "again", fromMessageId: messageId }),
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ code: 160004, status: 400 });
  });

  it("opens a standalone public thread", async () => {
    const port = createDiscordJsPort(await agents());
    const { threadId } = await port.createThread({ asAgentId: "eden", channelId: CHANNEL, name: "solo" });
    expect(emulator.threads()).toEqual([
      expect.objectContaining({ id: threadId, parentId: CHANNEL, name: "solo", type: 11, ownerId: EDEN }),
    ]);
  });

  it("rejects an unknown channel with a DiscordAPIError 404, and an unknown agent by name", async () => {
    const port = createDiscordJsPort(await agents());
    const error = await rejection(
      port.sendMessage({
        asAgentId: "ruda",
        channelId: UNKNOWN_CHANNEL,
        content: "x",
        mentionUserIds: [],
        nonce: "n",
      }),
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ status: 404 });
    await expect(
      port.sendMessage({
        asAgentId: "seum",
        channelId: CHANNEL,
        content: "x",
        mentionUserIds: [],
        nonce: "n",
      }),
    ).rejects.toThrow(/seum/);
  });
});

describe("createDiscordJsPort.describeChannel", () => {
  it("says a thread's parent and guild, that a channel is no thread, and rejects an unknown one with a 404", async () => {
    const port = createDiscordJsPort(await agents());
    const { threadId } = await port.createThread({ asAgentId: "eden", channelId: CHANNEL, name: "solo" });
    await expect(port.describeChannel?.({ channelId: threadId })).resolves.toEqual({
      channelId: threadId,
      guildId: GUILD,
      parentChannelId: CHANNEL,
      isThread: true,
    });
    await expect(port.describeChannel?.({ channelId: CHANNEL })).resolves.toEqual({
      channelId: CHANNEL,
      guildId: GUILD,
      isThread: false,
    });
    const error = await rejection(
      port.describeChannel?.({ channelId: UNKNOWN_CHANNEL }) ?? Promise.resolve(),
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ status: 404 });
  });

  it("lets the runtime refuse a discordSend into a thread whose parent is outside the allowlist", async () => {
    const clientsById = await agents();
    const port = createDiscordJsPort(clientsById);
    const { threadId } = await port.createThread({
      asAgentId: "eden",
      channelId: CHANNEL,
      name: "elsewhere",
    });
    const runtime = createA2ARuntime({
      stateDir: tempDir("a2a-adapter-"),
      config: {
        agents: { ruda: { discordBotId: RUDA }, eden: { discordBotId: EDEN } },
        discord: { collaboration: { allowedChannels: [UNKNOWN_CHANNEL] } },
      },
      discord: port,
      logger: textLogger(() => {}),
    });
    runtimes.push(runtime);
    await runtime.start();
    const result = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "x",
      threadId,
    });
    expect(result).toMatchObject({ status: "rejected", error: { code: "channel_not_allowed" } });
    expect(emulator.messages(threadId)).toEqual([]);
  });
});

describe("bridgeDiscordJs", () => {
  it("forwards each message once across clients, converts thread messages, and detaches", async () => {
    const clientsById = await agents();
    const seen: InboundDiscordMessage[] = [];
    let failing = true;
    const warnings: unknown[] = [];
    const detach = bridgeDiscordJs(
      {
        handleDiscordMessage: async (m) => {
          seen.push(m);
          if (failing) throw new Error("boom");
          return { action: "observe" };
        },
      },
      clientsById,
      { onError: (e) => warnings.push(e) },
    );
    detachers.push(detach);
    // Probes record what each client received, to prove duplicates reached the bridge.
    const received = { ruda: [] as string[], eden: [] as string[] };
    clientsById.ruda.on(Events.MessageCreate, (m) => received.ruda.push(m.id));
    clientsById.eden.on(Events.MessageCreate, (m) => received.eden.push(m.id));
    const port = createDiscordJsPort(clientsById);
    const { messageId } = await emulator.postAsUser({
      userId: HUMAN,
      channelId: CHANNEL,
      content: `<@${EDEN}> and <@${RUDA}>`,
    });
    await until(() => seen.length === 1 && warnings.length === 1, "the human's message");
    expect(seen[0]).toMatchObject({
      messageId,
      channelId: CHANNEL,
      guildId: GUILD,
      authorId: HUMAN,
      authorIsBot: false,
      content: `<@${EDEN}> and <@${RUDA}>`,
      mentionUserIds: [EDEN, RUDA],
    });
    expect(seen[0]?.threadId).toBeUndefined();
    expect(typeof seen[0]?.ts).toBe("number");

    failing = false;
    const { threadId } = await port.createThread({
      asAgentId: "ruda",
      channelId: CHANNEL,
      name: "work",
      fromMessageId: messageId,
    });
    // Both clients must know the thread before a message in it is delivered to them.
    await until(
      () => clientsById.ruda.channels.cache.has(threadId) && clientsById.eden.channels.cache.has(threadId),
      "the thread in both caches",
    );
    const inThread = await port.sendMessage({
      asAgentId: "eden",
      channelId: threadId,
      content: `<@${RUDA}> done`,
      mentionUserIds: [RUDA],
      nonce: "n-bridge",
    });
    await until(
      () => received.ruda.includes(inThread.messageId) && received.eden.includes(inThread.messageId),
      "both clients to receive the thread message",
    );
    await until(() => seen.some((m) => m.messageId === inThread.messageId), "the thread message");
    const forwarded = seen.filter((m) => m.messageId === inThread.messageId);
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]).toMatchObject({
      channelId: threadId,
      threadId,
      parentChannelId: CHANNEL,
      threadName: "work",
      authorId: EDEN,
      authorIsBot: true,
      mentionUserIds: [RUDA],
    });

    detach();
    const before = seen.length;
    const after = await emulator.postAsUser({ userId: HUMAN, channelId: CHANNEL, content: "after detach" });
    await until(
      () => received.ruda.includes(after.messageId) && received.eden.includes(after.messageId),
      "both clients to receive the message",
    );
    expect(seen.filter((m) => m.messageId === after.messageId)).toHaveLength(0);
    expect(seen.length).toBe(before);
  });
});

describe("the runtime over discord.js and the emulator", () => {
  it("discordSend mentions eden in a new thread; eden's reply there ends the mention responded", async () => {
    const clientsById = await agents();
    const runtime = createA2ARuntime({
      stateDir: tempDir("a2a-adapter-"),
      config: {
        agents: {
          ruda: { discordBotId: RUDA, name: "루다" },
          eden: { discordBotId: EDEN, name: "이든" },
        },
        discord: {
          a2aRetry: { escalationMentionId: HUMAN },
          collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] },
        },
      },
      discord: createDiscordJsPort(clientsById),
      logger: textLogger(() => {}),
    });
    runtimes.push(runtime);
    await runtime.start();
    detachers.push(bridgeDiscordJs(runtime, clientsById, { onError: () => {} }));

    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    expect(sent.status).toBe("sent");
    if (sent.status !== "sent") return;
    expect(emulator.messages(sent.threadId)).toContainEqual(
      expect.objectContaining({
        id: sent.messageId,
        authorId: RUDA,
        content: `<@${EDEN}> 코드 리뷰 해줘`,
        mentionIds: [EDEN],
      }),
    );
    // Opened from a starter in the channel that pings nobody.
    expect(emulator.messages(CHANNEL)).toEqual([
      expect.objectContaining({ id: sent.threadId, authorId: RUDA, mentionIds: [] }),
    ]);
    expect(emulator.threads()).toContainEqual(
      expect.objectContaining({ id: sent.threadId, parentId: CHANNEL }),
    );
    expect((await runtime.mentions()).find((m) => m.id === sent.mentionId)?.status).toBe("pending");

    await until(() => clientsById.eden.channels.cache.has(sent.threadId), "eden to know the thread");
    const thread = clientsById.eden.channels.cache.get(sent.threadId);
    if (!thread?.isThread()) throw new Error("not a thread");
    await thread.send({ content: "확인했습니다", allowedMentions: { parse: [] } });

    await until(
      async () => (await runtime.mentions()).find((m) => m.id === sent.mentionId)?.status === "responded",
      "the mention to end responded",
    );
  });
});
