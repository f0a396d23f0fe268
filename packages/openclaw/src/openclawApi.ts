// The part of OpenClaw's plugin API (openclaw 2026.9.6, `openclaw/plugin-sdk/plugin-entry`) that this
// plugin uses, typed by shape. The SDK's own types come with the `openclaw` package: 700 MB, Node 24
// only, and marked experimental. The plugin is tested against the real gateway instead, which pins the
// version these shapes were read from (package.json `openclaw.compat`).

/** OpenClaw's plugin logger. */
export interface PluginLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
}

/** The receipt of a finished run: the text the agent answered, or why there is none. */
export type TerminalReply =
  | { disposition: "visible"; text: string }
  | { disposition: "silent" }
  | { disposition: "empty"; code?: string };

/** What `waitForRun` answers; `pending` means the run is still going (not a failure). */
export interface SubagentWaitResult {
  status: "ok" | "timeout" | "error" | "pending";
  error?: string;
  terminalReply?: TerminalReply;
}

/** `api.runtime.subagent`: run an agent in a session, wait for the run, read the session. */
export interface SubagentRuntime {
  run(p: {
    sessionKey: string;
    message: string;
    extraSystemPrompt?: string;
    deliver?: boolean;
    idempotencyKey?: string;
  }): Promise<{ runId: string; sessionKey?: string }>;
  waitForRun(p: { runId: string; timeoutMs?: number }): Promise<SubagentWaitResult>;
  getSessionMessages(p: { sessionKey: string; limit?: number }): Promise<{ messages: unknown[] }>;
}

/** What an agent tool answers: text for the model, and structured details. */
export interface AgentToolResult {
  content: Array<{ type: "text"; text: string }>;
  details: unknown;
}

/** An agent tool; `parameters` is a JSON Schema object. */
export interface AgentTool {
  name: string;
  label?: string;
  description: string;
  parameters: Record<string, unknown>;
  execute(toolCallId: string, params: unknown, signal?: AbortSignal): Promise<AgentToolResult>;
}

/** Where the current turn delivers (the channel and the conversation id in it). */
export interface DeliveryContext {
  channel?: string;
  to?: string;
  accountId?: string;
  threadId?: string | number;
}

/** The trusted context a tool factory is built with: which agent and session call the tool. */
export interface ToolContext {
  agentId?: string;
  sessionKey?: string;
  agentAccountId?: string;
  messageChannel?: string;
  deliveryContext?: DeliveryContext;
}

/** The context OpenClaw starts and stops a service with. */
export interface ServiceContext {
  config: OpenClawConfigShape;
  stateDir: string;
  logger: PluginLogger;
}

/** A background service, started with the gateway and stopped with it. */
export interface PluginService {
  id: string;
  start(ctx: ServiceContext): Promise<void> | void;
  stop?(ctx: ServiceContext): Promise<void> | void;
}

/** The `before_tool_call` hook's event, and what it may answer. */
export interface BeforeToolCallEvent {
  toolName: string;
  params: Record<string, unknown>;
}
export interface BeforeToolCallResult {
  block?: boolean;
  blockReason?: string;
}

/** The API a plugin's `register(api)` receives. */
export interface OpenClawPluginApi {
  id: string;
  /** `full` when the gateway loads the plugin to run it; `discovery` and others only list what it has. */
  registrationMode?: string;
  config: OpenClawConfigShape;
  pluginConfig?: Record<string, unknown>;
  logger: PluginLogger;
  runtime: { subagent: SubagentRuntime };
  registerTool(factory: (ctx: ToolContext) => AgentTool | null, options?: { name?: string }): void;
  registerService(service: PluginService): void;
  on(
    hook: "before_tool_call",
    handler: (event: BeforeToolCallEvent) => BeforeToolCallResult | undefined,
  ): void;
}

/** The parts of OpenClaw's own config the plugin reads: agents, bindings, Discord accounts. */
export interface OpenClawConfigShape {
  agents?: { entries?: Record<string, unknown>; list?: Array<{ id?: string }> };
  bindings?: Array<{ agentId?: string; match?: { channel?: string; accountId?: string } }>;
  channels?: {
    discord?: {
      token?: unknown;
      allowBots?: boolean | string;
      accounts?: Record<string, { token?: unknown; allowBots?: boolean | string; enabled?: boolean }>;
    };
  };
}
