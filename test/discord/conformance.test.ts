// The emulator against Discord's own OpenAPI spec: every REST exchange of real flows (discord.js clients,
// the runtime on createDiscordJsPort + bridgeDiscordJs, OpenClaw's Discord client, and error answers) is
// validated, its response against the operation's response schema and its request body against the
// request schema.
import { type Client, Routes, type ThreadChannel } from "discord.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bridgeDiscordJs, createDiscordJsPort } from "../../src/discord/index.js";
import { routes } from "../../src/testing/emulator/restRoutes.js";
import {
  type DiscordEmulator,
  emulatorToken,
  type RestExchange,
  startDiscordEmulator,
} from "../../src/testing/index.js";
import { type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import { loginStrictClient, until } from "../support/discordClients.js";
import { discordSpec } from "../support/discordSpec.js";
import { tempDir } from "../support/tempDir.js";
import { openClawFlows } from "./openClawClient.js";
import { textLogger } from "../../src/runtime/logger.js";

const GUILD = "1500000000000000001";
const CHANNEL = "1500000000000000010";
const CLOSED = "1500000000000000011";
/** Where the refused posts go: Discord counts them against a channel's bucket too, so not in CHANNEL. */
const SCRATCH = "1500000000000000012";
/** OpenClaw's channel, with its bot: the buckets of the other flows stay out of its way. */
const CLAW_CHANNEL = "1500000000000000013";
const CLAW = "1500000000000000103";
const RUDA = "1500000000000000101";
const EDEN = "1500000000000000102";
const HUMAN = "1500000000000000900";
const UNKNOWN = "1500000000000009999";

let emulator: DiscordEmulator;
let exchanges: RestExchange[] = [];
const clients: Client[] = [];
let runtime: A2ARuntime | undefined;
let detach: (() => void) | undefined;

/** A raw REST call as `userId`'s bot (or with `token`), for the answers discord.js would refuse to make. */
async function raw(
  method: string,
  path: string,
  o: { userId?: string; token?: string; body?: string } = {},
): Promise<number> {
  const response = await fetch(`${emulator.apiUrl}/v10${path}`, {
    method,
    headers: {
      Authorization: `Bot ${o.token ?? emulatorToken(o.userId ?? RUDA)}`,
      ...(o.body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    ...(o.body === undefined ? {} : { body: o.body }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function rejects(promise: Promise<unknown>): Promise<void> {
  await promise.then(
    () => {
      throw new Error("expected Discord to refuse");
    },
    () => undefined,
  );
}

async function mentionStatus(id: string): Promise<string | undefined> {
  return (await runtime?.mentions())?.find((m) => m.id === id)?.status;
}

/** The runtime's flows: a mention answered, one reminded twice and escalated, and the port's reads. */
async function runtimeFlows(ruda: Client<true>, eden: Client<true>): Promise<void> {
  const clientsById = { ruda, eden };
  const port = createDiscordJsPort(clientsById);
  runtime = createA2ARuntime({
    stateDir: tempDir("a2a-conformance-"),
    config: {
      agents: { ruda: { discordBotId: RUDA, name: "루다" }, eden: { discordBotId: EDEN, name: "이든" } },
      discord: {
        // Only the urgent mention times out during the test: the answered one never meets a reminder.
        a2aRetry: {
          responseTimeoutMs: 60_000,
          urgentResponseTimeoutMs: 100,
          maxAttempts: 3,
          escalationMentionId: HUMAN,
        },
        collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] },
      },
    },
    discord: port,
    logger: textLogger(() => {}),
  });
  await runtime.start();
  const current = runtime;
  detach = bridgeDiscordJs(current, clientsById, { onError: () => {} });

  // Answered: eden's bot replies in the thread, with discord.js's own request body.
  const answered = await current.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "리뷰 부탁해",
  });
  if (answered.status !== "sent") throw new Error(`not sent: ${JSON.stringify(answered)}`);
  await until(() => eden.channels.cache.has(answered.threadId), "eden to see the thread");
  const thread = eden.channels.cache.get(answered.threadId) as ThreadChannel;
  await thread.send({ content: `<@${RUDA}> 확인했습니다`, allowedMentions: { users: [RUDA] } });
  await until(async () => (await mentionStatus(answered.mentionId)) === "responded", "the answer");

  // Unanswered: two reminders, then the escalation pinging the human.
  const ignored = await current.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "배포 확인",
    topicId: "deploy",
    urgent: true,
  });
  if (ignored.status !== "sent") throw new Error(`not sent: ${JSON.stringify(ignored)}`);
  await until(async () => (await mentionStatus(ignored.mentionId)) === "escalated", "the escalation");

  // The port's other calls: a standalone thread, a channel and a thread described, recent messages.
  await port.createThread({ asAgentId: "ruda", channelId: CHANNEL, name: "standalone" });
  await port.describeChannel?.({ channelId: CHANNEL });
  await port.describeChannel?.({ channelId: answered.threadId });
  await port.recentMessages?.({ asAgentId: "ruda", channelId: answered.threadId, limit: 10 });
  // The channel's list holds the thread starters (and whatever Discord posts there for the threads).
  await port.recentMessages?.({ asAgentId: "ruda", channelId: CHANNEL, limit: 50 });
  // The same starter again: Discord allows one thread per message (400 / 160004).
  await rejects(
    port.createThread({
      asAgentId: "ruda",
      channelId: CHANNEL,
      name: "again",
      fromMessageId: answered.threadId,
    }),
  );
  // Refused posts: missing permissions, too long, empty.
  const post = (channelId: string, content: string) =>
    port.sendMessage({
      asAgentId: "ruda",
      channelId,
      content,
      mentionUserIds: [],
      nonce: `n${content.length}`,
    });
  await rejects(post(CLOSED, "닫힌 채널"));
  await rejects(post(SCRATCH, "x".repeat(2001)));
  await rejects(post(SCRATCH, ""));
}

/** What a bot's discord.js client reads: guild, channels, members, threads, users, messages, typing. */
async function clientFlows(ruda: Client<true>): Promise<void> {
  const guild = await ruda.guilds.fetch({ guild: GUILD, force: true });
  await guild.channels.fetch();
  await guild.members.fetch({ user: HUMAN, force: true });
  const { threads } = await guild.channels.fetchActiveThreads();
  await ruda.users.fetch(HUMAN, { force: true });
  await ruda.rest.get(Routes.user());
  await ruda.rest.get(Routes.gateway());
  const channel = await ruda.channels.fetch(CHANNEL, { force: true });
  if (!channel?.isTextBased() || !("sendTyping" in channel)) throw new Error("not a text channel");
  await channel.sendTyping();
  const [first] = emulator.messages(CHANNEL);
  if (!first) throw new Error("no message in the channel");
  await channel.messages.fetch({ message: first.id, force: true });

  const thread = threads.find((t) => t.ownerId === RUDA);
  if (!thread) throw new Error("no thread of ruda's among the active threads");
  await thread.members.add(HUMAN);
  await thread.members.fetch({ cache: false });
  await thread.members.fetch({ member: HUMAN, force: true });
  await thread.members.remove(HUMAN);
  await thread.leave();
  await thread.join();
  await thread.members.fetchMe({ force: true });
}

/** Error answers the flows above do not produce. */
async function errorAnswers(): Promise<void> {
  expect(await raw("GET", "/users/@me", { token: "not-a-token" })).toBe(401);
  expect(await raw("GET", `/channels/${UNKNOWN}`)).toBe(404);
  expect(await raw("GET", `/channels/${CHANNEL}/messages/${UNKNOWN}`)).toBe(404);
  expect(await raw("GET", `/guilds/${UNKNOWN}`)).toBe(404);
  expect(await raw("GET", `/users/${UNKNOWN}`)).toBe(404);
  expect(await raw("GET", "/no/such/route")).toBe(404);
  expect(await raw("DELETE", `/channels/${CHANNEL}`)).toBe(405);
  expect(await raw("GET", `/channels/${CHANNEL}/thread-members`)).toBe(400);
  expect(await raw("POST", `/channels/${SCRATCH}/messages`, { body: "{not json" })).toBe(400);
  emulator.injectFault({ kind: "rateLimit", method: "GET", path: "/gateway" });
  expect(await raw("GET", "/gateway")).toBe(429);
  emulator.injectFault({ kind: "rateLimit", global: true, method: "GET", path: "/gateway" });
  expect(await raw("GET", "/gateway")).toBe(429);
  emulator.injectFault({ kind: "serverError", status: 502, method: "GET", path: "/gateway" });
  expect(await raw("GET", "/gateway")).toBe(502);
}

beforeAll(async () => {
  emulator = await startDiscordEmulator({
    guildId: GUILD,
    channels: [
      { id: CHANNEL, name: "collab" },
      { id: CLOSED, name: "closed", denied: [RUDA] },
      { id: SCRATCH, name: "scratch" },
      { id: CLAW_CHANNEL, name: "claw" },
    ],
    users: [
      { id: RUDA, name: "ruda", bot: true },
      { id: EDEN, name: "eden", bot: true },
      { id: CLAW, name: "claw", bot: true },
      { id: HUMAN, name: "human", bot: false },
    ],
    recordExchanges: true,
  });
  const [ruda, eden] = await Promise.all([
    loginStrictClient(emulator, RUDA, clients),
    loginStrictClient(emulator, EDEN, clients),
  ]);
  await runtimeFlows(ruda, eden);
  await clientFlows(ruda);
  await errorAnswers();
  const claw = { guild: GUILD, channel: CLAW_CHANNEL, bot: CLAW, otherBot: EDEN, human: HUMAN };
  await openClawFlows(emulator, { ...claw, humanName: "human" });
  exchanges = emulator.exchanges();
}, 15_000);

afterAll(async () => {
  detach?.();
  await runtime?.stop();
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
  await emulator.close();
});

/** The exchanges whose request the test made invalid on purpose: refused by the emulator, flagged by the spec. */
const deliberate = (e: RestExchange) => typeof e.requestBody === "string";

describe("the emulator's REST exchanges against Discord's OpenAPI spec", () => {
  it("every response matches its operation's schema for its status", () => {
    const spec = discordSpec();
    const problems = exchanges.flatMap((e) => spec.responseProblems(e));
    expect(problems).toEqual([]);
  });

  it("every request body sent matches its operation's request schema", () => {
    const spec = discordSpec();
    const problems = exchanges.filter((e) => !deliberate(e)).flatMap((e) => spec.requestProblems(e));
    expect(problems).toEqual([]);
    // The invalid JSON the test posted is flagged: the request side is checked, not skipped.
    const invalid = exchanges.filter(deliberate);
    expect(invalid).toHaveLength(1);
    expect(spec.requestProblems(invalid[0] as RestExchange)).toContain(
      "create_message request: the body is not JSON",
    );
    // A body missing what the spec requires is flagged (the thread's name).
    const opened = exchanges.find((e) => e.status === 201 && e.path.endsWith("/threads")) as RestExchange;
    expect(spec.requestProblems({ ...opened, requestBody: {} }).join("\n")).toMatch(
      /request at \/name: must have required property 'name'/,
    );
    // So are path and query parameters.
    const listing = { method: "GET", path: "/channels/x1/messages", status: 200 };
    expect(spec.requestProblems({ ...listing, query: { limit: "500", order: "asc" } })).toEqual([
      `list_messages request path parameter channel_id="x1": does not match its schema`,
      `list_messages request query parameter limit="500": does not match its schema`,
      `list_messages request query parameter order="asc": the spec documents no such parameter`,
    ]);
    expect(
      spec.requestProblems({ ...listing, path: `/channels/${CHANNEL}/messages`, query: { limit: "50" } }),
    ).toEqual([]);
  });

  it("every route the emulator answers was exercised with success, and every error kind was seen", () => {
    const spec = discordSpec();
    const unexercised = routes
      .filter(
        (r) => !exchanges.some((e) => e.method === r.method && r.pattern.test(e.path) && e.status < 300),
      )
      .map((r) => `${r.method} ${r.path}`);
    expect(unexercised).toEqual([]);
    // Each exercised route is a documented operation.
    const undocumented = exchanges
      .filter((e) => e.status < 300 && spec.operation(e.method, e.path) === undefined)
      .map((e) => `${e.method} ${e.path}`);
    expect(undocumented).toEqual([]);
    // The runtime's flows ran to the end: its reminders and escalation were posted (and checked above).
    const posted = exchanges
      .filter((e) => e.method === "POST" && e.status === 200)
      .map((e) => (e.requestBody as { content?: string }).content ?? "");
    for (const start of ["[리마인더 1/3]", "[리마인더 2/3]", "⚠️ 응답 없음"]) {
      expect(posted.filter((content) => content.startsWith(start))).toHaveLength(1);
    }
    // Error kinds as status/code (a 429's code is optional, so only its status counts).
    const errors = exchanges
      .filter((e) => e.status >= 400)
      .map((e) =>
        e.status === 429 ? "429" : `${e.status}/${String((e.responseBody as { code?: number }).code)}`,
      );
    expect(errors).toEqual(
      expect.arrayContaining([
        ...["401/0", "403/50013", "404/10003", "404/10008", "404/10004", "404/10013", "404/0", "405/0"],
        ...["400/50035", "400/50006", "400/160004", "400/50109", "400/50024", "429", "502/0"],
        ...["400/10014", "404/10063", "403/50001"],
      ]),
    );
  });
});

/** `body` without the property at the JSON pointer `pointer` (a deep copy). */
function without(body: unknown, pointer: string): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  const tokens = pointer.split("/").slice(1);
  const last = tokens.pop() ?? "";
  let node: Record<string, unknown> = copy;
  for (const token of tokens) node = node[token] as Record<string, unknown>;
  Reflect.deleteProperty(node, last);
  return copy;
}

function recorded(operationId: string, status: number, where: (body: Record<string, unknown>) => boolean) {
  const found = exchanges.find(
    (e) =>
      e.status === status &&
      discordSpec().operation(e.method, e.path)?.operationId === operationId &&
      where(e.responseBody as Record<string, unknown>),
  );
  if (!found) throw new Error(`no recorded ${status} answer of ${operationId}`);
  return found.responseBody;
}

describe("the validator is not vacuous: removing any required field of a recorded answer is caught", () => {
  const hasMention = (b: Record<string, unknown>) => (b.mentions as unknown[]).length > 0;
  // what, operation, status, pointers that must be among the required ones, which recorded answer.
  const cases: Array<[string, string, number, string[], ((b: Record<string, unknown>) => boolean)?]> = [
    [
      "a message",
      "create_message",
      200,
      ["/id", "/author/primary_guild", "/mentions/0/username"],
      hasMention,
    ],
    ["a thread", "get_channel", 200, ["/owner_id", "/thread_metadata/archived"], (b) => b.type === 11],
    ["a text channel", "get_channel", 200, ["/position", "/guild_id"], (b) => b.type === 0],
    ["a user", "get_user", 200, ["/discriminator", "/primary_guild"]],
    ["the bot's own user", "get_my_user", 200, ["/locale", "/mfa_enabled"]],
    ["a guild", "get_guild", 200, ["/incidents_data", "/roles/0/colors/primary_color"]],
    ["a guild member", "get_guild_member", 200, ["/joined_at", "/user/id"]],
    ["an error", "get_channel", 404, ["/code", "/message"]],
    ["a rate limit", "get_gateway", 429, ["/retry_after", "/global"]],
    ["a bot's application", "get_my_oauth2_application", 200, ["/verify_key", "/bot/id", "/owner/id"]],
    ["an application command", "create_application_command", 201, ["/application_id", "/version"]],
    ["a message's reactions", "get_message", 200, ["/reactions/0/me"], (b) => "reactions" in b],
  ];

  it("a problem names the operation, the status, the JSON pointer and what is wrong", () => {
    const spec = discordSpec();
    const message = recorded("create_message", 200, hasMention);
    expect(spec.checkResponseBody("create_message", 200, without(message, "/author/discriminator"))).toEqual([
      "create_message 200 response at /author/discriminator: must have required property 'discriminator' " +
        "(schema #/required)",
    ]);
  });

  for (const [what, operationId, status, expected, where] of cases) {
    it(`${what} (${operationId} ${status})`, () => {
      const spec = discordSpec();
      const body = recorded(operationId, status, where ?? (() => true));
      expect(spec.checkResponseBody(operationId, status, body)).toEqual([]);
      const required = spec.requiredPointers(operationId, status, body);
      expect(required).toEqual(expect.arrayContaining(expected));
      const uncaught = required.filter((pointer) => {
        const name = pointer.split("/").pop() ?? "";
        const problems = spec.checkResponseBody(operationId, status, without(body, pointer));
        return !problems.some((p) => p.includes(`required property '${name}'`));
      });
      expect(uncaught).toEqual([]);
    });
  }
});

describe("emulator.exchanges()", () => {
  it("refuses to answer unless the emulator records, rather than reporting no traffic", async () => {
    const quiet = await startDiscordEmulator({ channels: [], users: [] });
    try {
      expect(() => quiet.exchanges()).toThrow(/recordExchanges: true/);
    } finally {
      await quiet.close();
    }
  });

  it("hands out copies: a caller editing them does not change the record", () => {
    const copy = emulator.exchanges();
    const post = copy.find((e) => e.method === "POST" && e.status === 200) as RestExchange;
    (post.responseBody as { content: string }).content = "edited";
    post.status = 599;
    copy.length = 0;
    expect(emulator.exchanges()).toEqual(exchanges);
  });
});
