import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  A2A_EVENT_TYPES,
  type A2AEventOf,
  A2AEventSchemas,
  EventBus,
  InvalidEventError,
} from "../../src/policies/index.js";
import { type A2AEvent, A2AEventSchema, type A2AEventType } from "../../src/index.js";

// The ten public event types, written out here, not taken from the code.
const API_TYPES = [
  "a2a.send",
  "a2a.response",
  "a2a.retry",
  "a2a.complete",
  "a2a.collaborate.requested",
  "a2a.collaborate.sent",
  "a2a.collaborate.failed",
  "a2a.collaborate.responded",
  "a2a.mention.reminded",
  "a2a.mention.escalated",
] as const;
// Ours beyond the contract's ten: why a bot↔bot exchange in a thread ended.
const ALL_TYPES = [...API_TYPES, "a2a.exchange.ended"] as const;

const TERMINATION_REASONS = [
  "explicit_skip",
  "repetition_detected",
  "minimal_content",
  "conclusion_detected",
  "max_turns",
  "no_reply",
  "skipped",
] as const;

const TS = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const CONV = "5f0c2d3e-8a1b-4c6d-9e7f-0a1b2c3d4e5f";
const ROUTE = "agent:main:main:agent:seum:main";
const THREAD = "1300000000000000001";
const PARENT = "1200000000000000001";

const retryEvent: A2AEventOf<"a2a.retry"> = {
  type: "a2a.retry",
  ts: TS + 2_000,
  conversationId: CONV,
  routeKey: ROUTE,
  runId: "run-1",
  fromAgent: "main",
  toAgent: "seum",
  // emitted before the backoff wait
  data: {
    errorCode: "rate_limit",
    errorCategory: "transient",
    errorMessage: "429 Too Many Requests: retry after 30s",
    attempt: 1,
    maxAttempts: 3,
    backoffMs: 30_000,
    conversationId: CONV,
    fromAgent: "main",
    toAgent: "seum",
  },
};

const completeEvent: A2AEventOf<"a2a.complete"> = {
  type: "a2a.complete",
  ts: TS + 90_000,
  conversationId: CONV,
  routeKey: ROUTE,
  runId: "run-2",
  fromAgent: "main",
  toAgent: "seum",
  data: {
    retryAttempts: 1,
    messageIntent: "collaboration",
    configuredMaxTurns: 5,
    effectiveTurns: 3,
    actualTurns: 2,
    earlyTermination: true,
    terminationReason: "conclusion_detected",
    announced: true,
    announceSkipped: false,
    announceText: "세움: API 스키마 검토를 끝냈고 PR #42에 반영했습니다.",
  },
};

const VALID: { [K in A2AEventType]: A2AEventOf<K> } = {
  "a2a.send": {
    type: "a2a.send",
    ts: TS,
    conversationId: CONV,
    routeKey: ROUTE,
    runId: "run-1",
    fromAgent: "main",
    toAgent: "seum",
    data: {
      targetSessionKey: "agent:seum:main",
      requesterSessionKey: "agent:main:main",
      message: "API 스키마 검토해줄 수 있어?",
      messageIntent: "question",
    },
  },
  "a2a.response": {
    type: "a2a.response",
    ts: TS + 60_000,
    conversationId: CONV,
    routeKey: ROUTE,
    runId: "run-1",
    fromAgent: "seum",
    toAgent: "main",
    data: {
      turn: 0,
      speakerSessionKey: "agent:seum:main",
      reply: "네, 확인해볼게요. 어느 파일인가요?",
      outcome: "ok",
      messageIntent: "question",
      effectiveTurns: 3,
    },
  },
  "a2a.retry": retryEvent,
  "a2a.complete": completeEvent,
  "a2a.collaborate.requested": {
    type: "a2a.collaborate.requested",
    ts: TS,
    conversationId: CONV,
    fromAgent: "main",
    toAgent: "seum",
    data: { fromAgentId: "main", toAgentId: "seum", parentChannelId: PARENT, mode: "new_thread", attempt: 1 },
  },
  "a2a.collaborate.sent": {
    type: "a2a.collaborate.sent",
    ts: TS + 500,
    conversationId: CONV,
    data: {
      threadId: THREAD,
      parentChannelId: PARENT,
      fromAgentId: "main",
      toAgentId: "seum",
      mode: "new_thread",
      attempt: 1,
      messageId: "1300000000000000002",
    },
  },
  "a2a.collaborate.failed": {
    type: "a2a.collaborate.failed",
    ts: TS + 700,
    conversationId: CONV,
    data: {
      threadId: THREAD,
      parentChannelId: PARENT,
      fromAgentId: "main",
      toAgentId: "seum",
      mode: "reuse_thread",
      attempt: 2,
      errorCode: "permission_denied",
      errorMessage: "Missing Permissions",
      escalate: true,
    },
  },
  "a2a.collaborate.responded": {
    type: "a2a.collaborate.responded",
    ts: TS + 120_000,
    conversationId: CONV,
    data: { threadId: THREAD, parentChannelId: PARENT, fromAgentId: "main", toAgentId: "seum", attempt: 1 },
  },
  "a2a.mention.reminded": {
    type: "a2a.mention.reminded",
    ts: TS + 300_000,
    data: {
      mentionId: "mention-1",
      threadId: THREAD,
      targetAgentId: "seum",
      attempts: 2,
      maxAttempts: 3,
      elapsedMinutes: 5,
    },
  },
  "a2a.mention.escalated": {
    type: "a2a.mention.escalated",
    ts: TS + 900_000,
    data: {
      mentionId: "mention-1",
      threadId: THREAD,
      targetAgentId: "seum",
      attempts: 3,
      maxAttempts: 3,
      elapsedMinutes: 15,
      escalationMentionId: "1100000000000000001",
      notified: true,
    },
  },
  "a2a.exchange.ended": {
    type: "a2a.exchange.ended",
    ts: TS + 30_000,
    fromAgent: "main",
    toAgent: "seum",
    data: {
      threadId: THREAD,
      reason: "conclusion_detected",
      handled: 3,
      limit: 6,
      messageId: "1100000000000000077",
      agentId: "seum",
    },
  },
};

const ALL_VALID: A2AEvent[] = ALL_TYPES.map((type) => VALID[type]);
const MEGA = "x".repeat(1_000_000);

const RETRY_REQUIRED = [
  "errorCode",
  "errorCategory",
  "errorMessage",
  "attempt",
  "maxAttempts",
  "backoffMs",
  "conversationId",
  "fromAgent",
  "toAgent",
] as const;

const COMPLETE_REQUIRED = [
  "retryAttempts",
  "messageIntent",
  "configuredMaxTurns",
  "effectiveTurns",
  "actualTurns",
  "earlyTermination",
  "announced",
  "announceSkipped",
] as const;

const COMPLETE_DOCUMENTED = new Set<string>([
  ...COMPLETE_REQUIRED,
  "errorCode",
  "errorCategory",
  "terminationReason",
  "announceSkipReason",
  "announceText",
]);

type Loose = Record<string, unknown>;

/** A deep copy of `event` as a plain record, for breaking it. */
function copy(event: A2AEvent): Loose & { data: Loose } {
  return structuredClone(event) as Loose & { data: Loose };
}

function withData(event: A2AEvent, patch: Loose): Loose {
  const c = copy(event);
  return { ...c, data: { ...c.data, ...patch } };
}

function withoutData(event: A2AEvent, key: string): Loose {
  const c = copy(event);
  const { [key]: _dropped, ...data } = c.data;
  return { ...c, data };
}

function parses(value: unknown): boolean {
  return A2AEventSchema.safeParse(value).success;
}

/** Emits a value that may not be an event; returns the InvalidEventError it must throw. */
function invalidEmit(bus: EventBus, value: unknown): InvalidEventError {
  let thrown: unknown;
  try {
    bus.emit(value as A2AEvent);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidEventError);
  return thrown as InvalidEventError;
}

/** Calls fn: it may return, or throw an InvalidEventError; anything else fails the test. */
function definedOrInvalid(fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidEventError);
  }
}

describe("event types", () => {
  it("A2A_EVENT_TYPES lists the ten public types, and the exchange's end", () => {
    expect([...A2A_EVENT_TYPES].sort()).toEqual([...ALL_TYPES].sort());
    expect(new Set(A2A_EVENT_TYPES).size).toBe(A2A_EVENT_TYPES.length);
  });

  it("A2AEventSchemas has one schema per type", () => {
    expect(Object.keys(A2AEventSchemas).sort()).toEqual([...ALL_TYPES].sort());
  });
});

describe("A2AEventSchema: valid events", () => {
  it.each(ALL_TYPES)("parses a realistic %s event unchanged", (type) => {
    const event = VALID[type];
    const result = A2AEventSchema.safeParse(event);
    expect(result.error?.issues).toBeUndefined();
    expect(result.data).toEqual(event);
  });

  it.each(ALL_TYPES)("A2AEventSchemas[%s] accepts its own event and rejects the other types", (type) => {
    const schema = A2AEventSchemas[type];
    expect(schema.safeParse(VALID[type]).success).toBe(true);
    for (const other of ALL_TYPES) {
      if (other !== type) expect(schema.safeParse(VALID[other]).success).toBe(false);
    }
  });

  it("parses an envelope with only type, ts and data", () => {
    const minimal = { type: "a2a.retry", ts: TS, data: retryEvent.data };
    expect(A2AEventSchema.parse(minimal)).toEqual(minimal);
  });

  it("parses an a2a.complete with none of its optional data fields", () => {
    const data = Object.fromEntries(COMPLETE_REQUIRED.map((k) => [k, completeEvent.data[k]]));
    expect(parses({ type: "a2a.complete", ts: TS, data })).toBe(true);
  });

  it("parses a failed a2a.complete (no reply after retries) with errorCode, errorCategory and skip reason", () => {
    const failed = withData(completeEvent, {
      retryAttempts: 2,
      errorCode: "wait_timeout",
      errorCategory: "transient",
      configuredMaxTurns: 5,
      effectiveTurns: 3,
      actualTurns: 0,
      earlyTermination: false,
      terminationReason: "no_reply",
      announced: false,
      announceSkipped: true,
      announceSkipReason: "empty_reply",
      announceText: undefined,
    });
    const parsed = A2AEventSchema.parse(failed);
    expect(parsed.type).toBe("a2a.complete");
    expect(parsed.data).toMatchObject({
      errorCode: "wait_timeout",
      errorCategory: "transient",
      actualTurns: 0,
    });
  });

  it("parses an a2a.complete of a skipped ping-pong (0 effective turns)", () => {
    expect(
      parses(
        withData(completeEvent, {
          effectiveTurns: 0,
          actualTurns: 0,
          earlyTermination: false,
          terminationReason: "skipped",
        }),
      ),
    ).toBe(true);
  });

  it.each(["transient", "permanent", "conditional"])(
    "accepts errorCategory %s in a2a.retry and a2a.complete",
    (c) => {
      expect(parses(withData(retryEvent, { errorCategory: c }))).toBe(true);
      expect(parses(withData(completeEvent, { errorCode: "x", errorCategory: c }))).toBe(true);
    },
  );

  it.each(["notification", "question", "collaboration", "escalation", "result_report"])(
    "accepts messageIntent %s in a2a.complete",
    (intent) => {
      expect(parses(withData(completeEvent, { messageIntent: intent }))).toBe(true);
    },
  );

  it.each(["rate_limit", "wait_timeout", "server_overload", "gateway_connection", "session_not_found"])(
    "accepts a2a.retry errorCode %s",
    (code) => {
      expect(parses(withData(retryEvent, { errorCode: code }))).toBe(true);
    },
  );

  it("accepts a later retry (attempt 2 of 3)", () => {
    expect(parses(withData(retryEvent, { attempt: 2, backoffMs: 4000 }))).toBe(true);
  });
});

describe("A2AEventSchema: terminationReason", () => {
  it.each(TERMINATION_REASONS)("accepts %s", (reason) => {
    const parsed = A2AEventSchema.parse(withData(completeEvent, { terminationReason: reason }));
    expect(parsed.type === "a2a.complete" && parsed.data.terminationReason).toBe(reason);
  });

  it.each(["timeout", "", "MAX_TURNS", "max_turns ", "maxTurns", "error", "done"])("rejects %j", (reason) => {
    const result = A2AEventSchema.safeParse(withData(completeEvent, { terminationReason: reason }));
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join("."))).toContain("data.terminationReason");
  });

  it("rejects a non-string terminationReason", () => {
    expect(parses(withData(completeEvent, { terminationReason: 7 }))).toBe(false);
    expect(parses(withData(completeEvent, { terminationReason: null }))).toBe(false);
  });
});

describe("A2AEventSchema: invalid events", () => {
  it.each(["a2a.unknown", "a2a.collaborate", "a2a.collaborate.*", "a2a.RETRY", "A2A.retry", "", "*"])(
    "rejects the unknown type %j",
    (type) => {
      const result = A2AEventSchema.safeParse({ ...copy(retryEvent), type });
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((i) => i.path.join("."))).toContain("type");
    },
  );

  it.each(RETRY_REQUIRED)("rejects an a2a.retry without data.%s", (field) => {
    const result = A2AEventSchema.safeParse(withoutData(retryEvent, field));
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join("."))).toContain(`data.${field}`);
  });

  it.each(COMPLETE_REQUIRED)("rejects an a2a.complete without data.%s", (field) => {
    const result = A2AEventSchema.safeParse(withoutData(completeEvent, field));
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join("."))).toContain(`data.${field}`);
  });

  it.each(["fromAgentId", "toAgentId"])("rejects a collaborate event without data.%s", (field) => {
    for (const type of API_TYPES.filter((t) => t.startsWith("a2a.collaborate."))) {
      expect(parses(withoutData(VALID[type], field))).toBe(false);
    }
  });

  it("rejects a2a.retry attempt 0 (the retry's number counts from 1)", () => {
    const result = A2AEventSchema.safeParse(withData(retryEvent, { attempt: 0 }));
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join("."))).toContain("data.attempt");
  });

  it.each<[string, Loose]>([
    ["attempt as a string", { attempt: "1" }],
    ["attempt fractional", { attempt: 1.5 }],
    ["backoffMs as a string", { backoffMs: "2000" }],
    ["errorCode as a number", { errorCode: 429 }],
    ["maxAttempts null", { maxAttempts: null }],
  ])("rejects an a2a.retry with %s", (_label, patch) => {
    expect(parses(withData(retryEvent, patch))).toBe(false);
  });

  it.each<[string, Loose]>([
    ["earlyTermination as a string", { earlyTermination: "yes" }],
    ["announced as 1", { announced: 1 }],
    ["retryAttempts negative", { retryAttempts: -1 }],
    ["actualTurns fractional", { actualTurns: 1.5 }],
    ["announceText as a number", { announceText: 5 }],
  ])("rejects an a2a.complete with %s", (_label, patch) => {
    expect(parses(withData(completeEvent, patch))).toBe(false);
  });

  it.each(["extra", "timestamp", "payload", "Type"])("rejects the unknown envelope key %s", (key) => {
    const result = A2AEventSchema.safeParse({ ...copy(retryEvent), [key]: "v" });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain(key);
  });

  it.each(["type", "ts", "data"])("rejects an envelope without %s", (key) => {
    const { [key]: _dropped, ...c } = copy(retryEvent);
    expect(parses(c)).toBe(false);
  });

  it.each<[string, unknown]>([
    ["a string ts", "2026-01-01T00:00:00Z"],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["null", null],
  ])("rejects ts as %s", (_label, ts) => {
    expect(parses({ ...copy(retryEvent), ts })).toBe(false);
  });

  it.each<[string, unknown]>([
    ["null", null],
    ["an array", []],
    ["a string", "data"],
    ["a number", 1],
  ])("rejects data as %s", (_label, data) => {
    expect(parses({ ...copy(retryEvent), data })).toBe(false);
  });

  it.each(["conversationId", "routeKey", "runId", "fromAgent", "toAgent"])(
    "rejects a non-string envelope %s",
    (key) => {
      expect(parses({ ...copy(retryEvent), [key]: 42 })).toBe(false);
    },
  );
});

describe("A2AEventSchema: data objects are loose", () => {
  it.each(ALL_TYPES)("keeps an unknown data field of %s through parsing", (type) => {
    const event = withData(VALID[type], { futureField: { nested: [1, "two"] }, writerVersion: 2 });
    const parsed = A2AEventSchema.parse(event);
    expect(parsed.data).toEqual(event.data);
    expect((parsed.data as Loose).futureField).toEqual({ nested: [1, "two"] });
  });

  it("keeps any set of undocumented a2a.complete data fields (property)", () => {
    const key = fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((k) => !COMPLETE_DOCUMENTED.has(k) && k !== "__proto__");
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue(), { maxKeys: 5 }), (extra) => {
        const event = withData(completeEvent, extra);
        const result = A2AEventSchema.safeParse(event);
        expect(result.success).toBe(true);
        expect(result.data?.data).toEqual(event.data);
      }),
      { numRuns: 200 },
    );
  });
});

describe("A2AEventSchema: bad input never throws", () => {
  it.each<[string, unknown]>([
    ["undefined", undefined],
    ["null", null],
    ["an empty string", ""],
    ["a 1 MB string", MEGA],
    ["a number", 5],
    ["an array", [retryEvent]],
    ["a symbol", Symbol("event")],
    ["a bigint", 1n],
    ["a function", () => retryEvent],
    ["an empty object", {}],
  ])("answers %s with success false", (_label, value) => {
    expect(parses(value)).toBe(false);
  });

  it("parses a 1 MB string where a string is expected, keeping it whole", () => {
    const event = withData(VALID["a2a.send"], { message: MEGA });
    const parsed = A2AEventSchema.parse(event);
    expect(parsed.type === "a2a.send" && parsed.data.message.length).toBe(1_000_000);
  });

  it("never throws for arbitrary input (property)", () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withNullPrototype: true, withMap: true }), (value) => {
        expect(typeof A2AEventSchema.safeParse(value).success).toBe("boolean");
      }),
      { numRuns: 300 },
    );
  });
});

describe("EventBus: delivery", () => {
  it("hands each listener the validated event, in subscription order", () => {
    const bus = new EventBus();
    const calls: Array<[string, A2AEvent]> = [];
    bus.subscribe("*", (e) => calls.push(["all", e]));
    bus.subscribe("a2a.retry", (e) => calls.push(["retry", e]));
    bus.subscribe("a2a.*", (e) => calls.push(["prefix", e]));
    bus.subscribe("a2a.retry", (e) => calls.push(["retry-2", e]));
    bus.emit(retryEvent);
    expect(calls.map(([who]) => who)).toEqual(["all", "retry", "prefix", "retry-2"]);
    for (const [, event] of calls) expect(event).toEqual(retryEvent);
  });

  it("delivers only to listeners of the event's exact type", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe("a2a.complete", (e) => seen.push(e.type));
    for (const event of ALL_VALID) bus.emit(event);
    expect(seen).toEqual(["a2a.complete"]);
  });

  it("a2a.collaborate.* receives exactly the four collaborate events, in emission order", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe("a2a.collaborate.*", (e) => seen.push(e.type));
    for (const event of ALL_VALID) bus.emit(event);
    expect(seen).toEqual([
      "a2a.collaborate.requested",
      "a2a.collaborate.sent",
      "a2a.collaborate.failed",
      "a2a.collaborate.responded",
    ]);
  });

  it("a2a.mention.* receives exactly the two mention events", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe("a2a.mention.*", (e) => seen.push(e.type));
    for (const event of ALL_VALID) bus.emit(event);
    expect(seen).toEqual(["a2a.mention.reminded", "a2a.mention.escalated"]);
  });

  it("* receives every event, in emission order", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe("*", (e) => seen.push(e.type));
    for (const event of ALL_VALID) bus.emit(event);
    expect(seen).toEqual([...ALL_TYPES]);
  });

  it("a type pattern does not act as a prefix (a2a.collaborate.* does not match a2a.complete)", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe("a2a.collaborate.*", (e) => seen.push(e.type));
    bus.subscribe("a2a.send", (e) => seen.push(`exact:${e.type}`));
    bus.emit(completeEvent);
    bus.emit(VALID["a2a.response"]);
    expect(seen).toEqual([]);
  });

  it("delivers unknown data fields to listeners (loose data)", () => {
    const bus = new EventBus();
    const seen: A2AEvent[] = [];
    bus.subscribe("a2a.complete", (e) => seen.push(e));
    bus.emit(withData(completeEvent, { dashboardHint: "yellow-dot" }) as A2AEvent);
    expect((seen[0]?.data as Loose | undefined)?.dashboardHint).toBe("yellow-dot");
  });

  it("does nothing when there are no listeners", () => {
    const bus = new EventBus();
    expect(() => bus.emit(retryEvent)).not.toThrow();
  });
});

describe("EventBus: unsubscribe", () => {
  it("stops delivery to that listener only", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const off = bus.subscribe("*", () => seen.push("a"));
    bus.subscribe("*", () => seen.push("b"));
    bus.emit(retryEvent);
    off();
    bus.emit(retryEvent);
    expect(seen).toEqual(["a", "b", "b"]);
  });

  it("is harmless when called twice", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const off = bus.subscribe("a2a.retry", () => seen.push("a"));
    bus.subscribe("a2a.retry", () => seen.push("b"));
    off();
    off();
    bus.emit(retryEvent);
    expect(seen).toEqual(["b"]);
  });

  it("removes only its own subscription when the same function is subscribed twice", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const listener = (e: A2AEvent) => seen.push(e.type);
    const offFirst = bus.subscribe("a2a.retry", listener);
    bus.subscribe("a2a.complete", listener);
    offFirst();
    bus.emit(retryEvent);
    bus.emit(completeEvent);
    expect(seen).toEqual(["a2a.complete"]);
  });

  it("a listener that unsubscribes itself while handling an event gets it once and the others still get it", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    const off = bus.subscribe("*", () => {
      seen.push("once");
      off();
    });
    bus.subscribe("*", () => seen.push("always"));
    bus.emit(retryEvent);
    bus.emit(completeEvent);
    expect(seen).toEqual(["once", "always", "always"]);
  });
});

describe("EventBus: invalid events", () => {
  it("throws InvalidEventError naming the bad field and delivers nothing", () => {
    const bus = new EventBus();
    const listener = vi.fn();
    bus.subscribe("*", listener);
    bus.subscribe("a2a.retry", listener);
    const error = invalidEmit(bus, withData(retryEvent, { attempt: 0 }));
    expect(error.message).toContain("data.attempt");
    expect(error).toBeInstanceOf(Error);
    expect(listener).not.toHaveBeenCalled();
  });

  it.each(RETRY_REQUIRED)("names data.%s when it is missing from an a2a.retry", (field) => {
    const bus = new EventBus();
    const listener = vi.fn();
    bus.subscribe("*", listener);
    expect(invalidEmit(bus, withoutData(retryEvent, field)).message).toContain(`data.${field}`);
    expect(listener).not.toHaveBeenCalled();
  });

  it.each(COMPLETE_REQUIRED)("names data.%s when it is missing from an a2a.complete", (field) => {
    const bus = new EventBus();
    expect(invalidEmit(bus, withoutData(completeEvent, field)).message).toContain(`data.${field}`);
  });

  it("names data.terminationReason when it is not one of the seven values", () => {
    const bus = new EventBus();
    expect(invalidEmit(bus, withData(completeEvent, { terminationReason: "timeout" })).message).toContain(
      "data.terminationReason",
    );
  });

  it("names the type of an unknown event type", () => {
    const bus = new EventBus();
    const listener = vi.fn();
    bus.subscribe("*", listener);
    const error = invalidEmit(bus, { ...copy(retryEvent), type: "a2a.bogus" });
    expect(error.message).toContain("type");
    expect(listener).not.toHaveBeenCalled();
  });

  it("names an unknown envelope key", () => {
    const bus = new EventBus();
    const listener = vi.fn();
    bus.subscribe("*", listener);
    expect(invalidEmit(bus, { ...copy(retryEvent), surprise: true }).message).toContain("surprise");
    expect(listener).not.toHaveBeenCalled();
  });

  it("keeps working after rejecting an event", () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe("*", (e) => seen.push(e.type));
    invalidEmit(bus, withoutData(retryEvent, "errorCode"));
    bus.emit(retryEvent);
    expect(seen).toEqual(["a2a.retry"]);
  });
});

describe("EventBus: a throwing listener", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("does not stop the others and is reported to onListenerError with the error and the event", () => {
    const reported: Array<[unknown, A2AEvent]> = [];
    const bus = new EventBus((error, event) => reported.push([error, event]));
    const seen: string[] = [];
    const boom = new Error("listener broke");
    bus.subscribe("*", () => seen.push("first"));
    bus.subscribe("*", () => {
      throw boom;
    });
    bus.subscribe("*", () => seen.push("third"));
    expect(() => bus.emit(retryEvent)).not.toThrow();
    expect(seen).toEqual(["first", "third"]);
    expect(reported).toHaveLength(1);
    expect(reported[0]?.[0]).toBe(boom);
    expect(reported[0]?.[1]).toEqual(retryEvent);
  });

  it("reports each failure, and later events still reach every listener", () => {
    const reported: unknown[] = [];
    const bus = new EventBus((error) => reported.push(error));
    const seen: string[] = [];
    bus.subscribe("a2a.retry", () => {
      throw new Error("retry listener broke");
    });
    bus.subscribe("*", (e) => seen.push(e.type));
    bus.emit(retryEvent);
    bus.emit(completeEvent);
    bus.emit(retryEvent);
    expect(seen).toEqual(["a2a.retry", "a2a.complete", "a2a.retry"]);
    expect(reported).toHaveLength(2);
  });

  it("reports a thrown non-Error value as it was thrown", () => {
    const reported: unknown[] = [];
    const bus = new EventBus((error) => reported.push(error));
    bus.subscribe("*", () => {
      throw "plain string";
    });
    bus.emit(retryEvent);
    expect(reported).toEqual(["plain string"]);
  });

  it("without an onListenerError callback, still does not propagate and still delivers to the others", () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const bus = new EventBus();
    const seen: string[] = [];
    bus.subscribe("*", () => {
      throw new Error("broken");
    });
    bus.subscribe("*", () => seen.push("ok"));
    expect(() => bus.emit(retryEvent)).not.toThrow();
    expect(seen).toEqual(["ok"]);
  });
});

describe("EventBus: bad input", () => {
  it.each<[string, unknown]>([
    ["undefined", undefined],
    ["null", null],
    ["an empty string", ""],
    ["a 1 MB string", MEGA],
    ["a number", 42],
    ["an array", [retryEvent]],
    ["a symbol", Symbol("event")],
    ["a function", () => retryEvent],
    ["an empty object", {}],
    ["an object with a 1 MB type", { type: MEGA, ts: TS, data: {} }],
    ["an object with a numeric type", { type: 5, ts: TS, data: {} }],
  ])("rejects %s with InvalidEventError and delivers nothing", (_label, value) => {
    const bus = new EventBus();
    const listener = vi.fn();
    bus.subscribe("*", listener);
    invalidEmit(bus, value);
    expect(listener).not.toHaveBeenCalled();
  });

  it.each<[string, Loose]>([
    ["empty conversationId", { conversationId: "" }],
    ["empty errorMessage", { data: { ...retryEvent.data, errorMessage: "" } }],
    ["1 MB errorMessage", { data: { ...retryEvent.data, errorMessage: MEGA } }],
    ["1 MB routeKey", { routeKey: MEGA }],
    ["undefined runId", { runId: undefined }],
  ])("answers an a2a.retry with %s by delivering it or by InvalidEventError", (_label, patch) => {
    const bus = new EventBus();
    const seen: A2AEvent[] = [];
    bus.subscribe("*", (e) => seen.push(e));
    definedOrInvalid(() => bus.emit({ ...copy(retryEvent), ...patch } as A2AEvent));
    expect(seen.length).toBeLessThanOrEqual(1);
  });

  it("delivers a 1 MB reply text whole", () => {
    const bus = new EventBus();
    const seen: A2AEvent[] = [];
    bus.subscribe("a2a.response", (e) => seen.push(e));
    bus.emit(withData(VALID["a2a.response"], { reply: MEGA }) as A2AEvent);
    expect(seen[0]?.type === "a2a.response" && seen[0].data.reply?.length).toBe(1_000_000);
  });

  it("only ever throws InvalidEventError for arbitrary input (property)", () => {
    const bus = new EventBus();
    fc.assert(
      fc.property(
        fc.oneof(
          fc.anything({ withBigInt: true, withNullPrototype: true }),
          fc.record({ type: fc.constantFrom(...API_TYPES), ts: fc.anything(), data: fc.anything() }),
        ),
        (value) => {
          definedOrInvalid(() => bus.emit(value as A2AEvent));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("EventBus: error messages stay short", () => {
  it("cuts a megabyte-long type out of the InvalidEventError message", () => {
    const bus = new EventBus();
    const junk = { type: "x".repeat(1_000_000), ts: 1, data: {} } as unknown as Parameters<
      EventBus["emit"]
    >[0];
    expect(() => bus.emit(junk)).toThrow(InvalidEventError);
    try {
      bus.emit(junk);
    } catch (error) {
      expect((error as Error).message.length).toBeLessThan(1_000);
    }
  });
});
