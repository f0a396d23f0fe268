// A bot's own reactions on the emulator (OpenClaw's acknowledgement and status reactions), the gateway
// as OpenClaw's client reads it (READY, GUILD_CREATE, reaction events), and replies to a message that
// is gone.
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import {
  type DiscordEmulator,
  type DiscordEmulatorOptions,
  emulatorToken,
  startDiscordEmulator,
} from "../../src/testing/index.js";
import { until } from "../support/discordClients.js";

const GUILD = "1800000000000000001";
const CHANNEL = "1800000000000000010";
const OTHER_CHANNEL = "1800000000000000011";
const CLAW = "1800000000000000101";
const OTHER = "1800000000000000102";
const HUMAN = "1800000000000000900";
const UNKNOWN = "1800000000000009999";
/** OpenClaw's intents: Guilds, GuildExpressions, GuildMessages, GuildMessageReactions, DMs, their reactions, MessageContent. */
const OPENCLAW_INTENTS = 1 | 8 | 512 | 1024 | 4096 | 8192 | 32768;
/** A discord.js test client's: Guilds, GuildMessages, MessageContent. */
const NO_REACTIONS_INTENTS = 1 | 512 | 32768;

let emulator: DiscordEmulator | undefined;
const sockets: WebSocket[] = [];
let time = Date.UTC(2026, 10, 24, 12, 0, 0);

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await emulator?.close();
  emulator = undefined;
});

/** Reactions are not rate-limited unless a test says so. */
async function start(options: Partial<DiscordEmulatorOptions> = {}): Promise<DiscordEmulator> {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [
      { id: CHANNEL, name: "general" },
      { id: OTHER_CHANNEL, name: "ops" },
    ],
    users: [
      { id: CLAW, name: "claw", bot: true },
      { id: OTHER, name: "other", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
    now: () => time,
    rateLimits: { reactions: false },
    ...options,
  });
  return emulator;
}

function call(em: DiscordEmulator, as: string, method: string, path: string, body?: unknown) {
  return fetch(`${em.apiBaseUrl}${path}`, {
    method,
    headers: { Authorization: `Bot ${emulatorToken(as)}`, "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** PUT or DELETE of `as`'s reaction, the emoji URL-encoded as OpenClaw sends it. */
function react(em: DiscordEmulator, as: string, method: "PUT" | "DELETE", messageId: string, emoji: string) {
  const path = `/channels/${CHANNEL}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}/@me`;
  return call(em, as, method, path);
}

async function reactionsSeenBy(em: DiscordEmulator, as: string, messageId: string): Promise<unknown> {
  const message = (await (
    await call(em, as, "GET", `/channels/${CHANNEL}/messages/${messageId}`)
  ).json()) as {
    reactions?: unknown;
  };
  return message.reactions;
}

const reaction = (name: string, count: number, me: boolean) => ({
  emoji: { id: null, name },
  count,
  count_details: { burst: 0, normal: count },
  burst_colors: [],
  me_burst: false,
  me,
});

const humanPost = async (em: DiscordEmulator, content = "hello") =>
  (await em.postAsUser({ userId: HUMAN, channelId: CHANNEL, content })).messageId;

describe("a bot's own reactions", () => {
  it("PUT adds it (204): the message shows it, `me` for that bot only; again changes nothing", async () => {
    const em = await start();
    const id = await humanPost(em);
    expect((await react(em, CLAW, "PUT", id, "👀")).status).toBe(204);
    expect((await react(em, CLAW, "PUT", id, "👀")).status).toBe(204);
    expect(await reactionsSeenBy(em, CLAW, id)).toEqual([reaction("👀", 1, true)]);
    expect(await reactionsSeenBy(em, OTHER, id)).toEqual([reaction("👀", 1, false)]);
    const list = (await (await call(em, CLAW, "GET", `/channels/${CHANNEL}/messages`)).json()) as Array<{
      reactions?: unknown;
    }>;
    expect(list[0]?.reactions).toEqual([reaction("👀", 1, true)]);
    expect(em.messages(CHANNEL)[0]?.reactions).toEqual([{ emoji: "👀", userIds: [CLAW] }]);
  });

  it("counts every bot's; DELETE takes back the caller's own, and one that is not there is accepted", async () => {
    const em = await start();
    const id = await humanPost(em);
    await react(em, CLAW, "PUT", id, "👀");
    await react(em, OTHER, "PUT", id, "👀");
    await react(em, CLAW, "PUT", id, "✅");
    expect(await reactionsSeenBy(em, OTHER, id)).toEqual([reaction("👀", 2, true), reaction("✅", 1, false)]);
    expect((await react(em, CLAW, "DELETE", id, "👀")).status).toBe(204);
    expect((await react(em, CLAW, "DELETE", id, "👀")).status).toBe(204);
    expect((await react(em, OTHER, "DELETE", id, "🧠")).status).toBe(204);
    expect(await reactionsSeenBy(em, CLAW, id)).toEqual([reaction("👀", 1, false), reaction("✅", 1, true)]);
    await react(em, OTHER, "DELETE", id, "👀");
    await react(em, CLAW, "DELETE", id, "✅");
    expect(await reactionsSeenBy(em, CLAW, id)).toBeUndefined();
    expect(em.messages(CHANNEL)[0]).not.toHaveProperty("reactions");
  });

  it("takes Unicode emojis, and refuses unknown messages, channels and emojis as Discord does", async () => {
    const em = await start();
    const id = await humanPost(em);
    for (const emoji of ["🛠️", "1️⃣", "🇰🇷", "👍🏽", "👩‍💻", "©️"]) {
      expect((await react(em, CLAW, "PUT", id, emoji)).status, emoji).toBe(204);
    }
    const answer = async (res: Promise<Response>) => {
      const r = await res;
      return { status: r.status, body: (await r.json()) as unknown };
    };
    expect(await answer(react(em, CLAW, "PUT", UNKNOWN, "👀"))).toEqual({
      status: 404,
      body: { message: "Unknown Message", code: 10008 },
    });
    const elsewhere = `/channels/${UNKNOWN}/messages/${id}/reactions/${encodeURIComponent("👀")}/@me`;
    expect((await answer(call(em, CLAW, "PUT", elsewhere))).body).toMatchObject({ code: 10003 });
    // The guild has no custom emojis; a name is not an emoji.
    for (const emoji of ["party:1800000000000000777", "thumbsup", "1", "#"]) {
      expect(await answer(react(em, CLAW, "PUT", id, emoji))).toEqual({
        status: 400,
        body: { message: "Unknown Emoji", code: 10014 },
      });
    }
  });

  it("allows 20 emojis on a message: the 21st is refused with 400 / 30010", async () => {
    const em = await start();
    const id = await humanPost(em);
    const emojis = [..."😀😁😂🤣😃😄😅😆😉😊😋😎😍😘🥰😗😙🥲😚🙂🤗"];
    for (const emoji of emojis.slice(0, 20))
      expect((await react(em, CLAW, "PUT", id, emoji)).status).toBe(204);
    const refused = await react(em, CLAW, "PUT", id, emojis[20] ?? "");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      message: "Maximum number of reactions reached (20)",
      code: 30010,
    });
    // Another bot may still join one of the 20.
    expect((await react(em, OTHER, "PUT", id, emojis[0] ?? "")).status).toBe(204);
  });

  it("counts adding and removing against one bucket per channel and bot, 1 per 250 ms", async () => {
    const em = await start({ rateLimits: {} });
    const id = await humanPost(em);
    const added = await react(em, CLAW, "PUT", id, "👀");
    expect(added.headers.get("x-ratelimit-bucket")).toBe("reactions");
    expect(added.headers.get("x-ratelimit-remaining")).toBe("0");
    const refused = await react(em, CLAW, "DELETE", id, "👀");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-reset-after")).toBe("0.250");
    expect((await react(em, OTHER, "PUT", id, "👀")).status).toBe(204);
    time += 250;
    expect((await react(em, CLAW, "DELETE", id, "👀")).status).toBe(204);
  });
});

interface Dispatch {
  t: string;
  d: Record<string, unknown>;
}

/** A gateway session as OpenClaw opens one: `?v=10&encoding=json` on the URL, IDENTIFY with `intents`. */
async function session(em: DiscordEmulator, userId: string, intents: number): Promise<Dispatch[]> {
  const socket = new WebSocket(`${em.gatewayUrl}?v=10&encoding=json`);
  sockets.push(socket);
  const events: Dispatch[] = [];
  socket.on("message", (raw: WebSocket.RawData) => {
    const payload = JSON.parse(raw.toString()) as { op: number; t: string; d: Record<string, unknown> };
    if (payload.op === 0) events.push({ t: payload.t, d: payload.d });
    if (payload.op !== 10) return;
    const properties = { os: "linux", browser: "openclaw", device: "openclaw" };
    socket.send(JSON.stringify({ op: 2, d: { token: emulatorToken(userId), intents, properties } }));
  });
  await until(() => events.some((e) => e.t === "GUILD_CREATE"), "GUILD_CREATE");
  return events;
}

describe("the gateway, as OpenClaw's client reads it", () => {
  it("READY carries the application's flags; GUILD_CREATE the time the bot joined", async () => {
    const em = await start();
    const [ready, guild] = await session(em, CLAW, OPENCLAW_INTENTS);
    expect(ready?.t).toBe("READY");
    expect(ready?.d.application).toEqual({ id: CLAW, flags: (1 << 13) | (1 << 15) | (1 << 19) });
    expect(new URL(String(ready?.d.resume_gateway_url)).origin).toBe(new URL(em.gatewayUrl).origin);
    expect(guild?.d).toMatchObject({ id: GUILD, joined_at: new Date(time).toISOString(), voice_states: [] });
    await em.close();

    // OpenClaw introduces itself in a guild it joined under 5 minutes ago: `joinedAt` can say long ago.
    const joinedAt = time - 30 * 86_400_000;
    const longStanding = await start({ joinedAt });
    const [, again] = await session(longStanding, CLAW, OPENCLAW_INTENTS);
    expect(again?.d.joined_at).toBe(new Date(joinedAt).toISOString());
    const members = again?.d.members as Array<{ joined_at: string }>;
    expect(members[0]?.joined_at).toBe(new Date(joinedAt).toISOString());
  });

  it("sends MESSAGE_REACTION_ADD / _REMOVE to the bots with the GUILD_MESSAGE_REACTIONS intent", async () => {
    const em = await start();
    const withIntent = await session(em, CLAW, OPENCLAW_INTENTS);
    const without = await session(em, OTHER, NO_REACTIONS_INTENTS);
    const id = await humanPost(em);
    await react(em, CLAW, "PUT", id, "👀");
    await react(em, CLAW, "DELETE", id, "👀");
    await humanPost(em, "after");
    const seen = (events: Dispatch[]) => events.slice(2).map((e) => e.t);
    await until(() => seen(withIntent).length === 4 && seen(without).length === 2, "the events");
    expect(seen(withIntent)).toEqual([
      "MESSAGE_CREATE",
      "MESSAGE_REACTION_ADD",
      "MESSAGE_REACTION_REMOVE",
      "MESSAGE_CREATE",
    ]);
    expect(seen(without)).toEqual(["MESSAGE_CREATE", "MESSAGE_CREATE"]);
    const common = {
      user_id: CLAW,
      channel_id: CHANNEL,
      message_id: id,
      guild_id: GUILD,
      burst: false,
      type: 0,
    };
    expect(withIntent[3]?.d).toMatchObject({
      ...common,
      emoji: { id: null, name: "👀" },
      message_author_id: HUMAN,
      member: { user: { id: CLAW } },
    });
    expect(withIntent[4]?.d).toEqual({ ...common, emoji: { id: null, name: "👀" } });
  });
});

describe("a reply to a message that is not there", () => {
  it("with fail_if_not_exists: false it is posted as a plain message; else 404 / 10008", async () => {
    const em = await start();
    const body = (failIfNotExists?: boolean) => ({
      content: "answer",
      message_reference: {
        message_id: UNKNOWN,
        ...(failIfNotExists === undefined ? {} : { fail_if_not_exists: failIfNotExists }),
      },
    });
    const plain = await call(em, CLAW, "POST", `/channels/${CHANNEL}/messages`, body(false));
    expect(plain.status).toBe(200);
    const posted = (await plain.json()) as Record<string, unknown>;
    expect(posted).toMatchObject({ type: 0, content: "answer" });
    expect(posted).not.toHaveProperty("message_reference");
    // A message of another channel is not there either.
    const elsewhere = (await em.postAsUser({ userId: HUMAN, channelId: OTHER_CHANNEL, content: "x" }))
      .messageId;
    const crossed = {
      content: "answer",
      message_reference: { message_id: elsewhere, fail_if_not_exists: false },
    };
    const crossedPost = await call(em, CLAW, "POST", `/channels/${CHANNEL}/messages`, crossed);
    expect(((await crossedPost.json()) as { type: number }).type).toBe(0);
    for (const flag of [undefined, true]) {
      const refused = await call(em, CLAW, "POST", `/channels/${CHANNEL}/messages`, body(flag));
      expect(refused.status).toBe(404);
      expect(await refused.json()).toEqual({ message: "Unknown Message", code: 10008 });
    }
  });
});
