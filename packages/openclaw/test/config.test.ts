import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_PATH, PluginConfigError, parsePluginConfig, toRuntimeConfig } from "../src/config.js";
import { openclawSeesBotMessages, resolveAgentAccounts } from "../src/discordAccounts.js";
import plugin from "../src/index.js";
import type { OpenClawConfigShape } from "../src/openclawApi.js";

const RUDA_BOT = "1500000000000000101";
const EDEN_BOT = "1500000000000000102";
const CHANNEL = "1500000000000000010";

function problemsOf(input: unknown): string[] {
  try {
    parsePluginConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(PluginConfigError);
    return (error as PluginConfigError).problems;
  }
  throw new Error("expected the config to be refused");
}

describe("plugin config", () => {
  it("accepts nothing at all (every default)", () => {
    expect(parsePluginConfig(undefined)).toEqual({});
  });

  it("names the full key of a wrong value, under plugins.entries.a2a-statecharts.config", () => {
    expect(problemsOf({ responseTimeoutMs: -5 })[0]).toMatch(
      /^plugins\.entries\.a2a-statecharts\.config\.responseTimeoutMs: /,
    );
    expect(problemsOf({ agents: { ruda: { account: "" } } })[0]).toMatch(/config\.agents\.ruda\.account: /);
    expect(problemsOf({ escalationUserId: "alice" })[0]).toMatch(/config\.escalationUserId: a Discord id/);
    expect(problemsOf({ storage: { postgres: {} } })[0]).toMatch(
      /config\.storage\.postgres\.connectionString: /,
    );
  });

  it("names an unknown key itself, not only its parent", () => {
    expect(problemsOf({ reminderMinutes: 5 })).toEqual([
      `${CONFIG_PATH}.reminderMinutes: Unrecognized key: "reminderMinutes"`,
    ]);
    expect(problemsOf({ storage: { sqlite: {} } })).toContainEqual(
      expect.stringMatching(/config\.storage\.sqlite: /),
    );
  });

  it("lists every problem at once", () => {
    expect(problemsOf({ maxAttempts: 0, locale: "fr", bogus: true })).toHaveLength(3);
  });

  it("folds the shortcuts into the library's config, the channel allowed too", () => {
    const config = parsePluginConfig({
      channelId: CHANNEL,
      escalationUserId: "1500000000000000900",
      responseTimeoutMs: 20_000,
      urgentResponseTimeoutMs: 5_000,
      maxAttempts: 2,
      maxPingPongTurns: 3,
      locale: "en",
      agents: { ruda: { name: "Ruda" }, eden: {} },
      a2a: { discord: { collaboration: { threadReuseTTL: 1000 } } },
    });
    expect(toRuntimeConfig(config, { ruda: RUDA_BOT, eden: EDEN_BOT })).toEqual({
      locale: "en",
      agents: { ruda: { discordBotId: RUDA_BOT, name: "Ruda" }, eden: { discordBotId: EDEN_BOT } },
      session: { agentToAgent: { maxPingPongTurns: 3 } },
      discord: {
        a2aRetry: {
          responseTimeoutMs: 20_000,
          urgentResponseTimeoutMs: 5_000,
          maxAttempts: 2,
          escalationMentionId: "1500000000000000900",
        },
        collaboration: { threadReuseTTL: 1000, defaultChannel: CHANNEL, allowedChannels: [CHANNEL] },
      },
    });
  });

  it("refuses a bad library setting under `a2a`, naming its key", () => {
    const config = parsePluginConfig({ a2a: { session: { agentToAgent: { maxPingPongTurns: 99 } } } });
    expect(() => toRuntimeConfig(config, {})).toThrow(
      /config\.a2a\.session\.agentToAgent\.maxPingPongTurns: must be a whole number from 0 to 10, got 99/,
    );
  });

  it("ships a manifest OpenClaw reads without the code: the entry's id, name, tools and config schema", () => {
    const manifest = JSON.parse(
      readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"),
    ) as {
      id: string;
      name: string;
      description: string;
      contracts: { tools: string[] };
      configSchema: unknown;
    };
    expect(manifest).toMatchObject({ id: plugin.id, name: plugin.name, description: plugin.description });
    expect(manifest.configSchema).toEqual(plugin.configSchema.jsonSchema);
    expect(manifest.contracts.tools.sort()).toEqual(["a2a_send", "discord_send"]);
  });

  it("lets OpenClaw accept any config object: a bad one must cost this plugin only, not the gateway's start", () => {
    // OpenClaw refuses to start the gateway when a plugin's config fails its declared schema.
    expect(plugin.configSchema.safeParse({ maxAttempts: 99, bogus: true })).toEqual({
      success: true,
      data: { maxAttempts: 99, bogus: true },
    });
    expect(plugin.configSchema.jsonSchema).toMatchObject({ type: "object", additionalProperties: true });
    expect(plugin.configSchema.jsonSchema).not.toHaveProperty("properties");
  });
});

describe("agents' Discord accounts", () => {
  const openclaw: OpenClawConfigShape = {
    bindings: [
      { agentId: "ruda", match: { channel: "discord", accountId: "ruda-bot" } },
      { agentId: "eden", match: { channel: "discord", accountId: "eden" } },
      { agentId: "mail", match: { channel: "email", accountId: "x" } },
    ],
    channels: {
      discord: {
        accounts: {
          "ruda-bot": { token: "Bot ruda.token" },
          eden: { token: { source: "env", provider: "default", id: "EDEN_TOKEN" } },
          unbound: { token: "x" },
        },
      },
    },
  };

  it("takes the agents bound to Discord accounts, with their tokens (a `Bot ` prefix dropped, env references read)", () => {
    const accounts = resolveAgentAccounts(openclaw, {}, (ref) =>
      (ref as { id: string }).id === "EDEN_TOKEN" ? "eden.token" : undefined,
    );
    expect(accounts).toEqual([
      { agentId: "ruda", accountId: "ruda-bot", token: "ruda.token" },
      { agentId: "eden", accountId: "eden", token: "eden.token" },
    ]);
  });

  it("uses the plugin's own agent list and account names over the bindings", () => {
    const accounts = resolveAgentAccounts(openclaw, { agents: { ruda: { account: "unbound" } } });
    expect(accounts).toEqual([{ agentId: "ruda", accountId: "unbound", token: "x" }]);
  });

  it("names every agent whose account or token is missing", () => {
    expect(() =>
      resolveAgentAccounts(openclaw, { agents: { ghost: {}, eden: {} } }, () => undefined),
    ).toThrow(
      /agent ghost: no Discord account "ghost".*agent eden: channels\.discord\.accounts\.eden\.token is missing/,
    );
  });

  it("says how to name agents when none is bound", () => {
    expect(() => resolveAgentAccounts({}, {})).toThrow(
      /no agent: bind agents to Discord accounts in `bindings`/,
    );
  });

  it("knows when OpenClaw's own Discord channel lets bot messages through (then the plugin leaves them to it)", () => {
    expect(openclawSeesBotMessages(openclaw, "eden")).toBe(false);
    expect(openclawSeesBotMessages({ channels: { discord: { allowBots: "mentions" } } }, "eden")).toBe(true);
    expect(
      openclawSeesBotMessages(
        { channels: { discord: { allowBots: true, accounts: { eden: { allowBots: false } } } } },
        "eden",
      ),
    ).toBe(false);
  });
});
