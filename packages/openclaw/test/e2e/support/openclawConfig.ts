// The OpenClaw config of the end-to-end tests: two Discord agents (ruda and eden) on the emulator, each
// bound to its own bot account, both on the fake model, and the plugin with short timeouts.
import { mkdirSync } from "node:fs";
import { join } from "node:path";

export const IDS = {
  guild: "1500000000000000001",
  channel: "1500000000000000010",
  bots: { ruda: "1500000000000000101", eden: "1500000000000000102" },
  human: "1500000000000000900",
} as const;
export const AGENTS = ["ruda", "eden"] as const;
export type AgentId = (typeof AGENTS)[number];

export interface E2EConfigOptions {
  dir: string;
  gatewayPort: number;
  modelBaseUrl: string;
  /** A token, or one of OpenClaw's secret references to it. */
  tokens: Record<AgentId, string | { source: "env"; provider: string; id: string }>;
  pluginConfig: Record<string, unknown>;
}

export function openclawConfig(o: E2EConfigOptions): Record<string, unknown> {
  const workspace = (agent: string): string => {
    const path = join(o.dir, "workspaces", agent);
    mkdirSync(path, { recursive: true });
    return path;
  };
  const model = (id: AgentId) => ({
    id,
    name: id,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128_000,
    maxTokens: 4096,
  });
  const guilds = {
    [IDS.guild]: { requireMention: true, users: [IDS.human], channels: { [IDS.channel]: { enabled: true } } },
  };
  return {
    gateway: { mode: "local", bind: "loopback", port: o.gatewayPort, auth: { mode: "none" } },
    models: {
      mode: "replace",
      providers: {
        fake: {
          baseUrl: o.modelBaseUrl,
          apiKey: "fake-key",
          api: "openai-completions",
          models: AGENTS.map(model),
        },
      },
    },
    agents: {
      // Several agents: OpenClaw wants to be told the roster is explicit.
      ownership: "explicit",
      defaults: {
        model: "fake/ruda",
        workspace: workspace("defaults"),
        systemAgent: { agentId: "ruda" },
        heartbeat: { agentId: "ruda" },
      },
      entries: Object.fromEntries(
        AGENTS.map((id) => [
          id,
          {
            model: `fake/${id}`,
            workspace: workspace(id),
            subagents: { allowAgents: ["*"] },
            tools: { alsoAllow: ["discord_send", "a2a_send"] },
          },
        ]),
      ),
    },
    tools: { toolSearch: false },
    bindings: AGENTS.map((id) => ({ agentId: id, match: { channel: "discord", accountId: id } })),
    channels: {
      discord: {
        enabled: true,
        groupPolicy: "allowlist",
        dmPolicy: "disabled",
        // No introduction post when a bot first sees the guild: the tests count every post.
        joinIntro: false,
        accounts: Object.fromEntries(AGENTS.map((id) => [id, { token: o.tokens[id], guilds }])),
      },
    },
    plugins: {
      entries: {
        discord: { enabled: true },
        "a2a-statecharts": { enabled: true, config: o.pluginConfig },
      },
    },
    logging: { file: join(o.dir, "openclaw.log") },
  };
}
