// The system messages Discord posts for threads, as the emulator posts them and discord.js sees them.
import {
  ChannelType,
  type Client,
  Events,
  type Message,
  MessageFlags,
  MessageType,
  type PartialMessage,
  type TextChannel,
  type ThreadChannel,
} from "discord.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DiscordEmulator, startDiscordEmulator } from "../../src/testing/index.js";
import { loginStrictClient, until } from "../support/discordClients.js";

const GUILD = "1160000000000000001";
const GENERAL = "1160000000000000010";
const BOT_A = "1260000000000000001";
const BOT_B = "1260000000000000002";
const HUMAN = "1360000000000000001";

let emulator: DiscordEmulator;
const clients: Client[] = [];

beforeEach(async () => {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: GENERAL, name: "general" }],
    users: [
      { id: BOT_A, name: "alpha", bot: true },
      { id: BOT_B, name: "beta", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
  });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await emulator.close();
});

const bots = () =>
  Promise.all([loginStrictClient(emulator, BOT_A, clients), loginStrictClient(emulator, BOT_B, clients)]);

function general(client: Client): TextChannel {
  const channel = client.channels.cache.get(GENERAL);
  if (channel?.type !== ChannelType.GuildText) throw new Error("no general channel");
  return channel;
}

function collect(client: Client): Message[] {
  const seen: Message[] = [];
  client.on(Events.MessageCreate, (m) => seen.push(m));
  return seen;
}

describe("thread system messages", () => {
  it("a public thread opened without a message posts THREAD_CREATED (18) in the parent: author the creator, content its name, a reference to it", async () => {
    const [a, b] = await bots();
    const seenByB = collect(b);
    const thread = await general(a).threads.create({ name: "release plan", type: ChannelType.PublicThread });

    await until(() => seenByB.length === 1, "the other bot to see the system message");
    const seen = seenByB[0] as Message;
    expect(seen.system).toBe(true);
    expect(seen.type).toBe(MessageType.ThreadCreated);
    expect(seen.channelId).toBe(GENERAL);
    expect(seen.author.id).toBe(BOT_A);
    expect(seen.content).toBe("release plan");
    expect(seen.reference).toMatchObject({ channelId: thread.id, guildId: GUILD });
    // The thread came first, so discord.js already knows it when the message arrives.
    expect(b.channels.cache.get(thread.id)?.isThread()).toBe(true);

    expect(emulator.messages(GENERAL)).toEqual([
      { id: seen.id, type: 18, channelId: GENERAL, authorId: BOT_A, content: "release plan", mentionIds: [] },
    ]);
    expect(emulator.messages(thread.id)).toEqual([]);
    // The message list has it too, as Discord's does: no nonce, a reference to the thread.
    const listed = (await a.rest.get(`/channels/${GENERAL}/messages`)) as Array<Record<string, unknown>>;
    expect(listed).toEqual([
      expect.objectContaining({
        id: seen.id,
        type: 18,
        content: "release plan",
        message_reference: { type: 0, channel_id: thread.id, guild_id: GUILD },
      }),
    ]);
    expect(listed[0]).not.toHaveProperty("nonce");
  });

  it("a private thread is announced nowhere", async () => {
    const [a, b] = await bots();
    const seenByB = collect(b);
    await general(a).threads.create({ name: "secret", type: ChannelType.PrivateThread });
    // An ordinary post after it: once B sees it, B would have seen an announcement before it.
    const marker = await general(a).send("after");
    await until(() => seenByB.some((m) => m.id === marker.id), "the marker");
    expect(seenByB.filter((m) => m.channelId === GENERAL).map((m) => m.type)).toEqual([MessageType.Default]);
    expect(emulator.messages(GENERAL).map((m) => m.type)).toEqual([0]);
  });

  it("a thread started from a message updates that message (MESSAGE_UPDATE: HAS_THREAD, its thread) and posts nothing", async () => {
    const [a, b] = await bots();
    const seenByB = collect(b);
    const updates: Array<{ before: Message | PartialMessage; after: Message }> = [];
    b.on(Events.MessageUpdate, (before, after) => {
      updates.push({ before, after: after as Message });
    });
    const starter = await general(a).send("start here");
    await until(() => seenByB.length === 1, "the starter");
    const cached = seenByB[0] as Message;
    expect(cached.hasThread).toBe(false);

    const thread = await starter.startThread({ name: "work" });
    await until(() => updates.length === 1, "the starter's MESSAGE_UPDATE");
    const { after } = updates[0] as { after: Message };
    expect(after.id).toBe(starter.id);
    expect(after.hasThread).toBe(true);
    expect(after.flags.has(MessageFlags.HasThread)).toBe(true);
    expect(after.thread?.id).toBe(thread.id);
    expect(after.content).toBe("start here");
    // discord.js patched the message it had cached: the bot's copy now shows the thread.
    expect(cached.hasThread).toBe(true);
    expect(cached.thread?.id).toBe(thread.id);

    const fetched = (await b.rest.get(`/channels/${GENERAL}/messages/${starter.id}`)) as Record<
      string,
      unknown
    >;
    expect(fetched).toMatchObject({ type: 0, flags: 32, thread: { id: thread.id, name: "work" } });
    expect(emulator.messages(GENERAL).map((m) => [m.id, m.type])).toEqual([[starter.id, 0]]);
    expect(emulator.messages(thread.id)).toEqual([]);
    expect(seenByB).toHaveLength(1);
  });

  it("a member added by someone else posts RECIPIENT_ADD (1) in the thread, removed RECIPIENT_REMOVE (2); joining and leaving post nothing", async () => {
    const [a, b] = await bots();
    const seenByB = collect(b);
    const thread = await general(a).threads.create({ name: "members", type: ChannelType.PublicThread });
    await until(() => b.channels.cache.has(thread.id), "the thread");
    const bThread = b.channels.cache.get(thread.id) as ThreadChannel;

    await bThread.join();
    await bThread.leave();
    await thread.members.add(HUMAN);
    await until(() => seenByB.some((m) => m.channelId === thread.id), "the added member's message");
    await thread.members.remove(HUMAN);
    await until(() => seenByB.filter((m) => m.channelId === thread.id).length === 2, "the removal's message");

    const inThread = seenByB.filter((m) => m.channelId === thread.id);
    expect(
      inThread.map((m) => [m.type, m.system, m.author.id, [...m.mentions.users.keys()], m.content]),
    ).toEqual([
      [MessageType.RecipientAdd, true, BOT_A, [HUMAN], ""],
      [MessageType.RecipientRemove, true, BOT_A, [HUMAN], ""],
    ]);
    expect(
      emulator.messages(thread.id).map((m) => ({ type: m.type, authorId: m.authorId, nonce: m.nonce })),
    ).toEqual([
      { type: 1, authorId: BOT_A, nonce: undefined },
      { type: 2, authorId: BOT_A, nonce: undefined },
    ]);
    expect(emulator.threads()[0]?.memberIds).toEqual([BOT_A]);
  });
});
