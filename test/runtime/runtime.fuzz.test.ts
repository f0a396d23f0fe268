// Fuzzing the runtime's public methods (issue 10): arbitrary values, and valid inputs with one field
// replaced by junk, never crash the process, never post where the allowlists forbid, never post as or
// mention an unknown agent, and lose nothing stored. One runtime serves every case of a method: most
// inputs are refused before any write, so the disk stays out of the hot loop.
import { rmSync } from "node:fs";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type A2ARuntime, createA2ARuntime, type InboundDiscordMessage } from "../../src/index.js";
import { DISCORD_ID_PATTERN } from "../../src/policies/index.js";
import { BOTS, CHANNEL, FakeDiscord, HUMAN, runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { callLoosely } from "../support/badInput.js";
import { textLogger } from "../../src/runtime/logger.js";

/** A method's whole run, generous for a loaded CI machine (about 10 s each on 2 cores). */
const FUZZ_TIMEOUT_MS = 60_000;
/** Cases per method: at least 10 000 in CI, fewer locally. */
const RUNS = process.env.CI === "true" ? 10_000 : Number(process.env.FUZZ_RUNS ?? 1_000);
const OTHER_CHANNEL = "1400000000000000501";
const FOREIGN_THREAD = "1400000000000000601";
const ALLOWED_THREAD = "1400000000000000602";
const GUILD = "1400000000000000700";
const AGENT_IDS = new Set(Object.keys(runtimeConfig.agents));
const MAY_BE_MENTIONED = new Set([...Object.values(BOTS), HUMAN]);
const SESSION_KEY = new RegExp(`^agent:([^:]+):discord:channel:${DISCORD_ID_PATTERN.source.slice(1, -1)}$`);

const config = {
  ...runtimeConfig,
  discord: {
    ...runtimeConfig.discord,
    collaboration: {
      ...runtimeConfig.discord.collaboration,
      allowedGuilds: [GUILD],
      // Queued sends would wait on real minutes: the limits are not what is fuzzed here.
      rateLimit: { threadCreationPerMinute: 100_000, messagePerChannelPerSecond: 100_000 },
    },
  },
};

/** Values that broke or could break a field: prototype keys, non-snowflakes, huge numbers, NaN. */
const junk = fc.oneof(
  fc.anything({ withBigInt: true, withNullPrototype: true, withObjectString: true, withSparseArray: true }),
  fc.constantFrom<unknown>(
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "../../../../home/x",
    "",
    " ",
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -1,
    3e6,
    2 ** 31,
    Number.MAX_SAFE_INTEGER,
    1e308,
    OTHER_CHANNEL,
    FOREIGN_THREAD,
    ALLOWED_THREAD,
    CHANNEL,
    GUILD,
    HUMAN,
    BOTS.eden,
    "12345678901234567890123",
  ),
  fc.string(),
  fc.double(),
  fc.stringMatching(/^\d{1,22}$/),
);

/** A valid input with one field (existing or not) set to junk, as an own property even for "__proto__". */
function mutated<T extends object>(valid: fc.Arbitrary<T>, keys: readonly string[]): fc.Arbitrary<unknown> {
  return fc
    .tuple(valid, fc.constantFrom(...keys, "__proto__", "constructor"), junk)
    .map(([input, key, value]) => {
      const copy: Record<string, unknown> = { ...(input as Record<string, unknown>) };
      Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
      return copy;
    });
}

const agentId = fc.constantFrom("ruda", "eden", "seum");
const channelOrThread = fc.constantFrom(
  CHANNEL,
  OTHER_CHANNEL,
  FOREIGN_THREAD,
  ALLOWED_THREAD,
  "1400000000000000999",
);

const validDiscordSend = fc.record(
  {
    fromAgentId: agentId,
    targetAgentId: agentId,
    message: fc.string({ maxLength: 40 }),
    threadId: channelOrThread,
    channelId: channelOrThread,
    threadName: fc.string({ maxLength: 20 }),
    topicId: fc.string({ maxLength: 10 }),
    urgent: fc.boolean(),
    idempotencyKey: fc.string({ maxLength: 4 }),
  },
  { requiredKeys: ["fromAgentId", "targetAgentId", "message"] },
);

const DISCORD_SEND_KEYS = [
  "fromAgentId",
  "targetAgentId",
  "message",
  "threadId",
  "channelId",
  "threadName",
  "topicId",
  "urgent",
  "idempotencyKey",
];

const validSessionsSend = fc.record(
  {
    requesterSessionKey: fc.constantFrom("agent:ruda:main", "agent:eden:main"),
    targetSessionKey: fc.constantFrom("agent:eden:main", "agent:seum:main"),
    message: fc.string({ minLength: 1, maxLength: 40 }).filter((m) => m.trim() !== ""),
    routeKey: fc.string({ maxLength: 10 }),
    skipPingPong: fc.constant(true),
    announceTarget: fc.constant(null),
  },
  { requiredKeys: ["targetSessionKey", "message"] },
);

const PARENTS: Record<string, string> = { [FOREIGN_THREAD]: OTHER_CHANNEL, [ALLOWED_THREAD]: CHANNEL };

/** Where a message is, as the bridge reports it: a thread's id and, sometimes, its true parent. */
const place = fc
  .tuple(channelOrThread, fc.boolean(), fc.boolean())
  .map(([id, saysThread, saysParent]): Partial<InboundDiscordMessage> => {
    const parent = PARENTS[id];
    if (parent === undefined || !saysThread) return { channelId: id };
    return { channelId: id, threadId: id, ...(saysParent ? { parentChannelId: parent } : {}) };
  });

const validInbound: fc.Arbitrary<InboundDiscordMessage> = fc
  .tuple(
    place,
    fc.record(
      {
        messageId: fc.bigInt(10n ** 16n, 10n ** 19n).map(String),
        guildId: fc.constantFrom(GUILD, "1400000000000000701"),
        authorId: fc.constantFrom(HUMAN, BOTS.ruda, BOTS.eden, "1400000000000000909"),
        authorIsBot: fc.boolean(),
        content: fc.string({ maxLength: 40 }),
        mentionUserIds: fc.array(fc.constantFrom(BOTS.ruda, BOTS.eden, BOTS.seum, HUMAN), { maxLength: 3 }),
        ts: fc.integer({ min: 0, max: 2 ** 45 }),
      },
      { requiredKeys: ["messageId", "authorId", "authorIsBot", "content", "mentionUserIds", "ts"] },
    ),
  )
  .map(([where, rest]) => ({ ...rest, channelId: CHANNEL, ...where }));
const INBOUND_KEYS = [
  "messageId",
  "channelId",
  "threadId",
  "parentChannelId",
  "guildId",
  "authorId",
  "authorIsBot",
  "content",
  "mentionUserIds",
  "ts",
];

let dir: string;
let discord: FakeDiscord;
let runtime: A2ARuntime;
let storedMentions: string[];
const crashes: unknown[] = [];
const onCrash = (error: unknown) => crashes.push(error);

function start(): Promise<void> {
  runtime = createA2ARuntime({
    stateDir: dir,
    config,
    discord,
    gateway: new ScriptedGateway(),
    logger: textLogger(() => {}),
  });
  return runtime.start();
}

beforeAll(async () => {
  process.on("uncaughtException", onCrash);
  process.on("unhandledRejection", onCrash);
  dir = tempStateDir("a2a-fuzz-");
  discord = new FakeDiscord();
  discord.channels.set(OTHER_CHANNEL, { channelId: OTHER_CHANNEL, guildId: GUILD, isThread: false });
  discord.channels.set(FOREIGN_THREAD, {
    channelId: FOREIGN_THREAD,
    guildId: GUILD,
    parentChannelId: OTHER_CHANNEL,
    isThread: true,
  });
  discord.channels.set(ALLOWED_THREAD, {
    channelId: ALLOWED_THREAD,
    guildId: GUILD,
    parentChannelId: CHANNEL,
    isThread: true,
  });
  await start();
  storedMentions = [];
  for (const target of ["eden", "seum"]) {
    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: target,
      message: "기존 요청",
    });
    if (sent.status !== "sent") throw new Error(`setup: ${JSON.stringify(sent)}`);
    storedMentions.push(sent.mentionId);
  }
});

afterAll(async () => {
  await runtime.stop();
  process.off("uncaughtException", onCrash);
  process.off("unhandledRejection", onCrash);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Threads (or channels) an inbound message said were in the allowed channel. The bridge's word on a
 * parent is Discord's (discord.js `channel.parentId`), so the runtime trusts and remembers it; a
 * mutated message may lie, also without a threadId (its channelId is then the place it names), and
 * the runtime then rightly treats that place as allowed.
 */
const claimedAllowed = new Set<string>();

/** A thread or channel the allowlist admits: the allowed channel, or a thread opened (or said to be) in it. */
function allowed(channelId: string): boolean {
  if (channelId === CHANNEL || claimedAllowed.has(channelId)) return true;
  const parent =
    discord.threads.find((t) => t.threadId === channelId)?.channelId ??
    discord.channels.get(channelId)?.parentChannelId;
  return parent === CHANNEL;
}

function expectDiscordKeptTheRules(): void {
  expect(crashes).toEqual([]);
  for (const m of discord.messages) {
    expect(allowed(m.channelId), `a post in ${m.channelId}`).toBe(true);
    expect(AGENT_IDS.has(m.asAgentId), `a post as ${m.asAgentId}`).toBe(true);
    for (const id of m.mentionUserIds) expect(MAY_BE_MENTIONED.has(id), `a mention of ${id}`).toBe(true);
  }
  for (const t of discord.threads) {
    expect(t.channelId).toBe(CHANNEL);
    expect(AGENT_IDS.has(t.asAgentId)).toBe(true);
  }
}

async function expectStoredMentionsKept(): Promise<void> {
  const ids = new Set((await runtime.mentions()).map((m) => m.id));
  for (const id of storedMentions) expect(ids.has(id), `mention ${id}`).toBe(true);
}

describe(`runtime fuzzing (${RUNS} cases per method)`, () => {
  it(
    "discordSend: a defined answer every time, no forbidden or foreign post",
    async () => {
      const input = fc.oneof(
        { arbitrary: fc.anything(), weight: 1 },
        { arbitrary: mutated(validDiscordSend, DISCORD_SEND_KEYS), weight: 3 },
        { arbitrary: validDiscordSend, weight: 1 },
      );
      await fc.assert(
        fc.asyncProperty(input, async (p) => {
          const result = await callLoosely(runtime.discordSend, p);
          expect(["sent", "rejected"]).toContain(result.status);
          if (result.status === "sent") expect(allowed(result.threadId)).toBe(true);
        }),
        { numRuns: RUNS },
      );
      expectDiscordKeptTheRules();
      await expectStoredMentionsKept();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "sessionsSend: answers or rejects with an error naming the field, never crashes",
    async () => {
      const keys = [
        "requesterSessionKey",
        "targetSessionKey",
        "message",
        "routeKey",
        "skipPingPong",
        "announceTarget",
        "timeoutSeconds",
      ];
      const input = fc.oneof(
        { arbitrary: fc.anything(), weight: 1 },
        { arbitrary: mutated(validSessionsSend, keys), weight: 3 },
      );
      await fc.assert(
        fc.asyncProperty(input, async (p) => {
          // A flow may outlive the call (timeoutSeconds > 0 waits for its end): the answer is not awaited
          // past this case, only required to settle without an unhandled rejection.
          const settled = callLoosely(runtime.sessionsSend, p).then(
            (result) => expect(["accepted", "ok", "blocked", "timeout"]).toContain(result.status),
            (error: unknown) => expect(error).toBeInstanceOf(Error),
          );
          await Promise.race([settled, new Promise((resolve) => setImmediate(resolve))]);
        }),
        { numRuns: RUNS },
      );
      expectDiscordKeptTheRules();
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    "handleDiscordMessage: a decision every time; handled only for configured agents in allowed places",
    async () => {
      const input = fc.oneof(
        { arbitrary: fc.anything(), weight: 1 },
        { arbitrary: mutated(validInbound, INBOUND_KEYS), weight: 3 },
        { arbitrary: validInbound, weight: 2 },
      );
      await fc.assert(
        fc.asyncProperty(input, async (m) => {
          const message = m as Partial<InboundDiscordMessage> | null;
          if (message?.parentChannelId === CHANNEL) {
            const place = message.threadId ?? message.channelId;
            if (typeof place === "string") claimedAllowed.add(place);
          }
          const decision = await callLoosely(runtime.handleDiscordMessage, m);
          expect(["handle", "observe", "drop"]).toContain(decision.action);
          if (decision.action !== "handle") return;
          const [, agent] = SESSION_KEY.exec(decision.sessionKey) ?? [];
          expect(agent !== undefined && AGENT_IDS.has(agent), decision.sessionKey).toBe(true);
          expect(decision.agentId).toBe(agent);
          const where = decision.sessionKey.slice(decision.sessionKey.lastIndexOf(":") + 1);
          expect(allowed(where), `handled in ${where}`).toBe(true);
          expect(message?.guildId).toBe(GUILD);
        }),
        { numRuns: RUNS },
      );
      expectDiscordKeptTheRules();
    },
    FUZZ_TIMEOUT_MS,
  );

  it("loses nothing stored: the mentions made before the fuzzing are listed, also after a restart", async () => {
    await expectStoredMentionsKept();
    await runtime.stop();
    await start();
    await expectStoredMentionsKept();
    expectDiscordKeptTheRules();
  });
});
