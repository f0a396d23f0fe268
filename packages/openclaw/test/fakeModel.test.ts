import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeModel,
  type FakeModelOptions,
  parseRuntimeLine,
  startFakeModel,
} from "../src/testing/index.js";
import {
  answerText,
  body,
  contentOf,
  finishOf,
  frames,
  INTERNAL,
  post,
  SYSTEM,
  TOOLS,
} from "./fakeModelClient.js";

const fakes: FakeModel[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function start(options?: FakeModelOptions): Promise<FakeModel> {
  const fake = await startFakeModel(options);
  fakes.push(fake);
  return fake;
}

describe("startFakeModel", () => {
  it("streams a text answer as chat.completion.chunk frames, with a usage chunk when asked, and records it", async () => {
    const text = "Hello from the fake model — a text long enough to come in several deltas 🙂.";
    const fake = await start({ script: { eden: [{ text }] } });
    expect(fake.baseUrl).toBe(`http://127.0.0.1:${fake.port}/v1`);
    const response = await post(
      fake,
      body("eden", "agent:eden:discord:channel:1", "hi", {
        stream: true,
        stream_options: { include_usage: true },
        tools: TOOLS,
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const chunks = await frames(response);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant");
    expect(chunks.length).toBeGreaterThan(4);
    expect(contentOf(chunks)).toBe(text);
    expect(finishOf(chunks)).toEqual(["stop"]);
    const last = chunks[chunks.length - 1];
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.total_tokens).toBeGreaterThan(0);

    const [recorded] = fake.requests();
    expect(recorded).toMatchObject({
      index: 0,
      agentId: "eden",
      sessionKey: "agent:eden:discord:channel:1",
      model: "fake-model",
      stream: true,
      includeUsage: true,
      lastUserText: "hi",
      source: "script",
      answer: { kind: "text", text },
    });
    expect(recorded?.tools.map((t) => t.name)).toEqual(["sessions_send"]);
    expect(recorded?.headers.authorization).toBe("Bearer test-key");
  });

  it("answers a non-streamed request with a chat.completion object; no usage chunk when not asked", async () => {
    const fake = await start({ script: { eden: [{ text: "plain" }, { text: "streamed" }] } });
    const response = await post(fake, body("eden", "s1", "hi"));
    expect(response.headers.get("content-type")).toBe("application/json");
    const completion = (await response.json()) as Record<string, unknown>;
    expect(completion).toMatchObject({
      object: "chat.completion",
      model: "fake-model",
      choices: [{ index: 0, message: { role: "assistant", content: "plain" }, finish_reason: "stop" }],
    });
    expect((completion.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(0);
    const chunks = await frames(await post(fake, body("eden", "s1", "again", { stream: true })));
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(contentOf(chunks)).toBe("streamed");
  });

  it("calls a tool, then answers from the tool result the next request carries", async () => {
    const fake = await start({
      script: {
        eden: [
          {
            text: "Let me ask.",
            toolCall: {
              name: "sessions_send",
              arguments: { sessionKey: "agent:ops:main", message: "status?" },
            },
          },
          (request) => ({ text: `ops says: ${request.toolResults[0]?.content ?? "nothing"}` }),
        ],
      },
    });
    const first = body("eden", "s1", "ask ops", { stream: true, tools: TOOLS });
    const chunks = await frames(await post(fake, first));
    expect(contentOf(chunks)).toBe("Let me ask.");
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({
      index: 0,
      id: "call00001",
      type: "function",
      function: { name: "sessions_send", arguments: "" },
    });
    expect(calls.every((c) => c.index === 0)).toBe(true);
    expect(JSON.parse(calls.map((c) => c.function.arguments).join(""))).toEqual({
      sessionKey: "agent:ops:main",
      message: "status?",
    });
    expect(finishOf(chunks)).toEqual(["tool_calls"]);

    const id = calls[0]?.id ?? "";
    const second = {
      ...first,
      messages: [
        ...first.messages,
        {
          role: "assistant",
          content: "Let me ask.",
          tool_calls: [{ id, type: "function", function: { name: "sessions_send", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: id, content: "all green" },
      ],
    };
    expect(contentOf(await frames(await post(fake, second)))).toBe("ops says: all green");
    expect(fake.requests()[1]?.toolResults).toEqual([
      { toolCallId: id, name: "sessions_send", content: "all green" },
    ]);

    // Non-streamed, a tool call without text has null content.
    fake.script("eden", [{ toolCall: { name: "sessions_send", id: "call_x", arguments: "{bad json" } }]);
    const completion = (await (await post(fake, body("eden", "s1", "again"))).json()) as {
      choices: Array<{ message: Record<string, unknown>; finish_reason: string }>;
    };
    expect(completion.choices[0]).toMatchObject({
      message: {
        content: null,
        tool_calls: [
          { id: "call_x", type: "function", function: { name: "sessions_send", arguments: "{bad json" } },
        ],
      },
      finish_reason: "tool_calls",
    });
  });

  it("answers per agent and per session: exact key, prefix, predicate; the default otherwise", async () => {
    const fake = await start({
      script: [
        { agent: "eden", turns: [{ text: "eden any 1" }, { text: "eden any 2" }] },
        { agent: "eden", session: "agent:eden:discord:channel:9", turns: () => ({ text: "eden in 9" }) },
        { session: { prefix: "agent:ops:cron:" }, turns: () => ({ text: "a cron run" }) },
        { agent: "ops", session: (key) => key.endsWith(":thread:7"), turns: [{ text: "ops thread 7" }] },
      ],
    });
    const ask = async (agent: string, session: string) =>
      answerText(await post(fake, body(agent, session, "hi")));
    expect(await ask("eden", "agent:eden:discord:channel:9")).toBe("eden in 9");
    expect(await ask("eden", "agent:eden:discord:channel:1")).toBe("eden any 1");
    expect(await ask("ops", "agent:ops:cron:daily")).toBe("a cron run");
    expect(await ask("ops", "agent:ops:discord:channel:1:thread:7")).toBe("ops thread 7");
    // The thread queue is used up: the default answers.
    expect(await ask("ops", "agent:ops:discord:channel:1:thread:7")).toBe("ops: ok");
    expect(fake.unusedTurns()).toBe(1);

    // An entry added later goes first among equally specific ones; used up, the older one answers again.
    fake.script("eden", [{ text: "eden new" }]);
    expect(await ask("eden", "agent:eden:main")).toBe("eden new");
    expect(await ask("eden", "agent:eden:main")).toBe("eden any 2");
    expect(await ask("eden", "agent:eden:main")).toBe("eden: ok");

    // Without a Runtime line there is no agent: only entries without an agent or session match.
    const anonymous = await post(fake, { model: "m", messages: [{ role: "user", content: "hello" }] });
    expect(await answerText(anonymous)).toBe("unknown: ok");
    expect(fake.requests({ agentId: "ops" }).map((r) => [r.sessionKey, r.source])).toEqual([
      ["agent:ops:cron:daily", "script"],
      ["agent:ops:discord:channel:1:thread:7", "script"],
      ["agent:ops:discord:channel:1:thread:7", "default"],
    ]);
    expect(fake.requests({ sessionKey: "agent:eden:main" })).toHaveLength(3);

    fake.setScript({ eden: [{ text: "fresh" }] });
    expect(await ask("eden", "agent:eden:discord:channel:9")).toBe("fresh");
  });

  it("finds the Runtime line where OpenClaw moves it: the end of the first user message", async () => {
    const fake = await start();
    // As OpenClaw sends it: the Runtime line appended to the first user message, internal context last.
    const context = { role: "user", content: [{ type: "text", text: INTERNAL }] };
    const first = {
      role: "user",
      content: "[Fri 2026-11-27 21:38 UTC] hi\n\nRuntime: agent=ops | session=agent:ops:main | host=h",
    };
    await post(fake, { model: "fake-model", messages: [SYSTEM, first, context] });
    const later = [
      { role: "assistant", content: "hello" },
      { role: "user", content: [{ type: "text", text: "and now?" }] },
    ];
    await post(fake, { model: "fake-model", messages: [SYSTEM, first, ...later, context] });
    expect(fake.requests().map((r) => [r.agentId, r.sessionKey, r.lastUserText])).toEqual([
      ["ops", "agent:ops:main", "[Fri 2026-11-27 21:38 UTC] hi"],
      ["ops", "agent:ops:main", "and now?"],
    ]);

    expect(
      parseRuntimeLine(
        "x\nRuntime: name=Ops | agent=Bot | agent=ops | session=agent:ops:cron:job | os=Linux",
      ),
    ).toEqual({
      agentId: "ops",
      sessionKey: "agent:ops:cron:job",
    });
    expect(parseRuntimeLine("Runtime: agent=main | host=h")).toEqual({ agentId: "main" });
    expect(parseRuntimeLine("no runtime here; Runtime: agent=x")).toBeUndefined();
  });

  it("answers an error turn with its HTTP status, OpenAI's error JSON and Retry-After, streamed or not", async () => {
    const fake = await start({
      script: {
        eden: [
          { error: { status: 429, message: "rate limit reached, retry after 2s", retryAfterSeconds: 2 } },
          { error: { status: 503, message: "overloaded", type: "server_error", code: "overloaded" } },
        ],
      },
    });
    const limited = await post(fake, body("eden", "s", "hi", { stream: true }));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(await limited.json()).toEqual({
      error: {
        message: "rate limit reached, retry after 2s",
        type: "rate_limit_exceeded",
        param: null,
        code: "rate_limit_exceeded",
      },
    });
    const down = await post(fake, body("eden", "s", "hi"));
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({
      error: { message: "overloaded", type: "server_error", param: null, code: "overloaded" },
    });
    expect(fake.requests().map((r) => r.answer)).toEqual([
      { kind: "error", status: 429, message: "rate limit reached, retry after 2s" },
      { kind: "error", status: 503, message: "overloaded" },
    ]);
  });

  it("stays silent: NO_REPLY by default, another OpenClaw sentinel, or an empty answer", async () => {
    const fake = await start({
      script: {
        eden: [{ silent: true }, { silent: true, token: "REPLY_SKIP" }, { silent: true, token: "" }],
      },
    });
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const chunks = await frames(await post(fake, body("eden", "s", "hi", { stream: true })));
      expect(finishOf(chunks)).toEqual(["stop"]);
      texts.push(contentOf(chunks));
    }
    expect(texts).toEqual(["NO_REPLY", "REPLY_SKIP", ""]);
    expect(fake.requests().map((r) => r.answer)).toEqual([
      { kind: "silent", text: "NO_REPLY" },
      { kind: "silent", text: "REPLY_SKIP" },
      { kind: "silent", text: "" },
    ]);
  });

  it("waits for a matching request, before a delayed answer is sent; times out and closes with clear errors", async () => {
    const fake = await start({ script: { eden: [{ text: "late", delayMs: 150 }] } });
    const seen = fake.waitForRequest((r) => r.agentId === "eden", 2000);
    const startedAt = Date.now();
    const response = post(fake, body("eden", "agent:eden:main", "hi"));
    const request = await seen;
    expect(request).toMatchObject({
      sessionKey: "agent:eden:main",
      delayMs: 150,
      answer: { kind: "text", text: "late" },
    });
    expect(await answerText(await response)).toBe("late");
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(140);
    // Already recorded requests count.
    await expect(fake.waitForRequest((r) => r.agentId === "eden", 10)).resolves.toBe(request);
    await expect(fake.waitForRequest((r) => r.agentId === "nobody", 30)).rejects.toThrow(
      /no matching request within 30 ms; 1 recorded \(last: #0 eden agent:eden:main → text\)/,
    );
    const pending = fake.waitForRequest(() => false, 5000);
    await fake.close();
    await expect(pending).rejects.toThrow("fake model closed");
  });

  it("refuses malformed requests with 400 naming the problem, records them, and keeps serving", async () => {
    const fake = await start();
    const cases: Array<[unknown, string]> = [
      ["{not json", "the request body is not valid JSON"],
      ["", "the request body is empty"],
      [[1, 2], "the request body must be a JSON object"],
      [{ messages: [{ role: "user", content: "x" }] }, "`model` must be a non-empty string"],
      [{ model: "m", messages: [] }, "`messages` must be a non-empty array"],
      [{ model: "m", messages: [{ content: "x" }] }, "`messages[0].role` must be a string"],
      [{ model: "m", messages: [{ role: "user", content: 5 }] }, "`messages[0].content` must be a string"],
      [
        { model: "m", messages: [{ role: "tool", content: "x" }] },
        "`messages[0].tool_call_id` must be a string",
      ],
      [
        { model: "m", messages: [{ role: "user", content: "x" }], stream: "yes" },
        "`stream` must be a boolean",
      ],
      [
        { model: "m", messages: [{ role: "user", content: "x" }], tools: [{ type: "function" }] },
        "`tools[0]` must be",
      ],
    ];
    for (const [payload, problem] of cases) {
      const response = await post(fake, payload);
      expect(response.status).toBe(400);
      const error = ((await response.json()) as { error: { message: string; type: string } }).error;
      expect(error.message).toContain(problem);
      expect(error.type).toBe("invalid_request_error");
    }
    expect(fake.requests().every((r) => r.source === "rejected" && r.answer.kind === "rejected")).toBe(true);
    expect(fake.requests()).toHaveLength(cases.length);

    const get = await fetch(`${fake.baseUrl}/chat/completions`);
    expect(get.status).toBe(405);
    const unknown = await fetch(`${fake.baseUrl}/completions`, { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain(
      "Unknown request URL: POST /v1/completions",
    );
    const ok = await post(fake, body("eden", "s", "still there?"));
    expect(ok.status).toBe(200);
  });

  it("turns a throwing or malformed script function into a 500 and rejects a malformed script at once", async () => {
    const fake = await start({
      script: [
        {
          agent: "a",
          turns: [
            () => {
              throw new Error("boom");
            },
          ],
        },
        { agent: "b", turns: () => ({ nothing: true }) as never },
      ],
    });
    const a = await post(fake, body("a", "s", "hi"));
    expect(a.status).toBe(500);
    expect(((await a.json()) as { error: { message: string } }).error.message).toBe(
      "fake model script failed: boom",
    );
    const b = await post(fake, body("b", "s", "hi"));
    expect(((await b.json()) as { error: { message: string } }).error.message).toContain(
      "agent b: a turn needs `text`, `toolCall`, `silent` or `error`",
    );
    expect(() => fake.setScript({ a: [{ error: { status: 200, message: "x" } }] })).toThrow(
      "fake model script: agent a turn 0: `error.status` must be an HTTP error status (400-599)",
    );
  });

  it("lists its models on GET /v1/models, the requested ones too", async () => {
    const fake = await start({ models: ["fake-model"] });
    await post(fake, { ...body("eden", "s", "hi"), model: "other-model" });
    const list = (await (await fetch(`${fake.baseUrl}/models`)).json()) as {
      object: string;
      data: Array<{ id: string }>;
    };
    expect(list.object).toBe("list");
    expect(list.data.map((m) => m.id)).toEqual(["fake-model", "other-model"]);
    expect(await (await fetch(`${fake.baseUrl}/models/other-model`)).json()).toMatchObject({
      id: "other-model",
      object: "model",
    });
    expect((await fetch(`${fake.baseUrl}/models/missing`)).status).toBe(404);
  });
});
