// Each agent's Discord bot, as OpenClaw's own config defines it: the account an agent is bound to
// (`bindings`), and that account's token (`channels.discord.accounts.<id>.token`, a string or one of
// OpenClaw's secret references).
import { PLUGIN_ID, type PluginConfig, PluginConfigError } from "./config.js";
import type { OpenClawConfigShape } from "./openclawApi.js";

/** An agent and the Discord account that is its bot. */
export interface AgentAccount {
  agentId: string;
  accountId: string;
  token: string;
}

/** Reads a secret reference OpenClaw could not resolve before the plugin saw it; undefined if unknown. */
export type SecretResolver = (ref: unknown, path: string) => string | undefined;

/** The agents of the plugin config, else every agent bound to a Discord account, with their tokens. */
export function resolveAgentAccounts(
  openclaw: OpenClawConfigShape,
  config: PluginConfig,
  resolveSecret: SecretResolver = envSecret,
): AgentAccount[] {
  const bound = new Map<string, string>();
  for (const binding of openclaw.bindings ?? []) {
    const { agentId, match } = binding;
    if (agentId !== undefined && match?.channel === "discord" && match.accountId !== undefined)
      if (!bound.has(agentId)) bound.set(agentId, match.accountId);
  }
  const wanted = config.agents === undefined ? [...bound.keys()] : Object.keys(config.agents);
  if (wanted.length === 0)
    throw new PluginConfigError([
      `${PLUGIN_ID}: no agent: bind agents to Discord accounts in \`bindings\` or list them under plugins.entries.${PLUGIN_ID}.config.agents`,
    ]);
  const accounts = openclaw.channels?.discord?.accounts ?? {};
  const problems: string[] = [];
  const result: AgentAccount[] = [];
  for (const agentId of wanted) {
    const accountId = config.agents?.[agentId]?.account ?? bound.get(agentId) ?? agentId;
    const account = Object.hasOwn(accounts, accountId) ? accounts[accountId] : undefined;
    const path = `channels.discord.accounts.${accountId}.token`;
    if (account === undefined) {
      problems.push(`agent ${agentId}: no Discord account "${accountId}" in channels.discord.accounts`);
      continue;
    }
    const token = tokenOf(account.token, path, resolveSecret);
    if (token === undefined) {
      problems.push(`agent ${agentId}: ${path} is missing or cannot be resolved`);
      continue;
    }
    result.push({ agentId, accountId, token });
  }
  if (problems.length > 0) throw new PluginConfigError(problems);
  return result;
}

function tokenOf(value: unknown, path: string, resolveSecret: SecretResolver): string | undefined {
  const raw =
    typeof value === "string" ? value : value === undefined ? undefined : resolveSecret(value, path);
  const token = raw?.trim().replace(/^Bot\s+/i, "");
  return token === undefined || token === "" ? undefined : token;
}

/** OpenClaw's `{ source: "env", id }` reference, read from the environment. */
export function envSecret(ref: unknown): string | undefined {
  if (typeof ref !== "object" || ref === null) return undefined;
  const { source, id } = ref as { source?: unknown; id?: unknown };
  return source === "env" && typeof id === "string" ? process.env[id] : undefined;
}

/** True when OpenClaw's own Discord channel hands bot messages to this account's agent itself. */
export function openclawSeesBotMessages(openclaw: OpenClawConfigShape, accountId: string): boolean {
  const discord = openclaw.channels?.discord;
  const account = discord?.accounts?.[accountId];
  const allowBots = account?.allowBots ?? discord?.allowBots;
  return allowBots === true || allowBots === "mentions";
}
