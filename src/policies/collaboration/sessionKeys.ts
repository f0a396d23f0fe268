import { asText, requireNonEmptyText } from "../InvalidInputError.js";

/** The session of an agent in a Discord thread: one session per thread. */
export function resolveThreadSessionKey(agentId: string, threadId: string): string {
  const agent = requireNonEmptyText("resolveThreadSessionKey", "agentId", agentId);
  const thread = requireNonEmptyText("resolveThreadSessionKey", "threadId", threadId);
  return `agent:${agent}:discord:channel:${thread}`;
}

const A2A_SESSION = /^agent:[^:]+:a2a:./;
const DISCORD_CHANNEL_SESSION = /^agent:[^:]+:discord:channel:./;

/** `agent:*:a2a:*`: a one-off sessions_send session. */
export function isA2ASessionKey(key: string): boolean {
  return A2A_SESSION.test(asText(key) ?? "");
}

export function isDiscordChannelSessionKey(key: string): boolean {
  return DISCORD_CHANNEL_SESSION.test(asText(key) ?? "");
}

const A2A_BOOTSTRAP_ALLOWLIST = new Set(["AGENTS.md", "TOOLS.md", "IDENTITY.md"]);
// HEARTBEAT.md steers agents into `HEARTBEAT_OK` answers, which derail a thread conversation.
const THREAD_SESSION_DENYLIST = new Set(["HEARTBEAT.md"]);

/** The workspace files a session loads: A2A ones the identity files; Discord ones all but HEARTBEAT.md. */
export function filterBootstrapFiles<T extends { name: string }>(
  sessionKey: string,
  files: readonly T[],
): T[] {
  const list = Array.isArray(files) ? files.filter((f) => f != null && typeof f.name === "string") : [];
  if (isA2ASessionKey(sessionKey)) return list.filter((f) => A2A_BOOTSTRAP_ALLOWLIST.has(f.name));
  if (isDiscordChannelSessionKey(sessionKey)) return list.filter((f) => !THREAD_SESSION_DENYLIST.has(f.name));
  return [...list];
}

/**
 * The key under which a pair's collaboration thread is kept for reuse: directional, so `ruda:eden`
 * and `eden:ruda` are different threads; a topic splits one pair's threads. An empty topic means none.
 */
export function threadRouteKey(fromAgentId: string, toAgentId: string, topicId?: string): string {
  const from = requireNonEmptyText("threadRouteKey", "fromAgentId", fromAgentId);
  const to = requireNonEmptyText("threadRouteKey", "toAgentId", toAgentId);
  const topic = asText(topicId);
  return topic ? `${from}:${to}:${topic}` : `${from}:${to}`;
}
