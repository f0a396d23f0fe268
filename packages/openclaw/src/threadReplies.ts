// An agent mentioned by another agent's bot: OpenClaw's Discord channel drops bot messages (unless
// `allowBots` is on), so the plugin runs the mentioned agent itself, in the session OpenClaw uses for
// that channel or thread, and posts the reply as the agent's bot. The runtime sees that reply like any
// other message: it ends the mention it answers.
import { createHash } from "node:crypto";
import type { DiscordPort, GatewayPort } from "a2a-statecharts";
import type { HandleDecision } from "a2a-statecharts/discord";
import type { PluginLogger } from "./openclawApi.js";

/** Discord's limit on a message's length. */
const MAX_CONTENT = 2000;
/** Discord's limit on a nonce's length. */
const MAX_NONCE = 25;
/** OpenClaw's token for "no reply" (a model that answers it posts nothing). */
const NO_REPLY = /^\s*NO_REPLY\s*$/;

export interface ThreadReplyOptions {
  /** The runtime's own port on `api.runtime.subagent`: it decides what a run's reply is. */
  gateway: GatewayPort;
  discord: Pick<DiscordPort, "sendMessage">;
  logger: PluginLogger;
  /** How long one run may take before the plugin stops waiting for it. */
  runTimeoutMs: number;
  /** True when OpenClaw itself handles bot messages for this agent (then the plugin does not). */
  openclawHandles(agentId: string): boolean;
  /** The agent's display name for a bot user id, if it is an agent. */
  agentOfBot(userId: string): string | undefined;
}

/** A stable nonce for one reply part: a retried post of the same reply is posted once by Discord. */
export function replyNonce(messageId: string, agentId: string, part: number): string {
  return createHash("sha256")
    .update(`reply:${messageId}:${agentId}:${part}`)
    .digest("base64url")
    .slice(0, MAX_NONCE);
}

/** Splits a reply into Discord-sized parts, at a line break where one is near the limit. */
export function splitReply(text: string): string[] {
  const parts: string[] = [];
  let rest = text.trim();
  while (rest.length > MAX_CONTENT) {
    const breakAt = rest.lastIndexOf("\n", MAX_CONTENT);
    const cut = breakAt > MAX_CONTENT / 2 ? breakAt : MAX_CONTENT;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  if (rest !== "") parts.push(rest);
  return parts;
}

/** The `onHandle` of the bridge: answers what OpenClaw's own Discord channel drops. */
export function createThreadReplies(o: ThreadReplyOptions): (handle: HandleDecision) => Promise<void> {
  return async ({ agentId, sessionKey, message }) => {
    // A human's message is OpenClaw's own to answer; so is a bot's when `allowBots` lets it through.
    if (!message.authorIsBot || o.openclawHandles(agentId)) return;
    const sender = o.agentOfBot(message.authorId) ?? `<@${message.authorId}>`;
    const { runId } = await o.gateway.agent({
      sessionKey,
      message: `[Discord] ${sender}: ${message.content}`,
      idempotencyKey: `a2a-statecharts:${message.messageId}:${agentId}`,
    });
    // A run still going when a wait ends is a `timeout`: wait again until the deadline.
    const deadline = Date.now() + o.runTimeoutMs;
    let result = await o.gateway.agentWait({ runId, timeoutMs: o.runTimeoutMs });
    while (result.status === "timeout" && Date.now() < deadline)
      result = await o.gateway.agentWait({ runId, timeoutMs: Math.max(1, deadline - Date.now()) });
    if (result.status !== "ok") {
      o.logger.warn(
        `a2a-statecharts: ${agentId}'s run for message ${message.messageId} ended ${result.status}${result.error ? `: ${result.error}` : ""}; nothing posted`,
      );
      return;
    }
    const reply = await o.gateway.readLatestAssistantReply({ sessionKey });
    if (reply === undefined || NO_REPLY.test(reply)) return;
    const parts = splitReply(reply);
    for (const [index, content] of parts.entries()) {
      await o.discord.sendMessage({
        asAgentId: agentId,
        channelId: message.channelId,
        content,
        mentionUserIds: [...content.matchAll(/<@!?(\d{17,20})>/g)].map((m) => m[1] as string),
        nonce: replyNonce(message.messageId, agentId, index),
      });
    }
  };
}
