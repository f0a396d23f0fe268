// The fake model's public types: what a request looks like to a script, the turns a script answers
// with, how scripts are matched, and what is recorded.

/** A content part of a message as sent (`{ type: "text", text }`, `{ type: "image_url", … }`, …). */
export interface FakeContentPart {
  readonly type: string;
  readonly text?: string;
  readonly [key: string]: unknown;
}

/** A tool call of an assistant message in the history, in OpenAI's shape. */
export interface FakeMessageToolCall {
  readonly id: string;
  readonly type: string;
  readonly function: { readonly name: string; readonly arguments: string };
}

/** A chat message as the client sent it (`system`, `developer`, `user`, `assistant`, `tool`). */
export interface FakeChatMessage {
  readonly role: string;
  readonly content?: string | readonly FakeContentPart[] | null;
  readonly name?: string;
  readonly tool_calls?: readonly FakeMessageToolCall[];
  readonly tool_call_id?: string;
  readonly [key: string]: unknown;
}

/** A tool the client offered (`tools[].function`). */
export interface FakeToolDefinition {
  readonly name: string;
  readonly description?: string;
  readonly parameters?: unknown;
}

/** A tool result the model is asked to continue from (a `tool` message after the last assistant one). */
export interface FakeToolResult {
  readonly toolCallId: string;
  /** The tool name, from the assistant tool call with that id (or the message's `name`). */
  readonly name: string | undefined;
  /** The result text (text parts joined). */
  readonly content: string;
}

/** A chat-completions request as a script sees it. */
export interface FakeModelRequest {
  /** 0-based arrival order among the chat-completions requests of this fake. */
  readonly index: number;
  /** From OpenClaw's `Runtime: … | agent=<id> | session=<key> | …` line; undefined without one. */
  readonly agentId: string | undefined;
  readonly sessionKey: string | undefined;
  readonly model: string;
  readonly stream: boolean;
  /** `stream_options.include_usage`: a usage chunk is sent before `[DONE]`. */
  readonly includeUsage: boolean;
  readonly messages: readonly FakeChatMessage[];
  readonly tools: readonly FakeToolDefinition[];
  readonly toolChoice: unknown;
  /**
   * Text of the last `user` message with text, without OpenClaw's internal-context blocks
   * (`<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>…`, sent as a trailing user message) and its Runtime line.
   * OpenClaw prefixes the user's text with a timestamp, e.g. `[Fri 2026-11-27 21:38 UTC] hi`.
   */
  readonly lastUserText: string | undefined;
  /** The `tool` messages after the last assistant message; empty when the last turn was not a tool call. */
  readonly toolResults: readonly FakeToolResult[];
  /** Request headers, names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body as sent. */
  readonly body: Readonly<Record<string, unknown>>;
}

/**
 * OpenClaw's reply sentinels: `NO_REPLY` (its silent token: nothing is delivered), `REPLY_SKIP` (ends a
 * sessions_send reply-back loop), `ANNOUNCE_SKIP` (suppresses a subagent announcement). `""` answers an
 * empty assistant message, which OpenClaw treats as a failed turn ("no visible assistant reply").
 */
export type FakeSilentToken = "NO_REPLY" | "REPLY_SKIP" | "ANNOUNCE_SKIP" | "";

interface TurnTiming {
  /** Milliseconds to wait before answering (before the status line, so also before any SSE chunk). */
  readonly delayMs?: number;
}

/** A turn that answers with text. */
export interface FakeTextTurn extends TurnTiming {
  readonly text: string;
}

/**
 * A tool call. OpenClaw's Tool Search (on by default) offers the model a compact set (tool_search,
 * tool_describe, tool_call, read, exec, ls, …); reach another tool through tool_call, e.g.
 * `{ name: "tool_call", arguments: { id: "sessions_send", args: { … } } }`. `request.tools` lists what
 * was offered.
 */
export interface FakeToolCallTurn extends TurnTiming {
  readonly toolCall: {
    readonly name: string;
    /** An object is JSON-encoded; a string is sent as is (e.g. to send malformed arguments). Default {}. */
    readonly arguments?: Readonly<Record<string, unknown>> | string;
    /** Default `call00001`, `call00002`, … (OpenClaw strips non-alphanumerics from tool-call ids). */
    readonly id?: string;
  };
  /** Text streamed before the tool call. */
  readonly text?: string;
}

/** A turn that answers with one of OpenClaw's silent tokens (nothing is delivered), or nothing. */
export interface FakeSilentTurn extends TurnTiming {
  readonly silent: true;
  /** Default `NO_REPLY`. */
  readonly token?: FakeSilentToken;
}

/** A turn that fails: an OpenAI error body with this HTTP status. */
export interface FakeErrorTurn extends TurnTiming {
  readonly error: {
    readonly status: number;
    readonly message: string;
    /** OpenAI's `error.type`; default by status (429: `rate_limit_exceeded`, 400: `invalid_request_error`, …). */
    readonly type?: string;
    readonly code?: string;
    /** Sent as the `Retry-After` header. */
    readonly retryAfterSeconds?: number;
  };
}

/** One model answer. */
export type FakeTurn = FakeTextTurn | FakeToolCallTurn | FakeSilentTurn | FakeErrorTurn;

/** A turn, or a function of the request that gives one (e.g. a text quoting `request.toolResults`). */
export type FakeTurnSource = FakeTurn | ((request: FakeModelRequest) => FakeTurn);

/**
 * A queue of turns, one taken per matching request (an exhausted queue no longer matches), or a
 * function answering every matching request (returning undefined passes the request on).
 */
export type FakeTurns = readonly FakeTurnSource[] | ((request: FakeModelRequest) => FakeTurn | undefined);

/** A session key, `{ prefix }` of a session key, or a predicate on it. */
export type FakeSessionMatch = string | { readonly prefix: string } | ((sessionKey: string) => boolean);

/** Who a script entry answers (an agent, a session, both or anyone) and with what turns. */
export interface FakeScriptEntry {
  /** Agent id; omitted: any agent, and requests without a Runtime line. */
  readonly agent?: string;
  /** Omitted: any session. Given: requests without a session key do not match. */
  readonly session?: FakeSessionMatch;
  readonly turns: FakeTurns;
}

/**
 * Entries, or a record of agent id → turns. The most specific matching entry answers (agent and session,
 * then session, then agent, then neither); among equally specific ones, the earliest listed.
 */
export type FakeModelScript = readonly FakeScriptEntry[] | Readonly<Record<string, FakeTurns>>;

/** What the fake answered. */
export type FakeModelAnswer =
  | { readonly kind: "text"; readonly text: string }
  | {
      readonly kind: "toolCall";
      readonly text: string;
      readonly toolCall: { readonly id: string; readonly name: string; readonly arguments: string };
    }
  | { readonly kind: "silent"; readonly text: FakeSilentToken }
  | { readonly kind: "error"; readonly status: number; readonly message: string }
  /** The request itself was refused (400 malformed, 404, 405, 413). */
  | { readonly kind: "rejected"; readonly status: number; readonly message: string };

/** A recorded request and its answer. Rejected requests have an empty model, messages and tools. */
export interface RecordedModelRequest extends FakeModelRequest {
  readonly answer: FakeModelAnswer;
  /** `script`: a script entry answered; `default`: none matched; `rejected`: a bad request. */
  readonly source: "script" | "default" | "rejected";
  readonly method: string;
  readonly path: string;
  readonly delayMs: number;
  /** Date.now() when the request was received. */
  readonly receivedAt: number;
}

/** Options of `startFakeModel`. */
export interface FakeModelOptions {
  /** 0 or omitted: any free port. */
  readonly port?: number;
  readonly script?: FakeModelScript;
  /** Model ids listed by GET /v1/models besides those already requested. Default ["fake-model"]. */
  readonly models?: readonly string[];
  /** The answer when no script entry matches. Default: text `"<agentId>: ok"` (`"unknown: ok"`). */
  readonly fallback?: (request: FakeModelRequest) => FakeTurn;
}

/** A running fake: point a provider's `baseUrl` at `baseUrl`. */
export interface FakeModel {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  /** Chat-completions requests in arrival order; optionally of one agent and/or session. */
  requests(filter?: { agentId?: string; sessionKey?: string }): RecordedModelRequest[];
  /** Replaces the whole script; queues start over. */
  setScript(script: FakeModelScript): void;
  /** Adds an entry that takes precedence over earlier entries of the same specificity. */
  script(agentId: string, turns: FakeTurns, options?: { session?: FakeSessionMatch }): void;
  /** Queued turns not yet taken, over all entries. */
  unusedTurns(): number;
  /**
   * Resolves with the first recorded request (already recorded or later) matching the predicate;
   * rejects after `timeoutMs` (default 5000) or when the fake closes.
   */
  waitForRequest(
    predicate: (request: RecordedModelRequest) => boolean,
    timeoutMs?: number,
  ): Promise<RecordedModelRequest>;
  close(): Promise<void>;
}
