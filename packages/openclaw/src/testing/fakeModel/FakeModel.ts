// A fake OpenAI-compatible model for tests (node:http, 127.0.0.1 only): what OpenClaw's
// `openai-completions` provider api calls.
//
// Configure OpenClaw with `models.providers.fake = { baseUrl: fake.baseUrl, api: "openai-completions",
// apiKey: "<any non-empty>", models: [{ id: "fake-model", … }] }`. OpenClaw (openai SDK, maxRetries 0)
// always POSTs `<baseUrl>/chat/completions` with `stream: true`, and for a 127.0.0.1 base URL also
// `stream_options: { include_usage: true }`, `tools` with `tool_choice: "auto"`, `max_completion_tokens`,
// no `store`, and the system prompt as a `system` message. It reads SSE `chat.completion.chunk` frames
// and needs a `finish_reason` (`stop`, or `tool_calls` after `tool_calls` deltas: index, id, type,
// function name and arguments); an error status is read from OpenAI's error JSON and `Retry-After`.
// GET /v1/models is only its reachability probe for local providers (cron preflight).
//
// Each request is matched to a script entry by the agent id and session key of OpenClaw's Runtime line
// (see parse.ts), answered with the entry's next turn, and recorded with that answer.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { readChatRequest } from "./parse.js";
import { answerOf, ScriptBook, turnProblem } from "./script.js";
import {
  completionChunks,
  completionObject,
  errorBody,
  SSE_DONE,
  SSE_HEADERS,
  sseFrame,
  usageOf,
} from "./sse.js";
import type {
  FakeModel,
  FakeModelAnswer,
  FakeModelOptions,
  FakeModelRequest,
  FakeTurn,
  RecordedModelRequest,
} from "./types.js";

/** Answers with `body` as JSON. */
function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const CHAT_PATH = "/v1/chat/completions";
const MODELS_PATH = "/v1/models";

interface Waiter {
  readonly predicate: (request: RecordedModelRequest) => boolean;
  readonly resolve: (request: RecordedModelRequest) => void;
  readonly reject: (error: Error) => void;
  readonly done: () => void;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** The body as text, or undefined when it exceeds MAX_BODY_BYTES (the rest is read and dropped). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function modelObject(id: string): Record<string, unknown> {
  return { id, object: "model", created: 0, owned_by: "fake" };
}

/** Starts the fake on 127.0.0.1 (any free port unless `port` is given). */
export async function startFakeModel(options: FakeModelOptions = {}): Promise<FakeModel> {
  const book = new ScriptBook();
  if (options.script) book.set(options.script);
  const fallback =
    options.fallback ?? ((request: FakeModelRequest) => ({ text: `${request.agentId ?? "unknown"}: ok` }));
  const models = new Set(options.models ?? ["fake-model"]);
  const recorded: RecordedModelRequest[] = [];
  const waiters = new Set<Waiter>();
  const closing = new AbortController();
  let closed = false;
  let toolCalls = 0;

  const record = (request: RecordedModelRequest): void => {
    recorded.push(request);
    for (const waiter of [...waiters]) {
      try {
        if (!waiter.predicate(request)) continue;
        waiter.done();
        waiter.resolve(request);
      } catch (error) {
        waiter.done();
        waiter.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
  };

  const pickTurn = (request: FakeModelRequest): { turn: FakeTurn; source: "script" | "default" } => {
    try {
      const scripted = book.take(request);
      if (scripted) return { turn: scripted, source: "script" };
    } catch (error) {
      return {
        turn: { error: { status: 500, message: `fake model script failed: ${message(error)}` } },
        source: "script",
      };
    }
    try {
      const turn = fallback(request);
      const problem = turnProblem(turn);
      if (problem) throw new Error(problem);
      return { turn, source: "default" };
    } catch (error) {
      return {
        turn: { error: { status: 500, message: `fake model fallback failed: ${message(error)}` } },
        source: "default",
      };
    }
  };

  const answerModels = (res: ServerResponse, method: string, path: string): void => {
    if (method !== "GET") {
      json(res, 405, errorBody(405, `${method} ${path} is not allowed; use GET`));
    } else if (path === MODELS_PATH) {
      json(res, 200, { object: "list", data: [...models].map(modelObject) });
    } else {
      const raw = path.slice(MODELS_PATH.length + 1);
      let id = raw;
      try {
        id = decodeURIComponent(raw);
      } catch {
        // a malformed escape: look the raw id up
      }
      if (models.has(id)) json(res, 200, modelObject(id));
      else json(res, 404, errorBody(404, `The model '${id}' does not exist`, { code: "model_not_found" }));
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const receivedAt = Date.now();
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const method = (req.method ?? "GET").toUpperCase();
    if (path === MODELS_PATH || path.startsWith(`${MODELS_PATH}/`)) {
      req.resume();
      answerModels(res, method, path);
      return;
    }
    if (path !== CHAT_PATH) {
      req.resume();
      const known = `The fake model answers POST ${CHAT_PATH} and GET ${MODELS_PATH}.`;
      json(res, 404, errorBody(404, `Unknown request URL: ${method} ${url.pathname}. ${known}`));
      return;
    }
    const headers = headersOf(req);
    const reject = (status: number, reason: string, body: Readonly<Record<string, unknown>> = {}): void => {
      const answer: FakeModelAnswer = { kind: "rejected", status, message: reason };
      record({
        index: recorded.length,
        agentId: undefined,
        sessionKey: undefined,
        model: "",
        stream: false,
        includeUsage: false,
        messages: [],
        tools: [],
        toolChoice: undefined,
        lastUserText: undefined,
        toolResults: [],
        headers,
        body,
        answer,
        source: "rejected",
        method,
        path,
        delayMs: 0,
        receivedAt,
      });
      json(res, status, errorBody(status, reason));
    };
    if (method !== "POST") {
      req.resume();
      reject(405, `${method} ${CHAT_PATH} is not allowed; use POST`);
      return;
    }
    const raw = await readBody(req);
    if (raw === undefined) {
      reject(413, `the request body exceeds ${MAX_BODY_BYTES} bytes`);
      return;
    }
    if (raw.trim().length === 0) {
      reject(400, "the request body is empty; send a JSON chat-completions request");
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (error) {
      reject(400, `the request body is not valid JSON: ${message(error)}`);
      return;
    }
    const parsed = readChatRequest(body);
    if (!parsed.ok) {
      const rawBody = typeof body === "object" && body !== null && !Array.isArray(body) ? body : {};
      reject(400, parsed.message, rawBody as Record<string, unknown>);
      return;
    }
    const request: FakeModelRequest = { index: recorded.length, headers, ...parsed.value };
    models.add(request.model);
    const { turn, source } = pickTurn(request);
    // Alphanumeric and 9 characters: OpenClaw's tool-call id sanitizing leaves such ids unchanged.
    const answer = answerOf(turn, () => `call${String(++toolCalls).padStart(5, "0")}`);
    const delayMs = turn.delayMs ?? 0;
    record({ ...request, answer, source, method, path, delayMs, receivedAt });
    if (delayMs > 0) {
      try {
        await sleep(delayMs, undefined, { signal: closing.signal });
      } catch {
        res.destroy();
        return;
      }
    }
    if (res.destroyed) return;
    if (answer.kind === "error" || answer.kind === "rejected") {
      const error = "error" in turn ? turn.error : undefined;
      const retry = error?.retryAfterSeconds;
      json(
        res,
        answer.status,
        errorBody(answer.status, answer.message, { type: error?.type, code: error?.code }),
        retry === undefined ? {} : { "Retry-After": String(retry) },
      );
      return;
    }
    const meta = {
      id: `chatcmpl-fake-${request.index + 1}`,
      created: Math.floor(receivedAt / 1000),
      model: request.model,
    };
    const usage = usageOf(request, answer);
    if (!request.stream) {
      json(res, 200, completionObject(answer, meta, usage));
      return;
    }
    res.writeHead(200, SSE_HEADERS);
    for (const chunk of completionChunks(answer, meta, request.includeUsage ? usage : undefined)) {
      res.write(sseFrame(chunk));
    }
    res.end(SSE_DONE);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else json(res, 500, errorBody(500, `fake model failed: ${message(error)}`));
    });
  });
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests: (filter) =>
      recorded.filter(
        (r) =>
          (filter?.agentId === undefined || r.agentId === filter.agentId) &&
          (filter?.sessionKey === undefined || r.sessionKey === filter.sessionKey),
      ),
    setScript: (script) => book.set(script),
    script: (agentId, turns, scriptOptions) =>
      book.add({
        agent: agentId,
        turns,
        ...(scriptOptions?.session !== undefined ? { session: scriptOptions.session } : {}),
      }),
    unusedTurns: () => book.unused(),
    waitForRequest: (predicate, timeoutMs = 5000) =>
      new Promise<RecordedModelRequest>((resolve, reject) => {
        try {
          const found = recorded.find(predicate);
          if (found) return resolve(found);
        } catch (error) {
          return reject(error instanceof Error ? error : new Error(String(error)));
        }
        if (closed) return reject(new Error("fake model is closed"));
        const timer = setTimeout(() => {
          waiter.done();
          const seen = recorded
            .slice(-10)
            .map((r) => `#${r.index} ${r.agentId ?? "?"} ${r.sessionKey ?? "?"} → ${r.answer.kind}`);
          reject(
            new Error(
              `fake model: no matching request within ${timeoutMs} ms; ${recorded.length} recorded` +
                (seen.length > 0 ? ` (last: ${seen.join("; ")})` : ""),
            ),
          );
        }, timeoutMs);
        const waiter: Waiter = {
          predicate,
          resolve,
          reject,
          done: () => {
            clearTimeout(timer);
            waiters.delete(waiter);
          },
        };
        waiters.add(waiter);
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      closing.abort();
      for (const waiter of [...waiters]) {
        waiter.done();
        waiter.reject(new Error("fake model closed while waiting for a request"));
      }
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
