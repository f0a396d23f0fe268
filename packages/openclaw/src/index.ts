// The OpenClaw plugin `a2a-statecharts`: durable agent-to-agent messaging for OpenClaw's Discord
// agents. A service runs the A2A runtime beside the gateway; each agent gets `discord_send` and
// `a2a_send`; optionally OpenClaw's own `sessions_send` is blocked so agents use the durable one.
import { createA2AService } from "./a2aService.js";
import { PLUGIN_ID, PluginConfigSchema } from "./config.js";
import type { OpenClawConfigShape, OpenClawPluginApi } from "./openclawApi.js";
import { createA2ASendTool, createDiscordSendTool } from "./tools.js";
import { z } from "zod";

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
 * The entry OpenClaw loads: what `definePluginEntry` from `openclaw/plugin-sdk/plugin-entry` returns,
 * written out, so the plugin runs without importing the host (the SDK helper only copies these fields).
 */
const plugin = {
  id: PLUGIN_ID,
  name: "A2A statecharts",
  description:
    "Durable agent-to-agent messaging for Discord agents: replies waited for, reminders, escalation.",
  configSchema: {
    safeParse: (value: unknown) => {
      const result = PluginConfigSchema.safeParse(value ?? {});
      return result.success
        ? { success: true as const, data: result.data }
        : {
            success: false as const,
            error: {
              issues: result.error.issues.map((i) => ({
                path: i.path.filter((p) => typeof p !== "symbol"),
                message: i.message,
              })),
            },
          };
    },
    jsonSchema: z.toJSONSchema(PluginConfigSchema, { target: "draft-07" }),
  },
  register,
};
export default plugin;
