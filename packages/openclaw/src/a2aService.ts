// The plugin's service: started with the gateway, it logs in each agent's Discord bot, starts the A2A
// runtime in the plugin's state dir (or on PostgreSQL), bridges the bots' messages to it, and stops
// all of it with the gateway.
import { AsyncResource } from "node:async_hooks";
import { join } from "node:path";
import { type A2ALogger, type A2ARuntime, type SnapshotStore, createA2ARuntime } from "a2a-statecharts";
import { bridgeDiscordJs, createDiscordJsPort } from "a2a-statecharts/discord";
import { Client, GatewayIntentBits } from "discord.js";
import { type PluginConfig, parsePluginConfig, toRuntimeConfig } from "./config.js";
import { type AgentAccount, openclawSeesBotMessages, resolveAgentAccounts } from "./discordAccounts.js";
import type {
  OpenClawConfigShape,
  PluginLogger,
  PluginService,
  ServiceContext,
  SubagentRuntime,
} from "./openclawApi.js";
import { createSubagentGateway } from "./subagentGateway.js";
import { createThreadReplies } from "./threadReplies.js";
import type { ToolHost } from "./tools.js";

/** How long the plugin waits for a bot to log in before the service fails to start. */
const LOGIN_TIMEOUT_MS = 60_000;

/** How long stop() lets replies being posted finish. */
const STOP_GRACE_MS = 5_000;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

/** discord.js's `rest.api` for OpenClaw's `DISCORD_API_URL` (an emulator or a proxy), else Discord's. */
export function discordRestApi(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = env.DISCORD_API_URL?.trim();
  if (!url) return undefined;
  return url.replace(/\/+$/, "").replace(/\/v\d+$/, "");
}

function runtimeLogger(logger: PluginLogger): A2ALogger {
  const line = (message: string, fields: Record<string, unknown>): string =>
    `a2a-statecharts: ${message}${Object.keys(fields).length === 0 ? "" : ` ${JSON.stringify(fields)}`}`;
  return {
    debug: (fields, message) => logger.debug?.(line(message, fields)),
    info: (fields, message) => logger.info(line(message, fields)),
    warn: (fields, message) => logger.warn(line(message, fields)),
    error: (fields, message) => logger.error(line(message, fields)),
  };
}

async function login(account: AgentAccount, api: string | undefined): Promise<Client> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    ...(api === undefined ? {} : { rest: { api } }),
  });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`Discord bot of agent ${account.agentId} not ready after ${LOGIN_TIMEOUT_MS} ms`)),
      LOGIN_TIMEOUT_MS,
    );
    client.once("clientReady", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  try {
    await client.login(account.token);
    await ready;
    return client;
  } catch (error) {
    await client.destroy();
    throw new Error(
      `a2a-statecharts: agent ${account.agentId} (account ${account.accountId}) could not log in to Discord`,
      {
        cause: error,
      },
    );
  }
}

/**
 * The subagent runtime with every call made in the context of the service's start. OpenClaw keeps the
 * tool call that authorised a run in async-local state, and refuses a run whose caller's turn has ended
 * ("agent tool caller authority is no longer active"). The runtime's work outlives the tool call that
 * started it (a2a_send's follow-up turns, retries): it is the process's, not that turn's.
 */
function inServiceContext(subagent: SubagentRuntime): SubagentRuntime {
  return {
    run: AsyncResource.bind((p: Parameters<SubagentRuntime["run"]>[0]) => subagent.run(p)),
    waitForRun: AsyncResource.bind((p: Parameters<SubagentRuntime["waitForRun"]>[0]) =>
      subagent.waitForRun(p),
    ),
    getSessionMessages: AsyncResource.bind((p: Parameters<SubagentRuntime["getSessionMessages"]>[0]) =>
      subagent.getSessionMessages(p),
    ),
  };
}

async function openStore(config: PluginConfig): Promise<SnapshotStore | undefined> {
  const postgres = config.storage?.postgres;
  if (postgres === undefined) return undefined;
  const { createPostgresStore } = await import("a2a-statecharts/postgres");
  return createPostgresStore(postgres);
}

interface Running {
  runtime: A2ARuntime;
  clients: Client[];
  detach: () => void;
  replies: Set<Promise<void>>;
}

/** The runtime of this process, or why there is none. */
interface Slot {
  running?: Running;
  starting?: boolean;
  unavailable: string;
}

/**
 * One slot per process, on globalThis: OpenClaw loads the plugin several times (to run it, to list
 * its tools), from copies of its package, so the tools a run uses may come from another load, another
 * module instance, than the service that started the runtime.
 */
function processSlot(): Slot {
  const key = Symbol.for("a2a-statecharts-openclaw.runtime");
  const global = globalThis as { [key]?: Slot };
  return (global[key] ??= { unavailable: "the a2a-statecharts service has not started yet" });
}

/** The service, and the tools' view of the runtime it runs. */
export function createA2AService(o: {
  pluginConfig: unknown;
  subagent: SubagentRuntime;
  /** OpenClaw's config with secrets resolved, when the SDK offers it; else the service's `ctx.config`. */
  resolvedConfig?: () => Promise<OpenClawConfigShape | undefined>;
}): { service: PluginService; host: ToolHost } {
  const slot = processSlot();
  const host: ToolHost = { runtime: () => slot.running?.runtime ?? { unavailable: slot.unavailable } };

  const start = async (ctx: ServiceContext): Promise<void> => {
    if (slot.running !== undefined || slot.starting === true) {
      ctx.logger.warn("a2a-statecharts: already running in this process; this start is ignored");
      return;
    }
    slot.starting = true;
    const clients: Record<string, Client> = {};
    try {
      const config = parsePluginConfig(o.pluginConfig);
      const openclaw = (await o.resolvedConfig?.()) ?? ctx.config;
      const accounts = resolveAgentAccounts(openclaw, config);
      const api = discordRestApi();
      for (const account of accounts) clients[account.agentId] = await login(account, api);
      const botIds = Object.fromEntries(
        Object.entries(clients).map(([agentId, client]) => [agentId, client.user?.id ?? ""]),
      );
      const discord = createDiscordJsPort(clients);
      const gateway = createSubagentGateway(inServiceContext(o.subagent));
      const store = await openStore(config);
      const runtime = createA2ARuntime({
        stateDir: join(ctx.stateDir, "a2a-statecharts"),
        config: toRuntimeConfig(config, botIds),
        gateway,
        discord,
        logger: runtimeLogger(ctx.logger),
        ...(store === undefined ? {} : { store }),
      });
      await runtime.start();
      const agentOfBot = new Map(Object.entries(botIds).map(([agentId, botId]) => [botId, agentId]));
      const accountOf = new Map(accounts.map((a) => [a.agentId, a.accountId]));
      const answer = createThreadReplies({
        gateway,
        discord,
        logger: ctx.logger,
        runTimeoutMs: 300_000,
        openclawHandles: (agentId) => openclawSeesBotMessages(openclaw, accountOf.get(agentId) ?? agentId),
        agentOfBot: (userId) => agentOfBot.get(userId),
      });
      const replies = new Set<Promise<void>>();
      const detach = bridgeDiscordJs(runtime, clients, {
        onHandle: (handle) => {
          const reply = answer(handle).finally(() => replies.delete(reply));
          replies.add(reply);
          return reply;
        },
        onError: (error, message) =>
          ctx.logger.warn(
            `a2a-statecharts: message ${message.messageId} in ${message.channelId}: ${error instanceof Error ? error.message : String(error)}`,
          ),
      });
      slot.running = { runtime, clients: Object.values(clients), detach, replies };
      ctx.logger.info(`a2a-statecharts: started for agents ${Object.keys(clients).join(", ")}`);
    } catch (error) {
      // Only this plugin is out: the gateway and its other plugins go on, and the tools say why.
      await Promise.all(Object.values(clients).map((client) => client.destroy()));
      slot.unavailable = describe(error);
      ctx.logger.error(slot.unavailable);
    } finally {
      slot.starting = false;
    }
  };

  const stop = async (): Promise<void> => {
    const current = slot.running;
    if (current === undefined) return;
    slot.running = undefined;
    slot.unavailable = "the a2a-statecharts service has stopped";
    current.detach();
    // A reply still being written gets a moment to post; a run still going is not waited for.
    await Promise.race([Promise.allSettled([...current.replies]), delay(STOP_GRACE_MS)]);
    await current.runtime.stop();
    await Promise.all(current.clients.map((client) => client.destroy()));
  };

  return { service: { id: "a2a-statecharts", start, stop }, host };
}
