// The emulator as OpenClaw's Discord client uses it: DISCORD_API_URL (`apiBaseUrl`) with the gateway on
// its origin, the bot's application, its commands (global and in the guild), the names its config
// looks up. The requests are OpenClaw's (openClawClient.ts); their exchanges are checked against
// Discord's spec in conformance.test.ts.
import { afterEach, describe, expect, it } from "vitest";
import {
  type DiscordEmulator,
  type DiscordEmulatorOptions,
  emulatorToken,
  startDiscordEmulator,
} from "../../src/testing/index.js";
import { type Answer, OpenClawRest, slashCommand } from "./openClawClient.js";

const GUILD = "1700000000000000001";
const CHANNEL = "1700000000000000010";
const CLAW = "1700000000000000101";
const OTHER = "1700000000000000102";
const HUMAN = "1700000000000000900";
const UNKNOWN = "1700000000000009999";

let emulator: DiscordEmulator | undefined;
/** The emulator's clock, moved by hand. */
let time = Date.UTC(2026, 10, 24, 12, 0, 0);

afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

/** An emulator on a clock moved by hand; command creates are not limited unless a test says so. */
async function start(options: Partial<DiscordEmulatorOptions> = {}): Promise<DiscordEmulator> {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [{ id: CHANNEL, name: "general" }],
    users: [
      { id: CLAW, name: "claw", bot: true },
      { id: OTHER, name: "other", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
    now: () => time,
    rateLimits: { commands: false },
    ...options,
  });
  return emulator;
}

/** OpenClaw's REST client, logged in as `userId`. */
const openClaw = (em: DiscordEmulator, userId = CLAW) =>
  new OpenClawRest(em.apiBaseUrl, emulatorToken(userId));

/** One request, without OpenClaw's waiting for buckets: to see the emulator's 429s. */
async function once(em: DiscordEmulator, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${em.apiBaseUrl}${path}`, {
    method,
    headers: { Authorization: `Bot ${emulatorToken(CLAW)}`, "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const GLOBAL = `/applications/${CLAW}/commands`;
const IN_GUILD = `/applications/${CLAW}/guilds/${GUILD}/commands`;

type Command = Record<string, unknown> & { id: string; version: string; name: string };
const command = (answer: Answer) => answer.body as Command;
const names = (answer: Answer) => (answer.body as Command[]).map((c) => c.name);

describe("DISCORD_API_URL: the versioned REST base, with the gateway on its origin", () => {
  it("apiBaseUrl is …/api/v10, and GET …/gateway/bot answers a WebSocket URL OpenClaw accepts", async () => {
    const em = await start();
    expect(em.apiBaseUrl).toBe(`${em.apiUrl}/v10`);
    expect(em.apiBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v10$/);
    // OpenClaw derives the gateway's allowed origin from DISCORD_API_URL (http → ws, same host).
    const base = new URL(em.apiBaseUrl);
    const { body } = await openClaw(em).request("GET", "/gateway/bot");
    const url = (body as { url: string }).url;
    expect(url).toBe(em.gatewayUrl);
    expect(new URL(url).origin).toBe(`ws://${base.host}`);
  });

  it("an unversioned base (…/api) is not where Discord's routes are: 404", async () => {
    const em = await start();
    const res = await fetch(`${em.apiUrl}/users/@me`, {
      headers: { Authorization: `Bot ${emulatorToken(CLAW)}` },
    });
    expect(res.status).toBe(404);
  });
});

describe("a bot's application (GET /oauth2/applications/@me)", () => {
  it("has the bot's id, the bot, an owner, and flags saying the privileged intents are allowed", async () => {
    const em = await start();
    const { status, body } = await openClaw(em).request("GET", "/oauth2/applications/@me");
    expect(status).toBe(200);
    const app = body as {
      id: string;
      bot: { id: string; bot: boolean };
      owner: { id: string };
      flags: number;
    };
    expect(app.id).toBe(CLAW);
    expect(app.bot).toMatchObject({ id: CLAW, bot: true });
    expect(app.owner.id).toBe(HUMAN);
    // GATEWAY_MESSAGE_CONTENT_LIMITED: what OpenClaw's probe reads as Message Content allowed.
    expect(app.flags & (1 << 19)).not.toBe(0);
    const other = await openClaw(em, OTHER).request("GET", "/oauth2/applications/@me");
    expect((other.body as { id: string }).id).toBe(OTHER);
  });
});

describe("application commands", () => {
  it("POST creates (201); the same name again updates it in place (200, same id, new version)", async () => {
    const em = await start();
    const rest = openClaw(em);
    expect((await rest.request("GET", GLOBAL)).body).toEqual([]);
    const created = await rest.request("POST", GLOBAL, slashCommand("status", "Show status"));
    expect(created.status).toBe(201);
    expect(command(created)).toMatchObject({ application_id: CLAW, name: "status", type: 1 });
    expect(command(created).version).toBe(command(created).id);

    const same = await rest.request("POST", GLOBAL, slashCommand("status", "Show status"));
    expect(same.status).toBe(200);
    expect(command(same)).toEqual(command(created));
    const changed = await rest.request("POST", GLOBAL, slashCommand("status", "Show the status"));
    expect(changed.status).toBe(200);
    expect(command(changed)).toMatchObject({ id: command(created).id, description: "Show the status" });
    expect(command(changed).version).not.toBe(command(created).version);
    expect(names(await rest.request("GET", GLOBAL))).toEqual(["status"]);
  });

  it("lists a command as sent, so OpenClaw's reconcile finds nothing to change on its next start", async () => {
    const em = await start();
    const rest = openClaw(em);
    const sent = slashCommand("model", "Pick a model");
    await rest.request("POST", GLOBAL, sent);
    const listed = (await rest.request("GET", GLOBAL)).body as Command[];
    expect(listed).toHaveLength(1);
    // The fields OpenClaw leaves out of its comparison are Discord's own.
    const {
      id: _id,
      application_id: _app,
      version: _v,
      dm_permission: _dm,
      nsfw: _nsfw,
      ...kept
    } = listed[0] as Command;
    expect(kept).toEqual(sent);
  });

  it("PUT overwrites the set: a name kept keeps its id, the others go, new ones are created", async () => {
    const em = await start();
    const rest = openClaw(em);
    const status = command(await rest.request("POST", GLOBAL, slashCommand("status", "Show status")));
    await rest.request("POST", GLOBAL, slashCommand("help", "Show help"));
    const put = await rest.request("PUT", GLOBAL, [
      slashCommand("model", "Pick a model"),
      slashCommand("status", "Show status"),
    ]);
    expect(put.status).toBe(200);
    expect(names(put)).toEqual(["model", "status"]);
    const kept = (put.body as Command[])[1];
    expect(kept).toMatchObject({ id: status.id, version: status.version });
    expect((await rest.request("GET", GLOBAL)).body).toEqual(put.body);
    expect((await rest.request("PUT", GLOBAL, [])).body).toEqual([]);
  });

  it("PATCH edits a command, DELETE removes it (204); then both answer 404 / 10063", async () => {
    const em = await start();
    const rest = openClaw(em);
    const help = command(await rest.request("POST", GLOBAL, slashCommand("help", "Show help")));
    const patched = await rest.request("PATCH", `${GLOBAL}/${help.id}`, { description: "Help, please" });
    expect(patched.status).toBe(200);
    expect(command(patched)).toMatchObject({ id: help.id, name: "help", description: "Help, please" });
    expect((await rest.request("DELETE", `${GLOBAL}/${help.id}`)).status).toBe(204);
    expect((await rest.request("GET", GLOBAL)).body).toEqual([]);
    for (const method of ["PATCH", "DELETE"]) {
      const gone = await rest.request(method, `${GLOBAL}/${help.id}`, method === "PATCH" ? {} : undefined);
      expect(gone).toEqual({ status: 404, body: { message: "Unknown application command", code: 10063 } });
    }
  });

  it("keeps guild commands apart from global ones, and each bot's apart from another's", async () => {
    const em = await start();
    const rest = openClaw(em);
    const put = await rest.request("PUT", IN_GUILD, [slashCommand("voice", "Join voice")]);
    expect((put.body as Command[])[0]).toMatchObject({ name: "voice", guild_id: GUILD });
    expect((await rest.request("POST", IN_GUILD, slashCommand("reset", "Reset"))).status).toBe(201);
    expect(names(await rest.request("GET", IN_GUILD))).toEqual(["voice", "reset"]);
    expect((await rest.request("GET", GLOBAL)).body).toEqual([]);
    const elsewhere = await rest.request("GET", `/applications/${CLAW}/guilds/${UNKNOWN}/commands`);
    expect(elsewhere).toEqual({ status: 404, body: { message: "Unknown Guild", code: 10004 } });

    // A bot reaches its own application only.
    const other = openClaw(em, OTHER);
    expect((await other.request("GET", `/applications/${OTHER}/guilds/${GUILD}/commands`)).body).toEqual([]);
    for (const path of [GLOBAL, IN_GUILD]) {
      expect(await other.request("GET", path)).toEqual({
        status: 403,
        body: { message: "Missing Access", code: 50001 },
      });
    }
  });

  it("refuses what Discord refuses, with its form errors", async () => {
    const em = await start();
    const rest = openClaw(em);
    const refused = async (method: string, path: string, body: unknown) => {
      const answer = await rest.request(method, path, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 50035, message: "Invalid Form Body" });
      return (answer.body as { errors: unknown }).errors;
    };
    expect(await refused("POST", GLOBAL, slashCommand("Status", "Capitals"))).toEqual({
      name: { _errors: [{ code: "APPLICATION_COMMAND_INVALID_NAME", message: "Command name is invalid" }] },
    });
    expect(await refused("POST", GLOBAL, slashCommand("two words", "Spaces"))).toHaveProperty("name");
    expect(await refused("POST", GLOBAL, slashCommand("ok", ""))).toHaveProperty("description");
    const twice = [slashCommand("same", "One"), slashCommand("same", "Two")];
    expect(await refused("PUT", GLOBAL, twice)).toHaveProperty(["1", "name"]);
    expect(await refused("PUT", GLOBAL, slashCommand("single", "Not a list"))).toHaveProperty("_errors");
    // A context-menu command takes capitals and spaces, and no description.
    const menu = await rest.request("POST", GLOBAL, { name: "Summarize This", type: 3 });
    expect(command(menu)).toMatchObject({ name: "Summarize This", type: 3, description: "" });
    expect(names(await rest.request("GET", GLOBAL))).toEqual(["Summarize This"]);
  });

  it("creates count against Discord's bucket, 5 per 20 s per bot; { commands: false } lifts it", async () => {
    const em = await start({ rateLimits: {} });
    for (let i = 0; i < 5; i += 1) {
      expect((await once(em, "POST", GLOBAL, slashCommand(`c${i}`, "A command"))).status).toBe(201);
    }
    const refused = await once(em, "POST", GLOBAL, slashCommand("c5", "A command"));
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-bucket")).toBe("commands");
    expect(refused.headers.get("x-ratelimit-limit")).toBe("5");
    expect(refused.headers.get("x-ratelimit-reset-after")).toBe("20.000");
    // Listing and overwriting are other buckets; guild commands count per guild.
    expect((await once(em, "GET", GLOBAL)).status).toBe(200);
    expect((await once(em, "POST", IN_GUILD, slashCommand("g", "A command"))).status).toBe(201);
    time += 20_000;
    expect((await once(em, "POST", GLOBAL, slashCommand("c5", "A command"))).status).toBe(201);
    await em.close();

    const lifted = await start();
    for (let i = 0; i < 12; i += 1) {
      expect((await once(lifted, "POST", GLOBAL, slashCommand(`c${i}`, "A command"))).status).toBe(201);
    }
  });
});

describe("the names OpenClaw's config may hold, looked up", () => {
  it("lists the bot's guilds, and finds members by the start of their name", async () => {
    const em = await start();
    const rest = openClaw(em);
    expect((await rest.request("GET", "/users/@me/guilds")).body).toEqual([
      expect.objectContaining({ id: GUILD, name: "Emulated Guild", owner: false, features: [] }),
    ]);
    const found = await rest.request("GET", `/guilds/${GUILD}/members/search?query=HU&limit=25`);
    expect((found.body as Array<{ user: { id: string } }>).map((m) => m.user.id)).toEqual([HUMAN]);
    expect((await rest.request("GET", `/guilds/${GUILD}/members/search?query=zz`)).body).toEqual([]);
    const noQuery = await rest.request("GET", `/guilds/${GUILD}/members/search`);
    expect(noQuery.body).toMatchObject({ code: 50035, errors: { query: expect.anything() as unknown } });
  });
});
