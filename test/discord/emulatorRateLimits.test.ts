import { Client, type RateLimitData, RateLimitError, type TextChannel } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  type DiscordEmulator,
  type DiscordEmulatorOptions,
  emulatorToken,
  startDiscordEmulator,
} from "../../src/testing/index.js";
import { loginStrictClient } from "../support/discordClients.js";

const GUILD = "1600000000000000001";
const GENERAL = "1600000000000000010";
const OPS = "1600000000000000011";
const BOT_A = "1600000000000000101";
const BOT_B = "1600000000000000102";

let emulator: DiscordEmulator | undefined;
const clients: Client[] = [];
/** The emulator's clock, moved by hand. */
let time = Date.UTC(2026, 10, 24, 12, 0, 0);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await emulator?.close();
  emulator = undefined;
});

async function start(options: Partial<DiscordEmulatorOptions> = {}): Promise<DiscordEmulator> {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [
      { id: GENERAL, name: "general" },
      { id: OPS, name: "ops" },
    ],
    users: [
      { id: BOT_A, name: "alpha", bot: true },
      { id: BOT_B, name: "beta", bot: true },
    ],
    now: () => time,
    ...options,
  });
  return emulator;
}

function request(
  em: DiscordEmulator,
  as: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${em.apiUrl}/v10${path}`, {
    method,
    headers: { Authorization: `Bot ${emulatorToken(as)}`, "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const post = (em: DiscordEmulator, as: string, channel: string, content = "hi") =>
  request(em, as, "POST", `/channels/${channel}/messages`, { content });

function rateLimitHeaders(res: Response): Record<string, string | null> {
  const names = ["limit", "remaining", "reset", "reset-after", "bucket"];
  return Object.fromEntries(names.map((n) => [n, res.headers.get(`x-ratelimit-${n}`)]));
}

describe("the emulator's rate limits", () => {
  it("puts its bucket's X-RateLimit-* headers on every routed answer, errors included", async () => {
    const em = await start();
    const me = await request(em, BOT_A, "GET", "/users/@me");
    expect(me.status).toBe(200);
    expect(rateLimitHeaders(me)).toEqual({
      limit: "50",
      remaining: "49",
      reset: ((time + 1_000) / 1000).toFixed(3),
      "reset-after": "1.000",
      bucket: "GET /users/@me",
    });
    const unknown = await request(em, BOT_A, "GET", "/channels/1600000000000000999");
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("x-ratelimit-bucket")).toBe("GET /channels/{channel_id}");
    const posted = await post(em, BOT_A, GENERAL);
    expect(rateLimitHeaders(posted)).toMatchObject({ limit: "5", remaining: "4", bucket: "messages" });
  });

  it("allows 5 messages per 5 s per channel and bot, then answers 429 as Discord does until the reset", async () => {
    const em = await start();
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await post(em, BOT_A, GENERAL, `m${i}`);
      expect(res.status).toBe(200);
      remaining.push(res.headers.get("x-ratelimit-remaining"));
      time += 100;
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"]);

    // The window opened with the first post, 500 ms ago: 4.5 s to go.
    const refused = await post(em, BOT_A, GENERAL, "sixth");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5"); // whole seconds on the header
    expect(refused.headers.get("x-ratelimit-scope")).toBe("user");
    expect(refused.headers.get("x-ratelimit-global")).toBeNull();
    expect(rateLimitHeaders(refused)).toMatchObject({
      remaining: "0",
      "reset-after": "4.500",
      bucket: "messages",
    });
    expect(await refused.json()).toEqual({
      message: "You are being rate limited.",
      retry_after: 4.5,
      global: false,
    });
    expect(em.messages(GENERAL)).toHaveLength(5);

    // Other channels and other bots have buckets of their own.
    expect((await post(em, BOT_A, OPS)).status).toBe(200);
    expect((await post(em, BOT_B, GENERAL)).status).toBe(200);

    time += 4_499;
    expect((await post(em, BOT_A, GENERAL)).status).toBe(429);
    time += 1;
    const after = await post(em, BOT_A, GENERAL, "after the reset");
    expect(after.status).toBe(200);
    expect(after.headers.get("x-ratelimit-remaining")).toBe("4");
  });

  it("applies the global limit per bot across routes, with X-RateLimit-Global", async () => {
    const em = await start({ rateLimits: { global: { limit: 3, windowMs: 1_000 } } });
    for (const path of ["/users/@me", `/channels/${GENERAL}`, `/guilds/${GUILD}`]) {
      expect((await request(em, BOT_A, "GET", path)).status).toBe(200);
    }
    time += 250;
    const refused = await request(em, BOT_A, "GET", `/channels/${OPS}`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-global")).toBe("true");
    expect(refused.headers.get("x-ratelimit-scope")).toBe("global");
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toEqual({
      message: "You are being rate limited.",
      retry_after: 0.75,
      global: true,
    });
    expect((await request(em, BOT_B, "GET", "/users/@me")).status).toBe(200);
    time += 750;
    expect((await request(em, BOT_A, "GET", `/channels/${OPS}`)).status).toBe(200);
  });

  it("counts both thread routes in one bucket per channel (5 per minute)", async () => {
    const em = await start();
    const starter = (await (await post(em, BOT_A, GENERAL, "starter")).json()) as { id: string };
    const opened = await request(em, BOT_A, "POST", `/channels/${GENERAL}/messages/${starter.id}/threads`, {
      name: "from a message",
    });
    expect(opened.status).toBe(201);
    expect(rateLimitHeaders(opened)).toMatchObject({ limit: "5", remaining: "4", bucket: "threads" });
    for (let i = 0; i < 4; i += 1) {
      const res = await request(em, BOT_A, "POST", `/channels/${GENERAL}/threads`, {
        name: `t${i}`,
        type: 11,
      });
      expect(res.status).toBe(201);
    }
    const refused = await request(em, BOT_A, "POST", `/channels/${GENERAL}/threads`, {
      name: "t5",
      type: 11,
    });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ retry_after: 60 });
    expect(em.threads()).toHaveLength(5);
  });

  it("changes or turns off limits per test, and names a bad setting", async () => {
    const em = await start({ rateLimits: { messages: false } });
    for (let i = 0; i < 8; i += 1) expect((await post(em, BOT_A, GENERAL, `m${i}`)).status).toBe(200);
    await em.close();

    const off = await start({ rateLimits: false });
    const res = await request(off, BOT_A, "GET", "/users/@me");
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    await off.close();

    await expect(start({ rateLimits: { messages: { limit: 0, windowMs: 1_000 } } })).rejects.toThrow(
      /rateLimits\.messages must be false or \{ limit, windowMs \}/,
    );
    await expect(start({ rateLimits: "none" as unknown as false })).rejects.toThrow(
      /rateLimits must be false or an object/,
    );
  });

  it("an injected 429 empties the route's bucket until its Retry-After, which the header gives in whole seconds", async () => {
    const em = await start();
    em.injectFault({ kind: "rateLimit", method: "POST", path: "/messages", retryAfterMs: 1_250 });
    const refused = await post(em, BOT_A, GENERAL);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("2");
    expect(rateLimitHeaders(refused)).toMatchObject({
      remaining: "0",
      "reset-after": "1.250",
      bucket: "messages",
    });
    expect(await refused.json()).toEqual({
      message: "You are being rate limited.",
      retry_after: 1.25,
      global: false,
    });
    // A retry that comes early meets the same limit, not a fresh bucket.
    time += 1_000;
    expect((await post(em, BOT_A, GENERAL)).status).toBe(429);
    time += 250;
    expect((await post(em, BOT_A, GENERAL)).status).toBe(200);
  });
});

describe("discord.js against the emulator's buckets", () => {
  // These clients run on the real clock: the emulator must count by it too.
  const realClock = { now: () => Date.now() };

  it("a strict client refuses the request over the bucket itself, without sending it", async () => {
    const em = await start({ ...realClock, rateLimits: { messages: { limit: 2, windowMs: 60_000 } } });
    const client = await loginStrictClient(em, BOT_A, clients);
    const channel = client.channels.cache.get(GENERAL) as TextChannel;
    await channel.send("one");
    await channel.send("two");
    const error = await channel.send("three").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({
      global: false,
      hash: "messages",
      limit: 2,
    } satisfies Partial<RateLimitData>);
    expect((error as RateLimitError).timeToReset).toBeGreaterThan(55_000);
    expect(em.messages(GENERAL).map((m) => m.content)).toEqual(["one", "two"]);
  });

  it("a default client waits for the reset and then posts", async () => {
    const em = await start({ ...realClock, rateLimits: { messages: { limit: 2, windowMs: 400 } } });
    const client = new Client({ intents: [], rest: { api: em.apiUrl } });
    clients.push(client);
    client.rest.setToken(emulatorToken(BOT_A));
    const limited: RateLimitData[] = [];
    client.rest.on("rateLimited", (data) => limited.push(data));
    const started = Date.now();
    for (const content of ["one", "two", "three"]) {
      await client.rest.post(`/channels/${GENERAL}/messages`, { body: { content } });
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(limited).toEqual([expect.objectContaining({ hash: "messages", limit: 2 })]);
    expect(em.messages(GENERAL).map((m) => m.content)).toEqual(["one", "two", "three"]);
  });
});
