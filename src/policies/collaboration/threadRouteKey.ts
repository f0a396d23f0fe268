import { asText, requireNonEmptyText } from "../InvalidInputError.js";

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
