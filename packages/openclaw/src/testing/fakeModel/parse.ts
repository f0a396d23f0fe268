// Reads a chat-completions body into the request a script sees, or names what is wrong with it, and
// reads the agent id and session key from OpenClaw's Runtime line.
//
// OpenClaw's system prompt ends with `Runtime: name=<name> | agent=<id> | session=<key> | … | model=…`
// (name= only when the agent's display name differs from its id; a cron run's `:run:<id>` suffix is cut
// from the key). Its openai-completions transport moves that line out of the system message to the end
// of the first user message ("\n\n" + line) unless the provider uses Anthropic cache control, so it is
// looked for in system/developer messages first, then in user messages.
import type { FakeChatMessage, FakeModelRequest, FakeToolDefinition, FakeToolResult } from "./types.js";

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** The request minus what the server adds (index, headers). */
export type ParsedChatRequest = Omit<FakeModelRequest, "index" | "headers">;

const RUNTIME_LINE = /^Runtime: (.*)$/m;

/** The agent id and session key of a `Runtime: …` line in `text`; undefined without such a line. */
export function parseRuntimeLine(text: string): { agentId?: string; sessionKey?: string } | undefined {
  const line = RUNTIME_LINE.exec(text)?.[1];
  if (line === undefined) return undefined;
  const fields = line.split(" | ");
  // The display name comes first and may itself contain " | agent=": the agent field is the last one.
  let agentAt = -1;
  fields.forEach((field, i) => {
    if (field.startsWith("agent=")) agentAt = i;
  });
  const agentId = agentAt >= 0 ? fields[agentAt]?.slice("agent=".length) : undefined;
  const session = fields.slice(agentAt + 1).find((field) => field.startsWith("session="));
  const sessionKey = session?.slice("session=".length);
  return {
    ...(agentId ? { agentId } : {}),
    ...(sessionKey ? { sessionKey } : {}),
  };
}

export function messageText(message: FakeChatMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part.text === "string" ? part.text : ""))
    .filter((text) => text.length > 0)
    .join("\n");
}

const INTERNAL_CONTEXT = /<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>[\s\S]*?<<<END_OPENCLAW_INTERNAL_CONTEXT>>>/g;

/** A user message's own text: without OpenClaw's internal-context blocks and Runtime line. */
function userText(message: FakeChatMessage): string {
  return messageText(message)
    .replace(INTERNAL_CONTEXT, "")
    .replace(/^Runtime: .*$/gm, "")
    .trim();
}

function runtimeIdentity(messages: readonly FakeChatMessage[]): {
  agentId: string | undefined;
  sessionKey: string | undefined;
} {
  const system = messages.filter((m) => m.role === "system" || m.role === "developer");
  const users = messages.filter((m) => m.role === "user");
  for (const message of [...system, ...users]) {
    const found = parseRuntimeLine(messageText(message));
    if (found) return { agentId: found.agentId, sessionKey: found.sessionKey };
  }
  return { agentId: undefined, sessionKey: undefined };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkMessage(value: unknown, at: string): string | undefined {
  if (!isRecord(value)) return `\`${at}\` must be an object`;
  if (typeof value.role !== "string" || value.role.length === 0) return `\`${at}.role\` must be a string`;
  const { content } = value;
  if (content !== undefined && content !== null && typeof content !== "string") {
    if (!Array.isArray(content)) {
      return `\`${at}.content\` must be a string, an array of content parts or null`;
    }
    const bad = content.findIndex((part) => !isRecord(part) || typeof part.type !== "string");
    if (bad >= 0) return `\`${at}.content[${bad}]\` must be an object with a string \`type\``;
  }
  if (value.tool_calls !== undefined) {
    if (!Array.isArray(value.tool_calls)) return `\`${at}.tool_calls\` must be an array`;
    const bad = value.tool_calls.findIndex(
      (call) =>
        !isRecord(call) ||
        typeof call.id !== "string" ||
        !isRecord(call.function) ||
        typeof call.function.name !== "string" ||
        typeof call.function.arguments !== "string",
    );
    if (bad >= 0) {
      return `\`${at}.tool_calls[${bad}]\` must have a string id and function { name, arguments } strings`;
    }
  }
  if (value.role === "tool" && typeof value.tool_call_id !== "string") {
    return `\`${at}.tool_call_id\` must be a string in a tool message`;
  }
  return undefined;
}

function readTools(value: unknown): Parsed<FakeToolDefinition[]> {
  if (value === undefined || value === null) return { ok: true, value: [] };
  if (!Array.isArray(value)) return { ok: false, message: "`tools` must be an array" };
  const tools: FakeToolDefinition[] = [];
  for (const [i, tool] of value.entries()) {
    const fn = isRecord(tool) ? tool.function : undefined;
    if (!isRecord(tool) || tool.type !== "function" || !isRecord(fn) || typeof fn.name !== "string") {
      return { ok: false, message: `\`tools[${i}]\` must be { type: "function", function: { name, … } }` };
    }
    tools.push({
      name: fn.name,
      ...(typeof fn.description === "string" ? { description: fn.description } : {}),
      ...(fn.parameters !== undefined ? { parameters: fn.parameters } : {}),
    });
  }
  return { ok: true, value: tools };
}

function toolResults(messages: readonly FakeChatMessage[]): FakeToolResult[] {
  let lastAssistant = -1;
  messages.forEach((m, i) => {
    if (m.role === "assistant") lastAssistant = i;
  });
  const names = new Map<string, string>();
  for (const call of messages[lastAssistant]?.tool_calls ?? []) names.set(call.id, call.function.name);
  return messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === "tool")
    .map((m) => {
      const toolCallId = m.tool_call_id ?? "";
      return { toolCallId, name: names.get(toolCallId) ?? m.name, content: messageText(m) };
    });
}

/** Validates a parsed JSON body as a chat-completions request. */
export function readChatRequest(body: unknown): Parsed<ParsedChatRequest> {
  if (!isRecord(body)) return { ok: false, message: "the request body must be a JSON object" };
  if (typeof body.model !== "string" || body.model.length === 0) {
    return { ok: false, message: "`model` must be a non-empty string" };
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return { ok: false, message: "`messages` must be a non-empty array" };
  }
  for (const [i, message] of body.messages.entries()) {
    const problem = checkMessage(message, `messages[${i}]`);
    if (problem) return { ok: false, message: problem };
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") {
    return { ok: false, message: "`stream` must be a boolean" };
  }
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !isRecord(streamOptions)) {
    return { ok: false, message: "`stream_options` must be an object" };
  }
  const tools = readTools(body.tools);
  if (!tools.ok) return tools;
  // Checked above: every message is an object with a string role and well-formed content and tool calls.
  const messages = body.messages as FakeChatMessage[];
  const stream = body.stream === true;
  const userTexts = messages
    .filter((m) => m.role === "user")
    .map(userText)
    .filter((text) => text.length > 0);
  return {
    ok: true,
    value: {
      ...runtimeIdentity(messages),
      model: body.model,
      stream,
      includeUsage: stream && isRecord(streamOptions) && streamOptions.include_usage === true,
      messages,
      tools: tools.value,
      toolChoice: body.tool_choice,
      lastUserText: userTexts[userTexts.length - 1],
      toolResults: toolResults(messages),
      body,
    },
  };
}
