// The agents' tools: `discord_send` (a mention in a Discord thread, reminded and escalated until the
// target answers) and `a2a_send` (the sessions_send flow: the reply waited for with retries, follow-up
// turns by intent, early termination, conditional announce). The calling agent is the one OpenClaw
// builds the tool for, never a parameter.
import type { A2ARuntime, SessionsSendParams } from "a2a-statecharts";
import { discordSendTool, handleDiscordSend } from "a2a-statecharts/discord";
import { z } from "zod";
import type { AgentTool, AgentToolResult, ToolContext } from "./openclawApi.js";

/** What a tool needs of the plugin: the runtime once the service has started it. */
export interface ToolHost {
  /** The running runtime, or the reason there is none (not started yet, or a bad config). */
  runtime(): A2ARuntime | { unavailable: string };
}

const A2ASendArgsSchema = z
  .strictObject({
    targetAgentId: z.string().trim().min(1).optional().describe("The agent to ask (its OpenClaw agent id)."),
    targetSessionKey: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe("Or the exact session to ask in; default: the target's session for this agent."),
    message: z.string().trim().min(1).describe("What to ask or tell."),
    timeoutSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .optional()
      .describe(
        "0 or absent: return once sent (the reply is announced later); above 0: wait this long for the end.",
      ),
  })
  .refine((a) => a.targetAgentId !== undefined || a.targetSessionKey !== undefined, {
    message: "give targetAgentId or targetSessionKey",
  });

/** The target's session for one agent asking another (`agent:<target>:a2a:<requester>`). */
export function a2aSessionKey(targetAgentId: string, fromAgentId: string): string {
  return `agent:${targetAgentId}:a2a:${fromAgentId}`;
}

const text = (value: string, details: unknown): AgentToolResult => ({
  content: [{ type: "text", text: value }],
  details,
});

function unavailable(name: string, reason: string): AgentToolResult {
  return text(`${name}: unavailable: ${reason}`, { ok: false, code: "unavailable", reason });
}

/** `discord_send` for the agent of `ctx`; null (no tool) when OpenClaw gives no agent id. */
export function createDiscordSendTool(host: ToolHost, ctx: ToolContext): AgentTool | null {
  const agentId = ctx.agentId;
  if (agentId === undefined) return null;
  return {
    name: discordSendTool.name,
    label: "Discord send",
    description: discordSendTool.description,
    parameters: discordSendTool.inputSchema as Record<string, unknown>,
    async execute(_toolCallId, params) {
      const runtime = host.runtime();
      if ("unavailable" in runtime) return unavailable(discordSendTool.name, runtime.unavailable);
      const result = await handleDiscordSend(runtime, agentId, params);
      return text(result.text, result);
    },
  };
}

/** `a2a_send` for the agent of `ctx`; null (no tool) when OpenClaw gives no agent id. */
export function createA2ASendTool(host: ToolHost, ctx: ToolContext): AgentTool | null {
  const agentId = ctx.agentId;
  if (agentId === undefined) return null;
  return {
    name: "a2a_send",
    label: "Agent to agent",
    description:
      "Ask another agent and get its reply: waited for with retries, with follow-up turns while useful. " +
      "With timeoutSeconds 0 it returns at once and the outcome is announced in this conversation.",
    parameters: z.toJSONSchema(A2ASendArgsSchema) as Record<string, unknown>,
    async execute(_toolCallId, params) {
      const parsed = A2ASendArgsSchema.safeParse(params);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`);
        return text(`a2a_send: ${problems.join("; ")}`, { ok: false, code: "invalid_arguments" });
      }
      const runtime = host.runtime();
      if ("unavailable" in runtime) return unavailable("a2a_send", runtime.unavailable);
      const a = parsed.data;
      const targetSessionKey = a.targetSessionKey ?? a2aSessionKey(a.targetAgentId as string, agentId);
      const announce = ctx.deliveryContext;
      const request: SessionsSendParams = {
        targetSessionKey,
        message: a.message,
        ...(ctx.sessionKey === undefined ? {} : { requesterSessionKey: ctx.sessionKey }),
        ...(a.timeoutSeconds === undefined ? {} : { timeoutSeconds: a.timeoutSeconds }),
        announceTarget:
          announce?.channel === undefined
            ? null
            : { channel: announce.channel, ...(announce.to === undefined ? {} : { to: announce.to }) },
      };
      const result = await runtime.sessionsSend(request);
      const summary =
        result.status === "ok"
          ? `reply: ${result.reply ?? ""}`
          : result.status === "accepted"
            ? "sent; the reply is announced when it comes"
            : result.status === "blocked"
              ? `no reply: ${result.error?.message ?? "blocked"}`
              : "still waiting; the reply is announced when it comes";
      return text(`a2a_send ${result.status} (${result.conversationId}): ${summary}`, result);
    },
  };
}
