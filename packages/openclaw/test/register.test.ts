// What the plugin registers with OpenClaw, on a recording stand-in for `api`.
import { describe, expect, it } from "vitest";
import plugin from "../src/index.js";
import type {
  AgentTool,
  BeforeToolCallEvent,
  BeforeToolCallResult,
  OpenClawPluginApi,
  PluginService,
  ToolContext,
} from "../src/openclawApi.js";

function recordingApi(pluginConfig?: Record<string, unknown>) {
  const tools: Array<{ factory: (ctx: ToolContext) => AgentTool | null; name?: string }> = [];
  const services: PluginService[] = [];
  const hooks: Array<(event: BeforeToolCallEvent) => BeforeToolCallResult | undefined> = [];
  const api: OpenClawPluginApi = {
    id: "a2a-statecharts",
    config: {},
    ...(pluginConfig === undefined ? {} : { pluginConfig }),
    logger: { info() {}, warn() {}, error() {} },
    runtime: {
      subagent: {
        run: async () => ({ runId: "r" }),
        waitForRun: async () => ({ status: "ok" }),
        getSessionMessages: async () => ({ messages: [] }),
      },
    },
    registerTool: (factory, options) =>
      tools.push({ factory, ...(options?.name ? { name: options.name } : {}) }),
    registerService: (service) => services.push(service),
    on: (_hook, handler) => hooks.push(handler),
  };
  return { api, tools, services, hooks };
}

describe("register(api)", () => {
  it("registers the service and the two tools, each built for the calling agent, and starts nothing", () => {
    const { api, tools, services, hooks } = recordingApi();
    plugin.register(api);
    expect(services.map((s) => s.id)).toEqual(["a2a-statecharts"]);
    expect(tools.map((t) => t.name)).toEqual(["discord_send", "a2a_send"]);
    expect(tools.map((t) => t.factory({ agentId: "ruda" })?.name)).toEqual(["discord_send", "a2a_send"]);
    // Without an agent (a context OpenClaw builds outside any agent's turn), no tool.
    expect(tools.map((t) => t.factory({}))).toEqual([null, null]);
    expect(hooks).toEqual([]);
  });

  it("blocks OpenClaw's own sessions_send when asked, naming a2a_send, and nothing else", () => {
    const { api, hooks } = recordingApi({ blockCoreSessionsSend: true });
    plugin.register(api);
    expect(hooks).toHaveLength(1);
    const hook = hooks[0];
    expect(hook?.({ toolName: "sessions_send", params: {} })).toEqual({
      block: true,
      blockReason: expect.stringContaining("a2a_send"),
    });
    expect(hook?.({ toolName: "a2a_send", params: {} })).toBeUndefined();
    expect(hook?.({ toolName: "read", params: {} })).toBeUndefined();
  });
});
