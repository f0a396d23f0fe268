// Picks the turn that answers a request: the most specific matching script entry that still has one.
import type {
  FakeModelAnswer,
  FakeModelRequest,
  FakeModelScript,
  FakeScriptEntry,
  FakeSessionMatch,
  FakeSilentToken,
  FakeTurn,
  FakeTurns,
} from "./types.js";

interface Slot {
  readonly entry: FakeScriptEntry;
  /** 3 agent and session, 2 session, 1 agent, 0 neither. */
  readonly rank: number;
  /** Lower first among equal ranks. */
  readonly priority: number;
  /** Next queued turn (array entries). */
  cursor: number;
}

const SILENT_TOKENS: ReadonlySet<string> = new Set(["NO_REPLY", "REPLY_SKIP", "ANNOUNCE_SKIP", ""]);

/** What is wrong with a turn, or undefined. */
export function turnProblem(turn: unknown): string | undefined {
  if (typeof turn !== "object" || turn === null) return "a turn must be an object";
  const t = turn as Record<string, unknown>;
  if (t.delayMs !== undefined && !(typeof t.delayMs === "number" && t.delayMs >= 0 && t.delayMs < Infinity)) {
    return "`delayMs` must be a finite number ≥ 0";
  }
  if ("error" in t) {
    const e = t.error as Record<string, unknown> | null;
    const status = e?.status;
    if (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 599) {
      return "`error.status` must be an HTTP error status (400-599)";
    }
    return typeof e?.message === "string" ? undefined : "`error.message` must be a string";
  }
  if ("silent" in t) {
    if (t.silent !== true) return "`silent` must be true";
    return t.token === undefined || (typeof t.token === "string" && SILENT_TOKENS.has(t.token))
      ? undefined
      : '`token` must be "NO_REPLY", "REPLY_SKIP", "ANNOUNCE_SKIP" or ""';
  }
  if ("toolCall" in t) {
    const call = t.toolCall as Record<string, unknown> | null;
    if (typeof call?.name !== "string" || call.name.length === 0) {
      return "`toolCall.name` must be a non-empty string";
    }
    const args = call.arguments;
    if (args !== undefined && typeof args !== "string" && (typeof args !== "object" || args === null)) {
      return "`toolCall.arguments` must be an object or a string";
    }
    if (call.id !== undefined && typeof call.id !== "string") return "`toolCall.id` must be a string";
    return t.text === undefined || typeof t.text === "string" ? undefined : "`text` must be a string";
  }
  if (typeof t.text === "string") return undefined;
  return "a turn needs `text`, `toolCall`, `silent` or `error`";
}

function checkTurns(turns: FakeTurns, where: string): void {
  if (typeof turns === "function") return;
  if (!Array.isArray(turns))
    throw new TypeError(`fake model script: ${where} turns must be an array or a function`);
  turns.forEach((turn, i) => {
    if (typeof turn === "function") return;
    const problem = turnProblem(turn);
    if (problem) throw new TypeError(`fake model script: ${where} turn ${i}: ${problem}`);
  });
}

function entriesOf(script: FakeModelScript): readonly FakeScriptEntry[] {
  if (Array.isArray(script)) return script as readonly FakeScriptEntry[];
  return Object.entries(script as Readonly<Record<string, FakeTurns>>).map(([agent, turns]) => ({
    agent,
    turns,
  }));
}

function sessionMatches(match: FakeSessionMatch, sessionKey: string): boolean {
  if (typeof match === "string") return match === sessionKey;
  if (typeof match === "function") return match(sessionKey);
  return sessionKey.startsWith(match.prefix);
}

function matches(entry: FakeScriptEntry, request: FakeModelRequest): boolean {
  if (entry.agent !== undefined && entry.agent !== request.agentId) return false;
  if (entry.session === undefined) return true;
  return request.sessionKey !== undefined && sessionMatches(entry.session, request.sessionKey);
}

function label(entry: FakeScriptEntry): string {
  const session =
    typeof entry.session === "string" ? ` session ${entry.session}` : entry.session ? " session" : "";
  return `${entry.agent === undefined ? "any agent" : `agent ${entry.agent}`}${session}`;
}

export class ScriptBook {
  #slots: Slot[] = [];
  #front = 0;

  /** Replaces every entry; queues start over. Throws on a malformed turn. */
  set(script: FakeModelScript): void {
    const entries = entriesOf(script);
    entries.forEach((entry) => checkTurns(entry.turns, label(entry)));
    this.#slots = entries.map((entry, i) => this.#slot(entry, i));
    this.#front = 0;
  }

  /** Adds an entry ahead of the existing ones of the same rank. */
  add(entry: FakeScriptEntry): void {
    checkTurns(entry.turns, label(entry));
    this.#front -= 1;
    this.#slots.push(this.#slot(entry, this.#front));
  }

  unused(): number {
    return this.#slots.reduce(
      (sum, slot) => sum + (Array.isArray(slot.entry.turns) ? slot.entry.turns.length - slot.cursor : 0),
      0,
    );
  }

  /**
   * The turn answering `request`, or undefined when no entry has one. Throws when a script function
   * throws or gives a malformed turn.
   */
  take(request: FakeModelRequest): FakeTurn | undefined {
    const candidates = this.#slots
      .filter((slot) => matches(slot.entry, request))
      .sort((a, b) => b.rank - a.rank || a.priority - b.priority);
    for (const slot of candidates) {
      const { turns } = slot.entry;
      let turn: FakeTurn | undefined;
      if (typeof turns === "function") {
        turn = turns(request);
        if (turn === undefined) continue;
      } else {
        const source = turns[slot.cursor];
        if (source === undefined) continue;
        slot.cursor += 1;
        turn = typeof source === "function" ? source(request) : source;
      }
      const problem = turnProblem(turn);
      if (problem) throw new Error(`${label(slot.entry)}: ${problem}`);
      return turn;
    }
    return undefined;
  }

  #slot(entry: FakeScriptEntry, priority: number): Slot {
    const rank = (entry.agent !== undefined ? 1 : 0) + (entry.session !== undefined ? 2 : 0);
    return { entry, rank, priority, cursor: 0 };
  }
}

/** The answer a (checked) turn gives. */
export function answerOf(turn: FakeTurn, nextToolCallId: () => string): FakeModelAnswer {
  if ("error" in turn) return { kind: "error", status: turn.error.status, message: turn.error.message };
  if ("silent" in turn) return { kind: "silent", text: turn.token ?? ("NO_REPLY" satisfies FakeSilentToken) };
  if ("toolCall" in turn) {
    const args = turn.toolCall.arguments ?? {};
    return {
      kind: "toolCall",
      text: turn.text ?? "",
      toolCall: {
        id: turn.toolCall.id ?? nextToolCallId(),
        name: turn.toolCall.name,
        arguments: typeof args === "string" ? args : JSON.stringify(args),
      },
    };
  }
  return { kind: "text", text: turn.text };
}
