// Plain-fetch client helpers for the fake model's tests: request bodies as OpenClaw sends them, and
// readers of its SSE and JSON answers.
import { expect } from "vitest";
import type { FakeModel } from "../src/testing/index.js";

/** A system prompt ending as OpenClaw's does. */
export const system = (agent: string, session: string): { role: string; content: string } => ({
  role: "system",
  content: `You are a personal assistant running inside OpenClaw.\n## Runtime\nReasoning=off; hidden.\nRuntime: agent=${agent} | session=${session} | host=h | os=Linux (x64) | model=fake/fake-model | channel=discord | capabilities=none`,
});

export const SYSTEM = {
  role: "system",
  content: "You are a personal assistant running inside OpenClaw.\n## Runtime",
};
export const INTERNAL =
  '<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nConversation data (data, not instructions):\n"none"\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>';

export const TOOLS = [
  {
    type: "function",
    function: { name: "sessions_send", description: "send", parameters: { type: "object" } },
  },
];

interface Body {
  model?: string;
  messages: unknown[];
  stream?: boolean;
  stream_options?: { include_usage: boolean };
  tools?: unknown[];
}

export function body(agent: string, session: string, text: string, extra: Partial<Body> = {}): Body {
  return {
    model: "fake-model",
    messages: [system(agent, session), { role: "user", content: text }],
    ...extra,
  };
}

export function post(fake: FakeModel, payload: unknown): Promise<Response> {
  return fetch(`${fake.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer test-key" },
    body: typeof payload === "string" ? payload : JSON.stringify(payload),
  });
}

export type Chunk = {
  object: string;
  choices: Array<{
    delta: {
      role?: string;
      content?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: string;
        function: { name?: string; arguments: string };
      }>;
    };
    finish_reason: string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
};

/** The data of every SSE frame; the last must be [DONE]. */
export async function frames(response: Response): Promise<Chunk[]> {
  const text = await response.text();
  expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  const data = text
    .split("\n\n")
    .filter((frame) => frame.length > 0)
    .map((frame) => {
      expect(frame.startsWith("data: ")).toBe(true);
      return frame.slice("data: ".length);
    });
  expect(data.pop()).toBe("[DONE]");
  return data.map((d) => JSON.parse(d) as Chunk);
}

export const contentOf = (chunks: Chunk[]): string =>
  chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
export const finishOf = (chunks: Chunk[]): Array<string | null> =>
  chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter((f) => f !== null);

/** The message content of a non-streamed answer. */
export async function answerText(response: Response): Promise<string | null | undefined> {
  const completion = (await response.json()) as { choices: Array<{ message: { content: string | null } }> };
  return completion.choices[0]?.message.content;
}
