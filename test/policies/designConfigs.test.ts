import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { A2AConfigError, createA2ARuntime, parseConfig } from "../../src/index.js";
import { LEGACY_CONFIG_KEYS, resolveAgentA2ASettings } from "../../src/policies/index.js";
import { design000Section8_1, design000Section8_2 } from "../fixtures/design-configs/design000.js";
import {
  design001Section5_2,
  design001Section6_1,
  design001Section6_2,
} from "../fixtures/design-configs/design001.js";
import { design002Appendix } from "../fixtures/design-configs/design002.js";
import { design004Section10 } from "../fixtures/design-configs/design004.js";
import { textLogger } from "../../src/runtime/logger.js";

/** parseConfig with its warnings collected. */
function load(input: unknown): { config: ReturnType<typeof parseConfig>; warnings: string[] } {
  const warnings: string[] = [];
  const config = parseConfig(input, { onWarning: (message) => warnings.push(message) });
  return { config, warnings };
}

function problems(input: unknown): Array<{ path: string; message: string }> {
  try {
    parseConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(A2AConfigError);
    return (error as A2AConfigError).problems;
  }
  throw new Error("parseConfig accepted the config");
}

describe("the early sample configurations load", () => {
  it("retry and timeout under session.agentToAgent, without warnings", () => {
    const { config, warnings } = load(design000Section8_1);
    expect(warnings).toEqual([]);
    expect(config.session.agentToAgent.retry).toEqual({
      enabled: true,
      maxAttempts: 3,
      baseBackoffMs: 2000,
      maxBackoffMs: 60000,
    });
    expect(config.session.agentToAgent.timeout).toEqual({ maxWaitMs: 300000, chunkMs: 30000 });
  });

  it("agents.seum.agentToAgent becomes seum's override, with a warning", () => {
    const { config, warnings } = load(design000Section8_2);
    expect(config.session.agentToAgent.agents).toEqual({ seum: { timeout: { maxWaitMs: 600000 } } });
    // The entry held only the override: it registers no agent (which would need a discordBotId).
    expect(config.agents).toEqual({});
    expect(resolveAgentA2ASettings(config, "seum").maxWaitMs).toBe(600000);
    expect(warnings).toEqual([
      "config key agents.seum.agentToAgent is read as " +
        "session.agentToAgent.agents.seum (agents.seum had nothing else, so it adds no agent)",
    ]);
  });

  it("the ping-pong keys, alone and with retry and timeout, without warnings", () => {
    expect(load(design001Section5_2).warnings).toEqual([]);
    expect(load(design001Section5_2).config.session.agentToAgent.maxPingPongTurns).toBe(10);
    const { config, warnings } = load(design001Section6_1);
    expect(warnings).toEqual([]);
    expect(config.session.agentToAgent.autoTerminate).toBe(true);
    expect(config.session.agentToAgent.maxPingPongTurns).toBe(5);
  });

  it("each agent's agents.<id>.agentToAgent.maxPingPongTurns becomes its override", () => {
    const { config, warnings } = load(design001Section6_2);
    expect(config.session.agentToAgent.agents).toEqual({
      seum: { maxPingPongTurns: 3 },
      ruda: { maxPingPongTurns: 7 },
    });
    expect(resolveAgentA2ASettings(config, "ruda").maxPingPongTurns).toBe(7);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(
      /^config key agents\.ruda\.agentToAgent is read as session\.agentToAgent\.agents\.ruda/,
    );
  });

  it("the collaboration section as given, without warnings", () => {
    const { config, warnings } = load(design002Appendix);
    expect(warnings).toEqual([]);
    expect(config.discord.collaboration).toMatchObject({
      defaultChannel: "1234567890",
      allowedChannels: ["1234567890", "0987654321"],
      threadReuseTTL: 21_600_000,
      observerHistoryTTL: 86_400_000,
      participantTTL: 86_400_000,
      loopGuard: { maxCollaboratePerPair: 10, windowMs: 300_000, maxMessagesPerThread: 6 },
      rateLimit: { threadCreationPerMinute: 5, messagePerChannelPerSecond: 5 },
    });
  });

  it("the a2aRetry section: checkIntervalMs is ignored with a warning saying why", () => {
    const { config, warnings } = load(design004Section10);
    expect(config.discord.a2aRetry).toEqual({
      enabled: true,
      responseTimeoutMs: 300000,
      urgentResponseTimeoutMs: 60000,
      maxAttempts: 3,
      cleanupMaxAgeMs: 86400000,
      escalationMentionId: "974537452750528553",
      notifyOnFailure: true,
    });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^config key discord\.a2aRetry\.checkIntervalMs is ignored: nothing polls: .*durable timer/,
      ),
    ]);
  });

  it("every sample together loads, and the input objects are left as they were", () => {
    const merged = {
      ...design000Section8_1,
      ...design000Section8_2,
      ...design002Appendix,
      discord: { ...design002Appendix.discord, ...design004Section10.discord },
    };
    const before = JSON.stringify(merged);
    const { warnings } = load(merged);
    expect(warnings).toHaveLength(2);
    expect(JSON.stringify(merged)).toBe(before);
  });

  it("loads silently without an onWarning", () => {
    expect(() => parseConfig(design004Section10)).not.toThrow();
  });
});

describe("keys of the samples: what is still refused", () => {
  it("session.agentToAgent.suggestedTurnsOverride is ignored with a reason", () => {
    const { config, warnings } = load({ session: { agentToAgent: { suggestedTurnsOverride: 2 } } });
    expect(config).toEqual(parseConfig());
    expect(warnings).toEqual([expect.stringMatching(/suggestedTurnsOverride is ignored: /)]);
  });

  it("a key in no sample still throws, next to an ignored one", () => {
    expect(problems({ discord: { a2aRetry: { checkIntervalMs: 1, pollEveryMs: 1 } } })).toEqual([
      expect.objectContaining({
        path: "discord.a2aRetry.pollEveryMs",
        message: expect.stringMatching(/unknown key/),
      }),
    ]);
  });

  it("names the path the user wrote when a moved override is invalid", () => {
    const found = problems({ agents: { seum: { agentToAgent: { timeout: { maxWaitMs: -1 }, bogus: 1 } } } });
    expect(found.map((p) => p.path).sort()).toEqual([
      "agents.seum.agentToAgent.bogus",
      "agents.seum.agentToAgent.timeout.maxWaitMs",
    ]);
  });

  it("refuses an override given both under agents.<id>.agentToAgent and in ours", () => {
    const found = problems({
      agents: { seum: { discordBotId: "100000000000000001", agentToAgent: { maxPingPongTurns: 3 } } },
      session: { agentToAgent: { agents: { seum: { maxPingPongTurns: 2 } } } },
    });
    expect(found).toEqual([
      {
        path: "agents.seum.agentToAgent",
        message: "says what session.agentToAgent.agents.seum says too: keep one of them",
      },
    ]);
  });

  it("keeps an agent that has a bot as well as an agents.<id>.agentToAgent override", () => {
    const { config } = load({
      agents: { seum: { discordBotId: "100000000000000001", agentToAgent: { maxPingPongTurns: 3 } } },
    });
    expect(config.agents).toEqual({ seum: { discordBotId: "100000000000000001" } });
    expect(config.session.agentToAgent.agents).toEqual({ seum: { maxPingPongTurns: 3 } });
  });

  it("lists every key it moves or ignores, with a reason (docs/config.md shows them)", () => {
    expect(LEGACY_CONFIG_KEYS.map((k) => k.path)).toEqual([
      "agents.<id>.agentToAgent",
      "discord.a2aRetry.checkIntervalMs",
      "session.agentToAgent.suggestedTurnsOverride",
    ]);
    for (const key of LEGACY_CONFIG_KEYS) {
      expect(key.reason.length).toBeGreaterThan(40);
    }
  });
});

describe("configuration that cannot work is refused, naming its path", () => {
  it.each([
    ["agents.seum.discordBotId", { agents: { seum: { discordBotId: "seum-bot" } } }],
    ["agents.seum.discordBotId", { agents: { seum: { discordBotId: "<@100000000000000001>" } } }],
    ["agents.seum.discordBotId", { agents: { seum: { discordBotId: "1".repeat(21) } } }],
    [
      "discord.collaboration.allowedChannels.1",
      { discord: { collaboration: { allowedChannels: ["1", "#general"] } } },
    ],
    [
      "discord.collaboration.allowedGuilds.0",
      { discord: { collaboration: { allowedGuilds: ["my guild"] } } },
    ],
    ["discord.a2aRetry.escalationMentionId", { discord: { a2aRetry: { escalationMentionId: "@병욱" } } }],
  ])("%s: not a Discord id", (path, input) => {
    expect(problems(input)).toEqual([
      {
        path,
        message: expect.stringMatching(/^must be a Discord id \(a snowflake: 1 to 20 digits\), got "/),
      },
    ]);
  });

  it("discord.collaboration.defaultChannel: not a Discord id", () => {
    // Not one of allowedChannels either, but the format is what is reported first.
    expect(
      problems({ discord: { collaboration: { defaultChannel: "general", allowedChannels: ["1"] } } }),
    ).toEqual([
      {
        path: "discord.collaboration.defaultChannel",
        message: expect.stringMatching(/^must be a Discord id/),
      },
    ]);
  });

  it("accepts ids with surrounding spaces, trimmed", () => {
    expect(
      parseConfig({ agents: { a: { discordBotId: " 100000000000000001 " } } }).agents.a?.discordBotId,
    ).toBe("100000000000000001");
  });

  it("a defaultChannel outside allowedChannels (collaborations there would all be refused)", () => {
    for (const allowedChannels of [[], ["100000000000000002"]]) {
      expect(
        problems({ discord: { collaboration: { defaultChannel: "100000000000000001", allowedChannels } } }),
      ).toEqual([
        {
          path: "discord.collaboration.defaultChannel",
          message: expect.stringMatching(
            /^is "100000000000000001", which is not in discord\.collaboration\.allowedChannels/,
          ),
        },
      ]);
    }
  });

  it("two agents with one discordBotId, naming the second", () => {
    expect(
      problems({
        agents: {
          ruda: { discordBotId: "100000000000000001" },
          eden: { discordBotId: "100000000000000002" },
          seum: { discordBotId: "100000000000000001" },
        },
      }),
    ).toEqual([
      {
        path: "agents.seum.discordBotId",
        message: expect.stringMatching(/^is also agents\.ruda\.discordBotId: /),
      },
    ]);
  });

  it("reports a contradiction together with the other problems", () => {
    const found = problems({
      session: { agentToAgent: { maxPingPongTurns: 11 } },
      discord: { collaboration: { defaultChannel: "100000000000000001" } },
    });
    expect(found.map((p) => p.path)).toEqual([
      "session.agentToAgent.maxPingPongTurns",
      "discord.collaboration.defaultChannel",
    ]);
  });
});

describe("who shows the warnings", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("createA2ARuntime logs them as warnings", async () => {
    const dir = mkdtempSync(join(tmpdir(), "a2a-design-config-"));
    dirs.push(dir);
    const warnings: string[] = [];
    const runtime = createA2ARuntime({
      config: design004Section10,
      stateDir: join(dir, "state"),
      logger: textLogger((message) => warnings.push(message)),
    });
    await runtime.stop();
    expect(warnings).toEqual([expect.stringMatching(/^config key discord\.a2aRetry\.checkIntervalMs /)]);
  });

  it("`a2a-statecharts config` prints them on stderr and the config on stdout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "a2a-design-config-"));
    dirs.push(dir);
    const file = join(dir, "a2a.json");
    writeFileSync(file, JSON.stringify(design004Section10));
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      ["config", file],
      (line) => out.push(line),
      (line) => err.push(line),
    );
    expect(code).toBe(0);
    expect(err).toEqual([
      expect.stringMatching(/^warning: config key discord\.a2aRetry\.checkIntervalMs is ignored: /),
    ]);
    expect(JSON.parse(out.join("\n")).discord.a2aRetry.escalationMentionId).toBe("974537452750528553");
  });
});
