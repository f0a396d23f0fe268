import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type A2AConfig, A2AConfigError, A2AConfigSchema, parseConfig } from "../../src/index.js";
import { resolveAgentA2ASettings } from "../../src/policies/index.js";

// The documented defaults, written out here, not taken from the code.
const DEFAULTS = {
  session: {
    agentToAgent: {
      maxPingPongTurns: 5,
      autoTerminate: true,
      retry: { enabled: true, maxAttempts: 3, baseBackoffMs: 2000, maxBackoffMs: 60000 },
      timeout: { maxWaitMs: 300000, chunkMs: 30000 },
    },
  },
  discord: {
    threadCommunication: {
      enabled: true,
      allowSiblingMentionsInThreads: true,
      allowHumanMentionsInThreads: true,
    },
    a2aRetry: {
      enabled: true,
      responseTimeoutMs: 300000,
      urgentResponseTimeoutMs: 60000,
      maxAttempts: 3,
      cleanupMaxAgeMs: 86400000,
      notifyOnFailure: true,
    },
    collaboration: {
      allowedChannels: [],
      threadReuseTTL: 21600000,
      observerHistoryLimit: 50,
      observerHistoryTTL: 86400000,
      participantTTL: 86400000,
      maxMessageLength: 2000,
      loopGuard: {
        maxCollaboratePerPair: 10,
        windowMs: 300000,
        maxMessagesPerThread: 6,
        threadWindowMs: 60000,
      },
      rateLimit: { threadCreationPerMinute: 5, messagePerChannelPerSecond: 5 },
      requestTimeoutMs: 10000,
      nonceWindowMs: 240000,
      sinkThreads: [],
    },
  },
  agents: {},
  locale: "ko",
  messages: {},
};

type Json = { [key: string]: unknown };

/** A fresh copy of the defaults, to edit into an expected value. */
function defaults(): Json {
  return structuredClone(DEFAULTS) as Json;
}

/** `{ a: { b: { c: value } } }` from `"a.b.c"`. */
function at(path: string, value: unknown): Json {
  const keys = path.split(".");
  let node: unknown = value;
  for (const key of keys.reverse()) node = { [key]: node };
  return node as Json;
}

/** Sets `path` in a nested plain object (creating objects on the way). */
function setAt(target: Json, path: string, value: unknown): void {
  const keys = path.split(".");
  const last = keys.pop() as string;
  let node = target;
  for (const key of keys) {
    const next = node[key];
    if (typeof next === "object" && next !== null) node = next as Json;
    else {
      const created: Json = {};
      node[key] = created;
      node = created;
    }
  }
  node[last] = value;
}

/** Runs parseConfig and returns the A2AConfigError it must throw (fails the test otherwise). */
function configError(input: unknown): A2AConfigError {
  let thrown: unknown;
  try {
    parseConfig(input);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(A2AConfigError);
  expect(thrown).not.toBeInstanceOf(TypeError);
  return thrown as A2AConfigError;
}

function paths(error: A2AConfigError): string[] {
  return error.problems.map((p) => p.path);
}

/** The single problem reported at `path`, with the path also named in the error's message. */
function problemAt(error: A2AConfigError, path: string): { path: string; message: string } {
  const problem = error.problems.find((p) => p.path === path);
  expect(problem, `no problem at ${path}; got ${JSON.stringify(error.problems)}`).toBeDefined();
  expect(error.message).toContain(path);
  return problem as { path: string; message: string };
}

const DURATIONS = [
  "session.agentToAgent.retry.baseBackoffMs",
  "session.agentToAgent.retry.maxBackoffMs",
  "session.agentToAgent.timeout.maxWaitMs",
  "session.agentToAgent.timeout.chunkMs",
  "discord.a2aRetry.responseTimeoutMs",
  "discord.a2aRetry.urgentResponseTimeoutMs",
  "discord.a2aRetry.cleanupMaxAgeMs",
  "discord.collaboration.threadReuseTTL",
  "discord.collaboration.observerHistoryTTL",
  "discord.collaboration.participantTTL",
  "discord.collaboration.loopGuard.windowMs",
  "discord.collaboration.loopGuard.threadWindowMs",
  "discord.collaboration.requestTimeoutMs",
  "discord.collaboration.nonceWindowMs",
];

const COUNTS = [
  "session.agentToAgent.retry.maxAttempts",
  "discord.a2aRetry.maxAttempts",
  "discord.collaboration.observerHistoryLimit",
  "discord.collaboration.maxMessageLength",
  "discord.collaboration.loopGuard.maxCollaboratePerPair",
  "discord.collaboration.loopGuard.maxMessagesPerThread",
  "discord.collaboration.rateLimit.threadCreationPerMinute",
  "discord.collaboration.rateLimit.messagePerChannelPerSecond",
];

const BOOLEANS = [
  "session.agentToAgent.autoTerminate",
  "session.agentToAgent.retry.enabled",
  "discord.threadCommunication.enabled",
  "discord.threadCommunication.allowSiblingMentionsInThreads",
  "discord.threadCommunication.allowHumanMentionsInThreads",
  "discord.a2aRetry.enabled",
  "discord.a2aRetry.notifyOnFailure",
];

const MEGA = "x".repeat(1_000_000);

describe("parseConfig: defaults", () => {
  it("fills in every documented default when called without input", () => {
    expect(parseConfig()).toEqual(DEFAULTS);
  });

  it("treats undefined and {} exactly like no input", () => {
    expect(parseConfig(undefined)).toEqual(DEFAULTS);
    expect(parseConfig({})).toEqual(DEFAULTS);
  });

  it("fills in the nested defaults when a section is present but empty", () => {
    expect(
      parseConfig({
        session: { agentToAgent: { retry: {}, timeout: {} } },
        discord: { threadCommunication: {}, a2aRetry: {}, collaboration: { loopGuard: {}, rateLimit: {} } },
        agents: {},
      }),
    ).toEqual(DEFAULTS);
  });

  it("A2AConfigSchema, the exported zod schema, gives the same defaults", () => {
    expect(A2AConfigSchema.parse({})).toEqual(DEFAULTS);
  });

  it("leaves the optional keys out of the defaults", () => {
    const config = parseConfig();
    expect(config.session.agentToAgent.agents).toBeUndefined();
    expect(config.discord.a2aRetry.escalationMentionId).toBeUndefined();
    expect(config.discord.collaboration.defaultChannel).toBeUndefined();
    expect(config.discord.collaboration.allowedGuilds).toBeUndefined();
  });

  it("hands out fresh default containers: mutating one parsed config does not change the next", () => {
    const first = parseConfig();
    first.discord.collaboration.allowedChannels.push("123456789012345678");
    first.agents.intruder = { discordBotId: "1" };
    first.session.agentToAgent.retry.maxAttempts = 9;
    const second = parseConfig();
    expect(second).toEqual(DEFAULTS);
  });

  it("does not mutate its input (a deep-frozen input parses)", () => {
    const input = {
      session: {
        agentToAgent: Object.freeze({ maxPingPongTurns: 2, retry: Object.freeze({ maxAttempts: 4 }) }),
      },
      discord: Object.freeze({
        collaboration: Object.freeze({ allowedChannels: Object.freeze(["100000000000000005"]) }),
      }),
    };
    Object.freeze(input.session);
    Object.freeze(input);
    const snapshot = JSON.stringify(input);
    const config = parseConfig(input);
    expect(JSON.stringify(input)).toBe(snapshot);
    expect(config.session.agentToAgent.maxPingPongTurns).toBe(2);
    expect(config.session.agentToAgent.retry).toEqual({
      enabled: true,
      maxAttempts: 4,
      baseBackoffMs: 2000,
      maxBackoffMs: 60000,
    });
    expect(config.discord.collaboration.allowedChannels).toEqual(["100000000000000005"]);
  });
});

describe("parseConfig: partial input keeps the other defaults", () => {
  it.each<[string, unknown]>([
    ["session.agentToAgent.maxPingPongTurns", 2],
    ["session.agentToAgent.autoTerminate", false],
    ["session.agentToAgent.retry.enabled", false],
    ["session.agentToAgent.retry.maxAttempts", 5],
    ["session.agentToAgent.retry.baseBackoffMs", 500],
    ["session.agentToAgent.timeout.maxWaitMs", 600000],
    ["session.agentToAgent.timeout.chunkMs", 10000],
    ["discord.threadCommunication.allowHumanMentionsInThreads", false],
    ["discord.a2aRetry.responseTimeoutMs", 120000],
    ["discord.a2aRetry.escalationMentionId", "111111111111111111"],
    ["discord.a2aRetry.notifyOnFailure", false],
    ["discord.collaboration.allowedChannels", ["222222222222222222", "333333333333333333"]],
    ["discord.collaboration.allowedGuilds", ["444444444444444444"]],
    ["discord.collaboration.maxMessageLength", 1500],
    ["discord.collaboration.loopGuard.maxMessagesPerThread", 3],
    ["discord.collaboration.rateLimit.threadCreationPerMinute", 2],
  ])("setting only %s to %j changes only that value", (path, value) => {
    const expected = defaults();
    setAt(expected, path, value);
    expect(parseConfig(at(path, value))).toEqual(expected);
  });

  it("keeps the defaults of the sibling sections when several values are set", () => {
    const config = parseConfig({
      session: { agentToAgent: { maxPingPongTurns: 7, timeout: { maxWaitMs: 120000 } } },
      discord: { a2aRetry: { urgentResponseTimeoutMs: 30000 } },
      agents: { seum: { discordBotId: "555555555555555555", name: "세움" } },
    });
    const expected = defaults();
    setAt(expected, "session.agentToAgent.maxPingPongTurns", 7);
    setAt(expected, "session.agentToAgent.timeout.maxWaitMs", 120000);
    setAt(expected, "discord.a2aRetry.urgentResponseTimeoutMs", 30000);
    setAt(expected, "agents.seum", { discordBotId: "555555555555555555", name: "세움" });
    expect(config).toEqual(expected);
  });

  it("keeps the agents map as given, each with its discordBotId", () => {
    const config = parseConfig({
      agents: { main: { discordBotId: "100000000000000001" }, seum: { discordBotId: "100000000000000002" } },
    });
    expect(config.agents).toEqual({
      main: { discordBotId: "100000000000000001" },
      seum: { discordBotId: "100000000000000002" },
    });
  });
});

describe("parseConfig: maxPingPongTurns is an integer 0..10", () => {
  it.each([0, 1, 5, 10])("accepts %d", (turns) => {
    expect(
      parseConfig(at("session.agentToAgent.maxPingPongTurns", turns)).session.agentToAgent.maxPingPongTurns,
    ).toBe(turns);
  });

  it.each([-1, 11, 2.5, 100, Number.NaN, Number.POSITIVE_INFINITY])(
    "rejects %d, naming session.agentToAgent.maxPingPongTurns and the range 0 to 10",
    (turns) => {
      const error = configError(at("session.agentToAgent.maxPingPongTurns", turns));
      expect(paths(error)).toEqual(["session.agentToAgent.maxPingPongTurns"]);
      const problem = problemAt(error, "session.agentToAgent.maxPingPongTurns");
      expect(problem.message).toContain("0 to 10");
      expect(error.message).toContain("0 to 10");
    },
  );

  it("accepts every integer of 0..10 and rejects every other integer (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), (turns) => {
        const input = at("session.agentToAgent.maxPingPongTurns", turns);
        if (turns >= 0 && turns <= 10) {
          expect(parseConfig(input).session.agentToAgent.maxPingPongTurns).toBe(turns);
        } else {
          expect(paths(configError(input))).toEqual(["session.agentToAgent.maxPingPongTurns"]);
        }
      }),
    );
  });

  it("rejects the number as a string", () => {
    const error = configError(at("session.agentToAgent.maxPingPongTurns", "5"));
    expect(paths(error)).toEqual(["session.agentToAgent.maxPingPongTurns"]);
  });
});

describe("parseConfig: retry.maxAttempts is 1..10", () => {
  it.each([1, 3, 10])("accepts %d", (attempts) => {
    expect(
      parseConfig(at("session.agentToAgent.retry.maxAttempts", attempts)).session.agentToAgent.retry
        .maxAttempts,
    ).toBe(attempts);
  });

  it.each([0, -1, 11, 1.5])("rejects %d naming session.agentToAgent.retry.maxAttempts", (attempts) => {
    const error = configError(at("session.agentToAgent.retry.maxAttempts", attempts));
    expect(paths(error)).toEqual(["session.agentToAgent.retry.maxAttempts"]);
    problemAt(error, "session.agentToAgent.retry.maxAttempts");
  });
});

describe("parseConfig: every duration is a positive integer of milliseconds", () => {
  const cases = DURATIONS.flatMap((path) => [0, -1, -300000, 1.5, 2000.25].map((v) => [path, v] as const));

  it.each(cases)("rejects %s = %d, naming the path", (path, value) => {
    const error = configError(at(path, value));
    expect(paths(error)).toEqual([path]);
    problemAt(error, path);
  });

  it.each(DURATIONS)("accepts 1 and a large integer for %s", (path) => {
    for (const value of [1, 7 * 86_400_000]) {
      const expected = defaults();
      setAt(expected, path, value);
      expect(parseConfig(at(path, value))).toEqual(expected);
    }
  });

  it.each(DURATIONS)("rejects a string of digits for %s", (path) => {
    expect(paths(configError(at(path, "30000")))).toEqual([path]);
  });

  it("accepts any positive integer and rejects any non-positive one (property, discord.a2aRetry.responseTimeoutMs)", () => {
    const path = "discord.a2aRetry.responseTimeoutMs";
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }), (ms) => {
        if (ms > 0) expect(parseConfig(at(path, ms)).discord.a2aRetry.responseTimeoutMs).toBe(ms);
        else expect(paths(configError(at(path, ms)))).toEqual([path]);
      }),
    );
  });
});

describe("parseConfig: every count is a positive integer", () => {
  const cases = COUNTS.flatMap((path) => [0, -1, 2.5].map((v) => [path, v] as const));

  it.each(cases)("rejects %s = %d, naming the path", (path, value) => {
    const error = configError(at(path, value));
    expect(paths(error)).toEqual([path]);
    problemAt(error, path);
  });

  it.each(COUNTS)("accepts 1 for %s", (path) => {
    const expected = defaults();
    setAt(expected, path, 1);
    expect(parseConfig(at(path, 1))).toEqual(expected);
  });
});

describe("parseConfig: booleans", () => {
  it.each(BOOLEANS)("rejects the string 'false' for %s, naming the path", (path) => {
    const error = configError(at(path, "false"));
    expect(paths(error)).toEqual([path]);
    problemAt(error, path);
  });

  it.each(BOOLEANS)("rejects 0 for %s", (path) => {
    expect(paths(configError(at(path, 0)))).toEqual([path]);
  });
});

describe("parseConfig: strict objects, unknown keys named with their full path", () => {
  it("names session.agentToAgent.bogusKey", () => {
    const error = configError({ session: { agentToAgent: { bogusKey: 1 } } });
    expect(paths(error)).toEqual(["session.agentToAgent.bogusKey"]);
    problemAt(error, "session.agentToAgent.bogusKey");
  });

  it.each([
    "bogus",
    "session.bogus",
    "session.agentToAgent.retry.bogus",
    "session.agentToAgent.timeout.bogus",
    "discord.bogus",
    "discord.threadCommunication.bogus",
    "discord.a2aRetry.bogus",
    "discord.collaboration.bogus",
    "discord.collaboration.loopGuard.bogus",
    "discord.collaboration.rateLimit.bogus",
    "agents.seum.bogus",
    "session.agentToAgent.agents.seum.bogus",
    "session.agentToAgent.agents.seum.timeout.bogus",
  ])("names %s", (path) => {
    const input = at(path, 1);
    // agents.seum needs its required discordBotId so the unknown key is the only problem
    if (path === "agents.seum.bogus") setAt(input, "agents.seum.discordBotId", "100000000000000001");
    const error = configError(input);
    expect(paths(error)).toEqual([path]);
    problemAt(error, path);
  });

  it("names a misspelt key that differs only in case (maxPingpongTurns)", () => {
    const error = configError({ session: { agentToAgent: { maxPingpongTurns: 3 } } });
    expect(paths(error)).toEqual(["session.agentToAgent.maxPingpongTurns"]);
  });

  it("reads the early per-agent shape under the top-level agents map as an override", () => {
    // An early sample config wrote agents.seum.agentToAgent; overrides belong under
    // session.agentToAgent.agents
    const config = parseConfig({
      agents: {
        seum: { discordBotId: "100000000000000001", agentToAgent: { timeout: { maxWaitMs: 600000 } } },
      },
    });
    expect(config.agents).toEqual({ seum: { discordBotId: "100000000000000001" } });
    expect(config.session.agentToAgent.agents).toEqual({ seum: { timeout: { maxWaitMs: 600000 } } });
  });

  it("rejects an own __proto__ key (as JSON.parse produces) instead of ignoring it", () => {
    const error = configError(
      JSON.parse('{"session":{"agentToAgent":{"__proto__":{"maxPingPongTurns":1}}}}'),
    );
    expect(paths(error)).toEqual(["session.agentToAgent.__proto__"]);
  });
});

describe("parseConfig: bad types", () => {
  it("rejects a non-array allowedChannels, naming the path", () => {
    for (const value of ["123456789012345678", 5, { a: "1" }, null]) {
      const error = configError(at("discord.collaboration.allowedChannels", value));
      expect(paths(error)).toEqual(["discord.collaboration.allowedChannels"]);
    }
  });

  it("rejects an empty channel id inside allowedChannels", () => {
    const error = configError(at("discord.collaboration.allowedChannels", ["123", ""]));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]?.path).toMatch(/^discord\.collaboration\.allowedChannels/);
  });

  it("rejects a non-string channel id inside allowedChannels", () => {
    const error = configError(at("discord.collaboration.allowedChannels", [123]));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]?.path).toMatch(/^discord\.collaboration\.allowedChannels/);
  });

  it("takes sink threads as Discord ids and names a bad one, saying what an id is", () => {
    const sink = "1400000000000000800";
    expect(
      parseConfig(at("discord.collaboration.sinkThreads", [` ${sink} `])).discord.collaboration.sinkThreads,
    ).toEqual([sink]);
    const error = configError(at("discord.collaboration.sinkThreads", [sink, "report-thread", "#12"]));
    expect(error.problems).toEqual([
      {
        path: "discord.collaboration.sinkThreads.1",
        message: 'must be a Discord id (a snowflake: 1 to 20 digits), got "report-thread"',
      },
      {
        path: "discord.collaboration.sinkThreads.2",
        message: 'must be a Discord id (a snowflake: 1 to 20 digits), got "#12"',
      },
    ]);
  });

  it("rejects an empty discordBotId, naming agents.<id>.discordBotId", () => {
    const error = configError({ agents: { seum: { discordBotId: "" } } });
    expect(paths(error)).toEqual(["agents.seum.discordBotId"]);
    problemAt(error, "agents.seum.discordBotId");
  });

  it("rejects an agent without discordBotId", () => {
    const error = configError({ agents: { seum: { name: "세움" } } });
    expect(paths(error)).toEqual(["agents.seum.discordBotId"]);
  });

  it("rejects a numeric discordBotId (snowflakes are strings)", () => {
    const error = configError({ agents: { seum: { discordBotId: 123456789 } } });
    expect(paths(error)).toEqual(["agents.seum.discordBotId"]);
  });

  it.each([
    ["session", null],
    ["session", "x"],
    ["session.agentToAgent", 5],
    ["session.agentToAgent.retry", true],
    ["discord", []],
    ["discord.collaboration.loopGuard", "strict"],
    ["agents", []],
    ["agents", "seum"],
    ["agents.seum", "100000000000000001"],
    ["session.agentToAgent.agents", 3],
    ["session.agentToAgent.agents.seum.timeout", 600000],
  ] as const)("rejects a non-object at %s (%j), naming it", (path, value) => {
    const error = configError(at(path, value));
    expect(paths(error)).toEqual([path]);
    problemAt(error, path);
  });

  it("rejects an empty escalationMentionId", () => {
    expect(paths(configError(at("discord.a2aRetry.escalationMentionId", "")))).toEqual([
      "discord.a2aRetry.escalationMentionId",
    ]);
  });
});

describe("parseConfig: non-object input", () => {
  it.each<[string, unknown]>([
    ["null", null],
    ["a number", 5],
    ["a string", "x"],
    ["an empty string", ""],
    ["an array", []],
    ["an array of objects", [{ session: {} }]],
    ["true", true],
    ["a bigint", 5n],
    ["a symbol", Symbol("config")],
    ["a function", () => ({})],
    ["a 1 MB string", MEGA],
  ])("rejects %s with an A2AConfigError about the whole config", (_label, input) => {
    const error = configError(input);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]?.message).toMatch(/object/);
    expect(error.message).toMatch(/object/);
  });

  it("keeps the error short when the input is a 1 MB string", () => {
    expect(configError(MEGA).message.length).toBeLessThan(10_000);
  });
});

describe("parseConfig: several problems are reported together", () => {
  it("reports every problem in one error", () => {
    const error = configError({
      session: { agentToAgent: { maxPingPongTurns: 11, bogusKey: true, retry: { maxAttempts: 0 } } },
      discord: {
        a2aRetry: { responseTimeoutMs: 0 },
        collaboration: { allowedChannels: "c1", loopGuard: { windowMs: -5 } },
      },
      agents: { seum: { discordBotId: "" } },
    });
    expect(new Set(paths(error))).toEqual(
      new Set([
        "session.agentToAgent.maxPingPongTurns",
        "session.agentToAgent.bogusKey",
        "session.agentToAgent.retry.maxAttempts",
        "discord.a2aRetry.responseTimeoutMs",
        "discord.collaboration.allowedChannels",
        "discord.collaboration.loopGuard.windowMs",
        "agents.seum.discordBotId",
      ]),
    );
    for (const path of paths(error)) expect(error.message).toContain(path);
    for (const problem of error.problems) expect(problem.message.length).toBeGreaterThan(0);
  });

  it("reports each unknown key of one object separately", () => {
    const error = configError({ discord: { a2aRetry: { foo: 1, bar: 2 } } });
    expect(new Set(paths(error))).toEqual(new Set(["discord.a2aRetry.foo", "discord.a2aRetry.bar"]));
  });

  it("is an Error named A2AConfigError", () => {
    const error = configError({ session: { agentToAgent: { maxPingPongTurns: -1 } } });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("A2AConfigError");
  });
});

describe("parseConfig: junk values where a value is expected", () => {
  it("treats an explicit undefined value as absent (the default applies)", () => {
    expect(parseConfig(at("session.agentToAgent.maxPingPongTurns", undefined))).toEqual(DEFAULTS);
    expect(parseConfig({ session: undefined, discord: undefined, agents: undefined })).toEqual(DEFAULTS);
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["an empty string", ""],
    ["a 1 MB string", MEGA],
    ["a symbol", Symbol("turns")],
    ["a bigint", 5n],
    ["a function", () => 5],
    ["an object", { value: 5 }],
    ["an array", [5]],
    ["an object without prototype", Object.create(null)],
  ])("rejects %s as maxPingPongTurns with a typed error naming the path", (_label, value) => {
    const error = configError(at("session.agentToAgent.maxPingPongTurns", value));
    expect(paths(error)).toEqual(["session.agentToAgent.maxPingPongTurns"]);
    expect(error.message).toContain("0 to 10");
  });

  it("keeps the error short when a number field gets a 1 MB string", () => {
    const error = configError(at("session.agentToAgent.timeout.maxWaitMs", MEGA));
    expect(error.message.length).toBeLessThan(10_000);
  });

  it("accepts a 1 MB name, unchanged, and refuses 1 MB Discord ids with a short error", () => {
    const config = parseConfig({ agents: { seum: { discordBotId: "100000000000000001", name: MEGA } } });
    expect(config.agents.seum?.name).toHaveLength(1_000_000);
    const error = configError({
      agents: { seum: { discordBotId: MEGA } },
      discord: { a2aRetry: { escalationMentionId: MEGA }, collaboration: { defaultChannel: MEGA } },
    });
    expect(paths(error)).toEqual([
      "discord.a2aRetry.escalationMentionId",
      "discord.collaboration.defaultChannel",
      "agents.seum.discordBotId",
    ]);
    expect(error.message.length).toBeLessThan(10_000);
  });

  it("answers a 1 MB unknown key with a typed error naming where it is", () => {
    const error = configError({ session: { agentToAgent: { [MEGA]: 1 } } });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]?.path.startsWith("session.agentToAgent.xxx")).toBe(true);
  });

  it("answers an empty agent id key with a typed error under agents", () => {
    const error = configError({ agents: { "": { discordBotId: "100000000000000001" } } });
    expect(error.problems.length).toBeGreaterThan(0);
    for (const path of paths(error)) expect(path.startsWith("agents")).toBe(true);
  });

  it("never throws anything but an A2AConfigError for arbitrary JSON-like input (property)", () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withNullPrototype: true, withMap: true, withSet: true }),
        (input) => {
          try {
            parseConfig(input);
          } catch (error) {
            expect(error).toBeInstanceOf(A2AConfigError);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never throws anything but an A2AConfigError for junk at a known path (property)", () => {
    const knownPaths = [...DURATIONS, ...COUNTS, ...BOOLEANS, "session.agentToAgent.maxPingPongTurns"];
    fc.assert(
      fc.property(fc.constantFrom(...knownPaths), fc.anything({ withBigInt: true }), (path, value) => {
        try {
          parseConfig(at(path, value));
        } catch (error) {
          expect(error).toBeInstanceOf(A2AConfigError);
          expect(paths(error as A2AConfigError).every((p) => p.startsWith(path))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("resolveAgentA2ASettings: per-agent overrides", () => {
  const config: A2AConfig = parseConfig({
    session: {
      agentToAgent: {
        maxPingPongTurns: 4,
        timeout: { maxWaitMs: 200000, chunkMs: 20000 },
        agents: {
          seum: { maxPingPongTurns: 3, timeout: { maxWaitMs: 600000 } },
          ruda: { maxPingPongTurns: 7 },
          quiet: { maxPingPongTurns: 0 },
          slow: { timeout: { chunkMs: 45000 } },
          plain: {},
        },
      },
    },
  });

  it("keeps the overrides in the parsed config", () => {
    expect(config.session.agentToAgent.agents?.seum).toEqual({
      maxPingPongTurns: 3,
      timeout: { maxWaitMs: 600000 },
    });
  });

  it("applies both a turn and a wait override", () => {
    expect(resolveAgentA2ASettings(config, "seum")).toEqual({
      maxPingPongTurns: 3,
      maxWaitMs: 600000,
      chunkMs: 20000,
    });
  });

  it("applies a turn-only override and keeps the global timeouts", () => {
    expect(resolveAgentA2ASettings(config, "ruda")).toEqual({
      maxPingPongTurns: 7,
      maxWaitMs: 200000,
      chunkMs: 20000,
    });
  });

  it("honours an override of 0 turns (not replaced by the global value)", () => {
    expect(resolveAgentA2ASettings(config, "quiet").maxPingPongTurns).toBe(0);
  });

  it("applies a chunk-only override", () => {
    expect(resolveAgentA2ASettings(config, "slow")).toEqual({
      maxPingPongTurns: 4,
      maxWaitMs: 200000,
      chunkMs: 45000,
    });
  });

  it("uses the global values for an agent with an empty override", () => {
    expect(resolveAgentA2ASettings(config, "plain")).toEqual({
      maxPingPongTurns: 4,
      maxWaitMs: 200000,
      chunkMs: 20000,
    });
  });

  it.each<[string, string | undefined]>([
    ["an agent without overrides", "main"],
    ["no agent", undefined],
    ["an empty agent id", ""],
    ["a 1 MB agent id", MEGA],
    ["__proto__", "__proto__"],
    ["constructor", "constructor"],
    ["toString", "toString"],
    ["hasOwnProperty", "hasOwnProperty"],
  ])("uses the global values for %s", (_label, agentId) => {
    expect(resolveAgentA2ASettings(config, agentId)).toEqual({
      maxPingPongTurns: 4,
      maxWaitMs: 200000,
      chunkMs: 20000,
    });
  });

  it("uses the documented defaults when nothing is configured", () => {
    expect(resolveAgentA2ASettings(parseConfig(), "seum")).toEqual({
      maxPingPongTurns: 5,
      maxWaitMs: 300000,
      chunkMs: 30000,
    });
  });

  it.each([
    ["session.agentToAgent.agents.seum.maxPingPongTurns", 11],
    ["session.agentToAgent.agents.seum.maxPingPongTurns", -1],
    ["session.agentToAgent.agents.seum.maxPingPongTurns", 2.5],
    ["session.agentToAgent.agents.seum.timeout.maxWaitMs", 0],
    ["session.agentToAgent.agents.seum.timeout.maxWaitMs", -1],
    ["session.agentToAgent.agents.seum.timeout.chunkMs", 1.5],
  ] as const)("validates overrides like the global values: %s = %d", (path, value) => {
    const error = configError(at(path, value));
    expect(paths(error)).toEqual([path]);
    problemAt(error, path);
  });

  it("accepts override turn bounds 0 and 10", () => {
    for (const turns of [0, 10]) {
      const parsed = parseConfig(at("session.agentToAgent.agents.seum.maxPingPongTurns", turns));
      expect(resolveAgentA2ASettings(parsed, "seum").maxPingPongTurns).toBe(turns);
    }
  });

  it("names the range 0 to 10 for a bad override of turns", () => {
    const error = configError(at("session.agentToAgent.agents.seum.maxPingPongTurns", 11));
    expect(error.message).toContain("0 to 10");
  });
});

describe("parseConfig: errors stay readable", () => {
  function problemsOf(input: unknown) {
    try {
      parseConfig(input);
    } catch (error) {
      expect(error).toBeInstanceOf(A2AConfigError);
      return { message: (error as A2AConfigError).message, problems: (error as A2AConfigError).problems };
    }
    throw new Error("parseConfig accepted the input");
  }

  it.each([new Date(0), new Map(), new Set(), /re/])(
    "rejects a non-plain object at the root (%s)",
    (input) => {
      const { problems } = problemsOf(input);
      expect(problems).toEqual([
        { path: "(config)", message: expect.stringContaining("must be a plain object") },
      ]);
    },
  );

  it("names an empty agent id as the problem, at the agents map", () => {
    const { problems } = problemsOf({ agents: { "": { discordBotId: "1" } } });
    expect(problems).toEqual([{ path: "agents", message: 'has a key "": keys must be non-empty ids' }]);
  });

  it("cuts a megabyte-long unknown key in the message", () => {
    const { message, problems } = problemsOf({ ["k".repeat(1_000_000)]: 1 });
    expect(message.length).toBeLessThan(300);
    expect(problems[0]?.message).toBe(
      "unknown key (allowed here: locale, session, discord, agents, messages)",
    );
  });
});
