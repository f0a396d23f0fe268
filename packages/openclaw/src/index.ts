// The OpenClaw plugin `a2a-statecharts`: durable agent-to-agent messaging for OpenClaw's Discord
// agents. A service runs the A2A runtime beside the gateway; each agent gets `discord_send` and
// `a2a_send`; optionally OpenClaw's own `sessions_send` is blocked so agents use the durable one.
import { createA2AService } from "./a2aService.js";
import { PLUGIN_ID } from "./config.js";
import type { OpenClawConfigShape, OpenClawPluginApi } from "./openclawApi.js";
import { createA2ASendTool, createDiscordSendTool } from "./tools.js";

export {
  PLUGIN_ID,
  PluginConfigError,
  PluginConfigSchema,
  parsePluginConfig,
  type PluginConfig,
} from "./config.js";
export { createSubagentGateway, toWaitStatus } from "./subagentGateway.js";
export type * from "./openclawApi.js";

/** OpenClaw's config with its secret references resolved, from the SDK the gateway links the plugin to. */
async function resolvedOpenClawConfig(): Promise<OpenClawConfigShape | undefined> {
  const sdk = "openclaw/plugin-sdk/runtime-config-snapshot";
  try {
    const { getRuntimeConfigSnapshot } = (await import(sdk)) as {
      getRuntimeConfigSnapshot?: () => OpenClawConfigShape | null | undefined;
    };
    return getRuntimeConfigSnapshot?.() ?? undefined;
  } catch {
    return undefined;
  }
}

/** Called by OpenClaw, several times (to run it, and to list what it offers); it starts nothing itself. */
function register(api: OpenClawPluginApi): void {
  const { service, host } = createA2AService({
    pluginConfig: api.pluginConfig,
    subagent: api.runtime.subagent,
    resolvedConfig: resolvedOpenClawConfig,
  });
  api.registerService(service);
  api.registerTool((ctx) => createDiscordSendTool(host, ctx), { name: "discord_send" });
  api.registerTool((ctx) => createA2ASendTool(host, ctx), { name: "a2a_send" });
  if (api.pluginConfig?.blockCoreSessionsSend === true) {
    api.on("before_tool_call", (event) =>
      event.toolName === "sessions_send"
        ? { block: true, blockReason: "sessions_send is off here: use a2a_send (durable, with retries)" }
        : undefined,
    );
  }
}

/**
 * Open to OpenClaw, checked by the service. OpenClaw refuses to start the whole gateway when a plugin's
 * config fails the schema the plugin declares, so the plugin declares any object and checks its config
 * itself at start (parsePluginConfig): a mistake disables this plugin only, with an error naming the key.
 */
const configSchema = {
  safeParse: (value: unknown) => ({ success: true as const, data: value }),
  // The same as openclaw.plugin.json's, which OpenClaw reads without loading the code (a test checks).
  jsonSchema: {
    type: "object",
    additionalProperties: true,
    description:
      "The plugin checks its config itself when the gateway starts (docs/openclaw.md lists every key): a mistake there disables this plugin only, with an error naming the key, instead of stopping the gateway.",
  },
};

/**
 * The entry OpenClaw loads: what `definePluginEntry` from `openclaw/plugin-sdk/plugin-entry` returns,
 * written out, so the plugin runs without importing the host (the SDK helper only copies these fields).
 */
const plugin = {
  id: PLUGIN_ID,
  name: "A2A statecharts",
  description:
    "Durable agent-to-agent messaging for OpenClaw Discord agents: replies waited for with retries, threads, reminders and escalation to a human, kept across restarts.",
  configSchema,
  register,
};
export default plugin;
