// OpenAI chat-completions answers: `chat.completion.chunk` SSE frames for a streamed request, a
// `chat.completion` object otherwise, and OpenAI's error JSON.
import type { FakeModelAnswer, FakeModelRequest } from "./types.js";

/** An answer with a message (not an error). */
export type MessageAnswer = Extract<FakeModelAnswer, { kind: "text" | "toolCall" | "silent" }>;

export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

export interface CompletionMeta {
  readonly id: string;
  /** Unix seconds. */
  readonly created: number;
  readonly model: string;
}

/** Characters per streamed content or arguments delta, so clients see text arrive in pieces. */
const DELTA_CHARS = 16;

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache",
  Connection: "keep-alive",
} as const;

export const SSE_DONE = "data: [DONE]\n\n";

export function sseFrame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** Rough token counts: 4 characters a token. */
export function usageOf(request: FakeModelRequest, answer: MessageAnswer): Usage {
  const prompt = Math.ceil(JSON.stringify(request.messages).length / 4);
  const out = answer.text.length + (answer.kind === "toolCall" ? answer.toolCall.arguments.length : 0);
  const completion = Math.ceil(out / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Splits on code points, so no delta ends inside a surrogate pair. */
function pieces(text: string): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += DELTA_CHARS) out.push(chars.slice(i, i + DELTA_CHARS).join(""));
  return out;
}

function finishReason(answer: MessageAnswer): "stop" | "tool_calls" {
  return answer.kind === "toolCall" ? "tool_calls" : "stop";
}

/**
 * The chunks of a streamed answer, as OpenAI sends them: the role delta (with the first content piece
 * or the tool call's id, type and name), content deltas, argument deltas, an empty delta with the
 * finish reason, then (when asked for) a usage chunk with no choices.
 */
export function completionChunks(
  answer: MessageAnswer,
  meta: CompletionMeta,
  usage: Usage | undefined,
): Array<Record<string, unknown>> {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    system_fingerprint: "fp_fake",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(usage ? { usage: null } : {}),
  });
  const chunks: Array<Record<string, unknown>> = [];
  const text = pieces(answer.text);
  if (answer.kind === "toolCall" && text.length === 0) {
    chunks.push(chunk({ role: "assistant", content: null, refusal: null }));
  } else {
    chunks.push(chunk({ role: "assistant", content: text[0] ?? "", refusal: null }));
    for (const piece of text.slice(1)) chunks.push(chunk({ content: piece }));
  }
  if (answer.kind === "toolCall") {
    const { id, name, arguments: args } = answer.toolCall;
    chunks.push(
      chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: "" } }] }),
    );
    for (const piece of pieces(args))
      chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  chunks.push(chunk({}, finishReason(answer)));
  if (usage) {
    chunks.push({
      id: meta.id,
      object: "chat.completion.chunk",
      created: meta.created,
      model: meta.model,
      system_fingerprint: "fp_fake",
      choices: [],
      usage,
    });
  }
  return chunks;
}

/** The `chat.completion` object of a non-streamed answer. */
export function completionObject(
  answer: MessageAnswer,
  meta: CompletionMeta,
  usage: Usage,
): Record<string, unknown> {
  const toolCalls =
    answer.kind === "toolCall"
      ? [
          {
            id: answer.toolCall.id,
            type: "function",
            function: { name: answer.toolCall.name, arguments: answer.toolCall.arguments },
          },
        ]
      : undefined;
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    system_fingerprint: "fp_fake",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: toolCalls && answer.text.length === 0 ? null : answer.text,
          refusal: null,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(answer),
      },
    ],
    usage,
  };
}

function defaultErrorType(status: number): string {
  if (status === 429) return "rate_limit_exceeded";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** OpenAI's error JSON: `{ error: { message, type, param, code } }`. */
export function errorBody(
  status: number,
  message: string,
  options: { type?: string | undefined; code?: string | undefined; param?: string | undefined } = {},
): Record<string, unknown> {
  return {
    error: {
      message,
      type: options.type ?? defaultErrorType(status),
      param: options.param ?? null,
      code: options.code ?? (status === 429 ? "rate_limit_exceeded" : null),
    },
  };
}
