import { readFile } from "node:fs/promises";

/**
 * BENCHMARK BASELINE ONLY: the O(N) lookup the conversation index replaces (the gateway's scan of the
 * event log on every send, without its scan limit). It reads the whole log and parses lines from the
 * end until an a2a.send/response/complete of the route turns up, so every lookup costs the file's
 * size. Nothing in the library calls it; `ConversationIndex.get` is the lookup. It is kept so the
 * benchmark measures the index against what it replaced.
 */
export async function scanConversationId(logFile: string, routeKey: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await readFile(logFile, "utf8");
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === "ENOENT") return undefined;
    throw error;
  }
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i];
    if (line === undefined || line === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // the gateway's scan skipped unparsable lines
    }
    if (typeof parsed !== "object" || parsed === null) continue;
    const event = parsed as { type?: unknown; routeKey?: unknown; conversationId?: unknown };
    if (
      (event.type === "a2a.send" || event.type === "a2a.response" || event.type === "a2a.complete") &&
      event.routeKey === routeKey &&
      typeof event.conversationId === "string"
    ) {
      return event.conversationId;
    }
  }
  return undefined;
}
