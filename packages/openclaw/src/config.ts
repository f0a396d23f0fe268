// The plugin's config (`plugins.entries["a2a-statecharts"].config` in OpenClaw's config): which agents
// take part and as which Discord account, the few settings an operator changes, and the storage. Any
// other setting of the library goes under `a2a`, in the library's own words.
import { A2AConfigError, type A2AConfigInput, parseConfig } from "a2a-statecharts";
import { z } from "zod";

export const PLUGIN_ID = "a2a-statecharts";
/** Where OpenClaw keeps this plugin's config: every error names a key under it. */
export const CONFIG_PATH = `plugins.entries.${PLUGIN_ID}.config`;

const snowflake = z.string().regex(/^\d{17,20}$/, "a Discord id (17–20 digits)");
const positiveMs = z.number().int().positive();

export const PluginConfigSchema = z.strictObject({
  agents: z
    .record(
      z.string().min(1),
      z.strictObject({
        account: z
          .string()
          .min(1)
          .optional()
          .describe("The OpenClaw Discord account (channels.discord.accounts key) that is this agent's bot."),
        name: z.string().min(1).optional().describe("The agent's display name in thread titles."),
      }),
    )
    .optional()
    .describe(
      "The agents that talk to each other, by OpenClaw agent id. Default: every agent bound to a Discord account in `bindings`.",
    ),
  channelId: snowflake
    .optional()
    .describe("The channel where new collaboration threads open (also allowed)."),
  allowedChannels: z.array(snowflake).optional().describe("Channels where collaboration threads may open."),
  allowedGuilds: z.array(snowflake).optional().describe("Guilds whose channels may be used; default: any."),
  escalationUserId: snowflake.optional().describe("The human pinged when a mention stays unanswered."),
  responseTimeoutMs: positiveMs.optional().describe("Time before each reminder (default 300000)."),
  urgentResponseTimeoutMs: positiveMs.optional().describe("The same for urgent mentions (default 60000)."),
  maxAttempts: z
    .number()
    .int()
    .min(1)
    .max(10)
    .optional()
    .describe("The mention plus its reminders; escalation follows the last (default 3)."),
  maxPingPongTurns: z
    .number()
    .int()
    .min(0)
    .max(10)
    .optional()
    .describe("Follow-up turns of a2a_send (default 5)."),
  locale: z
    .enum(["ko", "en"])
    .optional()
    .describe("The language of reminders, escalations and tool answers."),
  blockCoreSessionsSend: z
    .boolean()
    .optional()
    .describe("Block OpenClaw's own sessions_send so agents use the durable a2a_send."),
  storage: z
    .strictObject({
      postgres: z.strictObject({
        connectionString: z.string().min(1),
        schema: z.string().min(1).optional(),
        leaseMs: positiveMs.optional(),
      }),
    })
    .optional()
    .describe(
      "Default: files in the plugin's state dir. With `postgres`, several gateways share one database.",
    ),
  a2a: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("Any other a2a-statecharts setting, in its own config's shape (session, discord, messages…)."),
});
export type PluginConfig = z.infer<typeof PluginConfigSchema>;

/** The plugin's config is wrong; `message` names every key at fault under `CONFIG_PATH`. */
export class PluginConfigError extends Error {
  readonly code = "plugin_config_invalid";
  constructor(readonly problems: string[]) {
    super(`${PLUGIN_ID}: invalid config: ${problems.join("; ")}`);
    this.name = "PluginConfigError";
  }
}

/** Checks the config OpenClaw hands the plugin; throws PluginConfigError naming each bad key. */
export function parsePluginConfig(input: unknown): PluginConfig {
  const parsed = PluginConfigSchema.safeParse(input ?? {});
  if (!parsed.success) {
    throw new PluginConfigError(
      parsed.error.issues.map((issue) => {
        const keys = issue.code === "unrecognized_keys" ? issue.keys : [undefined];
        return keys
          .map(
            (key) =>
              `${[CONFIG_PATH, ...issue.path.map(String), ...(key === undefined ? [] : [key])].join(".")}: ${issue.message}`,
          )
          .join("; ");
      }),
    );
  }
  return parsed.data;
}

/**
 * The library's config for the agents whose bots are known (agent id → bot user id): the shortcuts
 * folded into `a2a`, then checked by the library, whose errors name the key under `CONFIG_PATH.a2a`.
 */
export function toRuntimeConfig(config: PluginConfig, botIds: Record<string, string>): A2AConfigInput {
  const a2a = structuredClone(config.a2a ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const session = (a2a.session ??= {});
  const agentToAgent = ((session.agentToAgent as Record<string, unknown> | undefined) ??= {});
  if (config.maxPingPongTurns !== undefined) agentToAgent.maxPingPongTurns = config.maxPingPongTurns;
  const discord = (a2a.discord ??= {});
  const retry = ((discord.a2aRetry as Record<string, unknown> | undefined) ??= {});
  if (config.responseTimeoutMs !== undefined) retry.responseTimeoutMs = config.responseTimeoutMs;
  if (config.urgentResponseTimeoutMs !== undefined)
    retry.urgentResponseTimeoutMs = config.urgentResponseTimeoutMs;
  if (config.maxAttempts !== undefined) retry.maxAttempts = config.maxAttempts;
  if (config.escalationUserId !== undefined) retry.escalationMentionId = config.escalationUserId;
  const collaboration = ((discord.collaboration as Record<string, unknown> | undefined) ??= {});
  if (config.channelId !== undefined) collaboration.defaultChannel = config.channelId;
  const allowed = [
    ...(config.allowedChannels ?? []),
    ...(config.channelId === undefined ? [] : [config.channelId]),
  ];
  if (allowed.length > 0) collaboration.allowedChannels = [...new Set(allowed)];
  if (config.allowedGuilds !== undefined) collaboration.allowedGuilds = config.allowedGuilds;
  const input: Record<string, unknown> = {
    ...a2a,
    ...(config.locale === undefined ? {} : { locale: config.locale }),
    agents: Object.fromEntries(
      Object.entries(botIds).map(([agentId, discordBotId]) => {
        const name = config.agents?.[agentId]?.name;
        return [agentId, { discordBotId, ...(name === undefined ? {} : { name }) }];
      }),
    ),
  };
  try {
    parseConfig(input);
  } catch (error) {
    if (!(error instanceof A2AConfigError)) throw error;
    // The shortcuts were checked above: what the library refuses comes from `a2a`, or from a shortcut
    // that contradicts it (both are named under `a2a`, where the whole library config is).
    throw new PluginConfigError(error.problems.map((p) => `${CONFIG_PATH}.a2a.${p.path}: ${p.message}`));
  }
  return input as A2AConfigInput;
}
