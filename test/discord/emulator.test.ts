// The Discord emulator, driven by real discord.js Clients over 127.0.0.1.
import {
  ChannelType,
  Client,
  type ClientOptions,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  HTTPError,
  type Message,
  RateLimitError,
  type RESTOptions,
  type TextChannel,
  type ThreadChannel,
} from "discord.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isSnowflake } from "../../src/testing/emulator/snowflake.js";
import {
  type DiscordEmulator,
  emulatorToken,
  startDiscordEmulator,
  userIdFromToken,
} from "../../src/testing/index.js";

const GUILD = "1100000000000000001";
const GENERAL = "1100000000000000010";
const OPS = "1100000000000000011";
const BOT_A = "1200000000000000001";
const BOT_B = "1200000000000000002";
const HUMAN = "1300000000000000001";

let emulator: DiscordEmulator;
let clients: Client[] = [];

beforeEach(async () => {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [
      { id: GENERAL, name: "general" },
      { id: OPS, name: "ops", denied: [BOT_B] },
    ],
    users: [
      { id: BOT_A, name: "alpha", bot: true },
      { id: BOT_B, name: "beta", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
  });
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.destroy()));
  clients = [];
  await emulator.close();
});

async function login(
  userId: string,
  rest: Partial<RESTOptions> = {},
  ws: ClientOptions["ws"] = {},
): Promise<Client<true>> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    rest: { api: emulator.apiUrl, retries: 0, rejectOnRateLimit: ["/channels"], ...rest },
    ws,
  });
  clients.push(client);
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(emulatorToken(userId));
  await ready;
  return client as Client<true>;
}

function collect(client: Client): Message[] {
  const seen: Message[] = [];
  client.on(Events.MessageCreate, (m) => seen.push(m));
  return seen;
}

async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error("timed out waiting for condition");
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function text(client: Client, id = GENERAL): TextChannel {
  const channel = client.channels.cache.get(id);
  if (!channel || channel.type !== ChannelType.GuildText) throw new Error(`no text channel ${id}`);
  return channel;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("Discord emulator", () => {
  it("tokens name their bot, and ids are 17–19 digit snowflakes", () => {
    expect(userIdFromToken(emulatorToken(BOT_A))).toBe(BOT_A);
    expect(userIdFromToken(`Bot ${Buffer.from(BOT_B).toString("base64")}.x.y`)).toBe(BOT_B);
    expect(userIdFromToken("nonsense")).toBeNull();
    expect(isSnowflake(GUILD)).toBe(true);
    expect(isSnowflake("123")).toBe(false);
    expect(emulator.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
  });

  // A guild left unavailable means discord.js gave up waiting for its GUILD_CREATE.
  it("two bots log in and get READY and GUILD_CREATE with the channels", async () => {
    const [a, b] = await Promise.all([login(BOT_A), login(BOT_B)]);
    expect(a.user.id).toBe(BOT_A);
    expect(b.user.id).toBe(BOT_B);
    for (const client of [a, b]) {
      const guild = client.guilds.cache.get(GUILD);
      expect(guild?.available).toBe(true);
      expect(text(client, GENERAL).name).toBe("general");
      expect(text(client, OPS).name).toBe("ops");
    }
    expect(emulator.connectedBots()).toBe(2);
    const me = (await a.rest.get("/users/@me")) as { id: string; bot: boolean };
    expect(me).toMatchObject({ id: BOT_A, bot: true });
  });

  it("refuses a token that names no bot", async () => {
    const client = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest: { api: emulator.apiUrl, retries: 0 },
    });
    clients.push(client);
    await expect(client.login(emulatorToken(HUMAN))).rejects.toThrow();
  });

  it("delivers a message with allowed mentions to the other bot, once per nonce", async () => {
    const [a, b] = await Promise.all([login(BOT_A), login(BOT_B)]);
    const seenByB = collect(b);
    const seenByA = collect(a);
    const options = {
      content: `<@${BOT_B}> hello @everyone`,
      allowedMentions: { parse: [], users: [BOT_B] },
      nonce: "nonce-1",
      enforceNonce: true,
    };
    const first = await text(a).send(options);
    await until(() => seenByB.length === 1);
    const received = seenByB[0];
    expect(received?.id).toBe(first.id);
    expect(received?.author.id).toBe(BOT_A);
    expect(received?.content).toBe(options.content);
    expect(received?.mentions.users.has(BOT_B)).toBe(true);
    expect(received?.mentions.everyone).toBe(false);

    const again = await text(a).send(options);
    expect(again.id).toBe(first.id);
    await sleep(50);
    expect(seenByB).toHaveLength(1);
    expect(seenByA).toHaveLength(1); // a bot receives its own message too
    expect(emulator.messages(GENERAL)).toEqual([
      expect.objectContaining({ id: first.id, authorId: BOT_A, nonce: "nonce-1", mentionIds: [BOT_B] }),
    ]);

    // Without enforce_nonce the same nonce posts again, and is not what an enforced post returns later.
    const third = await text(a).send({ content: "plain", nonce: "nonce-1" });
    expect(third.id).not.toBe(first.id);
    expect((await text(a).send(options)).id).toBe(first.id);
    // In another channel: a bot may post 5 messages per 5 s in one channel (a strict client refuses a 6th).
    const unenforced = await text(a, OPS).send({ content: "first unenforced", nonce: "nonce-2" });
    const enforced = await text(a, OPS).send({
      content: "then enforced",
      nonce: "nonce-2",
      enforceNonce: true,
    });
    expect(enforced.id).not.toBe(unenforced.id);
    expect(enforced.content).toBe("then enforced");
  });

  it("a human's message reaches both bots; REST get returns it", async () => {
    const [a, b] = await Promise.all([login(BOT_A), login(BOT_B)]);
    const seenByA = collect(a);
    const seenByB = collect(b);
    const { messageId } = await emulator.postAsUser({
      userId: HUMAN,
      channelId: GENERAL,
      content: `hi <@${BOT_A}>`,
    });
    expect(isSnowflake(messageId)).toBe(true);
    await until(() => seenByA.length === 1 && seenByB.length === 1);
    expect(seenByA[0]?.author.bot).toBe(false);
    expect(seenByB[0]?.id).toBe(messageId);
    expect(seenByB[0]?.mentions.users.has(BOT_A)).toBe(true);
    const fetched = await text(b).messages.fetch(messageId);
    expect(fetched.content).toBe(`hi <@${BOT_A}>`);
  });

  it("creates a thread from a message (id = message id), announces it, and rejects a second one", async () => {
    const [a, b] = await Promise.all([login(BOT_A), login(BOT_B)]);
    const threadsSeenByB: ThreadChannel[] = [];
    b.on(Events.ThreadCreate, (t) => threadsSeenByB.push(t));
    const starter = await text(a).send("start here");
    const thread = await starter.startThread({ name: "work" });
    expect(thread.id).toBe(starter.id);
    expect(thread.parentId).toBe(GENERAL);
    await until(() => threadsSeenByB.length === 1);
    expect(threadsSeenByB[0]?.id).toBe(starter.id);
    expect(b.channels.cache.get(starter.id)?.isThread()).toBe(true);

    const error = await rejection(
      a.rest.post(`/channels/${GENERAL}/messages/${starter.id}/threads`, { body: { name: "again" } }),
    );
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect((error as DiscordAPIError).code).toBe(160004);
    expect((error as DiscordAPIError).status).toBe(400);

    // Messages in the thread reach the other bot; posters become thread members.
    const seenByB = collect(b);
    await thread.send(`<@${BOT_B}> in thread`);
    await until(() => seenByB.length === 1);
    expect(seenByB[0]?.channelId).toBe(thread.id);
    const members = (await a.rest.get(`/channels/${thread.id}/thread-members`)) as Array<{ user_id: string }>;
    expect(members.map((m) => m.user_id).sort()).toEqual([BOT_A, BOT_B].sort());
  });

  it("creates standalone public threads (type 11) and manages thread members", async () => {
    const [a, b] = await Promise.all([login(BOT_A), login(BOT_B)]);
    const threadsSeenByB: ThreadChannel[] = [];
    b.on(Events.ThreadCreate, (t) => threadsSeenByB.push(t));
    const thread = await text(a).threads.create({ name: "standalone", type: ChannelType.PublicThread });
    expect(thread.type).toBe(ChannelType.PublicThread);
    expect(isSnowflake(thread.id)).toBe(true);
    await until(() => threadsSeenByB.length === 1);
    await thread.members.add(BOT_B);
    expect(emulator.threads()[0]?.memberIds).toEqual([BOT_A, BOT_B]);
    const bThread = b.channels.cache.get(thread.id) as ThreadChannel;
    await bThread.leave();
    expect(emulator.threads()[0]?.memberIds).toEqual([BOT_A]);
  });

  it("answers unknown channel, too long content and missing permissions with Discord errors", async () => {
    const [a, b] = await Promise.all([login(BOT_A), login(BOT_B)]);
    const unknown = await rejection(
      a.rest.post("/channels/1100000000000000999/messages", { body: { content: "x" } }),
    );
    expect(unknown).toBeInstanceOf(DiscordAPIError);
    expect(unknown).toMatchObject({ status: 404, code: 10003 });

    const tooLong = await rejection(text(a).send("x".repeat(2001)));
    expect(tooLong).toBeInstanceOf(DiscordAPIError);
    expect(tooLong).toMatchObject({ status: 400, code: 50035 });
    await text(a).send("x".repeat(2000));

    const forbidden = await rejection(text(b, OPS).send("not allowed"));
    expect(forbidden).toBeInstanceOf(DiscordAPIError);
    expect(forbidden).toMatchObject({ status: 403, code: 50013 });
  });

  it("injects a bucket 429 as a RateLimitError with retryAfter in ms, and a global one", async () => {
    const a = await login(BOT_A);
    emulator.injectFault({ kind: "rateLimit", method: "POST", path: /\/messages$/, retryAfterMs: 1500 });
    const limited = await rejection(text(a).send("limited"));
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1500);
    expect((limited as RateLimitError).global).toBe(false);
    // An immediate retry fails again without a request.
    const before = emulator.messages().length;
    await expect(text(a).send("limited again")).rejects.toBeInstanceOf(RateLimitError);
    expect(emulator.messages()).toHaveLength(before);

    emulator.injectFault({
      kind: "rateLimit",
      global: true,
      path: `/channels/${OPS}/messages`,
      retryAfterMs: 800,
    });
    const global = await rejection(text(a, OPS).send("global"));
    expect(global).toBeInstanceOf(RateLimitError);
    expect((global as RateLimitError).global).toBe(true);
  });

  it("injects 5xx (HTTPError), timeouts (AbortError) and resets (socket error) with retries: 0", async () => {
    const a = await login(BOT_A, { timeout: 300 });
    emulator.injectFault({ kind: "serverError", method: "POST" });
    const failed = await rejection(text(a).send("boom"));
    expect(failed).toBeInstanceOf(HTTPError);
    expect((failed as HTTPError).status).toBe(500);

    // With retries: 0, discord.js rethrows the network failure itself (not an HTTPError).
    emulator.injectFault({ kind: "timeout", method: "POST" });
    const timedOut = await rejection(text(a).send("slow"));
    expect((timedOut as Error).name).toBe("AbortError");

    emulator.injectFault({ kind: "reset", method: "POST" });
    const reset = await rejection(text(a).send("reset"));
    expect(reset).toMatchObject({ code: "UND_ERR_SOCKET" });

    expect(emulator.messages()).toHaveLength(0);
    await text(a).send("fine again");
    expect(emulator.messages()).toHaveLength(1);
  });

  it("a dropped gateway connection resumes and replays missed messages", async () => {
    const b = await login(BOT_B);
    const seenByB = collect(b);
    expect(emulator.dropGateway(BOT_B)).toBe(1);
    await emulator.postAsUser({ userId: HUMAN, channelId: GENERAL, content: "while away" });
    await until(() => seenByB.length === 1, 3000);
    expect(seenByB[0]?.content).toBe("while away");
    expect(emulator.connectedBots(BOT_B)).toBe(1);
  });

  it("a non-resumable drop makes the client identify again", async () => {
    // discord.js spaces identifies 5 s apart (as Discord requires); the emulator does not need that.
    const b = await login(
      BOT_B,
      {},
      { buildIdentifyThrottler: () => ({ waitForIdentify: async () => undefined }) },
    );
    const seenByB = collect(b);
    expect(emulator.dropGateway(BOT_B, { resumable: false })).toBe(1);
    await until(() => emulator.connectedBots(BOT_B) === 0);
    await until(() => emulator.connectedBots(BOT_B) === 1, 3000);
    await emulator.postAsUser({ userId: HUMAN, channelId: GENERAL, content: "after re-identify" });
    await until(() => seenByB.length === 1, 3000);
    expect(seenByB[0]?.content).toBe("after re-identify");
  });

  it("private threads (the API default type) reach their members only", async () => {
    const [a, b] = await Promise.all([login(BOT_A), login(BOT_B)]);
    const threadsSeenByB: ThreadChannel[] = [];
    b.on(Events.ThreadCreate, (t) => threadsSeenByB.push(t));
    const created = (await a.rest.post(`/channels/${GENERAL}/threads`, { body: { name: "secret" } })) as {
      id: string;
      type: number;
    };
    expect(created.type).toBe(ChannelType.PrivateThread);
    await sleep(50);
    expect(threadsSeenByB).toHaveLength(0);
    await a.rest.put(`/channels/${created.id}/thread-members/${BOT_B}`);
    expect(emulator.threads().find((t) => t.id === created.id)?.memberIds).toEqual([BOT_A, BOT_B]);
  });
});
