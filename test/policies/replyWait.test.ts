// Reply wait, retry and blocked outcome: classification, retry decisions, backoff and outcome text.
// Expectations are taken from the specification, not from running the code.
import { describe, expect, it } from "vitest";
import {
  A2AErrorCategory,
  type A2AErrorInfo,
  buildNoReplyOutcomeMessage,
  calculateBackoffMs,
  classifyA2AError,
  extractRetryAfterMs,
} from "../../src/policies/entryPoint.js";
import { canRetry, capMaxAttempts, retryResends } from "../../src/policies/index.js";
import { expectAnswerOrInvalidInput, junkCases, ONE_MB, ONE_MB_KOREAN } from "../support/badInput.js";

const JUNK = junkCases("rate limit");

type ClassifyParams = Parameters<typeof classifyA2AError>[0];
type BackoffOptions = NonNullable<Parameters<typeof calculateBackoffMs>[2]>;
type OutcomeParams = Parameters<typeof buildNoReplyOutcomeMessage>[0];

const PREFIX = "[outcome] blocked: 응답을 받지 못했습니다";

function expectErrorInfo(value: A2AErrorInfo) {
  expect(Object.values(A2AErrorCategory)).toContain(value.category);
  expect(typeof value.code).toBe("string");
  expect(typeof value.message).toBe("string");
  expect(typeof value.retryable).toBe("boolean");
  expect(Number.isInteger(value.maxAttempts)).toBe(true);
}

function expectBackoff(value: number) {
  expect(typeof value).toBe("number");
  expect(Number.isFinite(value)).toBe(true);
  expect(value).toBeGreaterThanOrEqual(0);
}

const fixed = (r: number) => () => r;

describe("A2AErrorCategory", () => {
  it("has the lower-case string values", () => {
    expect(A2AErrorCategory.TRANSIENT).toBe("transient");
    expect(A2AErrorCategory.PERMANENT).toBe("permanent");
    expect(A2AErrorCategory.CONDITIONAL).toBe("conditional");
  });
});

describe("classifyA2AError: each rule's result", () => {
  it("rule 1: a gateway error is TRANSIENT gateway_connection, retryable, 3 attempts, message keeps the cause", () => {
    const info = classifyA2AError({ gatewayError: new Error("ECONNRESET socket hang up"), attempt: 0 });
    expect(info).toMatchObject({
      category: A2AErrorCategory.TRANSIENT,
      code: "gateway_connection",
      retryable: true,
      maxAttempts: 3,
      attempt: 0,
    });
    expect(info.message).toContain("ECONNRESET socket hang up");
    expect(info.message).toContain("Gateway 연결 실패");
    expect(info.retryAfterMs).toBeUndefined();
  });

  it.each([0, 1])(
    "rule 2: not_found at attempt %i is CONDITIONAL session_not_found, retryable, 2 attempts",
    (attempt) => {
      const info = classifyA2AError({ waitStatus: "not_found", attempt });
      expect(info).toMatchObject({
        category: A2AErrorCategory.CONDITIONAL,
        code: "session_not_found",
        retryable: true,
        maxAttempts: 2,
        attempt,
        message: "실행 상태를 찾을 수 없음",
      });
      expect(info.retryAfterMs).toBeUndefined();
    },
  );

  it.each([2, 3, 9])(
    "rule 2: not_found at attempt %i is PERMANENT session_gone, not retryable, maxAttempts 2",
    (attempt) => {
      const info = classifyA2AError({ waitStatus: "not_found", attempt });
      expect(info).toMatchObject({
        category: A2AErrorCategory.PERMANENT,
        code: "session_gone",
        retryable: false,
        maxAttempts: 2,
        attempt,
      });
      expect(info.retryAfterMs).toBeUndefined();
    },
  );

  it("rule 3: a rate-limit error is TRANSIENT rate_limit, retryable, 3 attempts, 10 s wait by default", () => {
    const info = classifyA2AError({ waitStatus: "error", waitError: "rate limit reached", attempt: 0 });
    expect(info).toEqual({
      category: A2AErrorCategory.TRANSIENT,
      code: "rate_limit",
      message: "LLM API rate limit",
      retryable: true,
      retryAfterMs: 10_000,
      attempt: 0,
      maxAttempts: 3,
    });
  });

  it("rule 4: a context error is PERMANENT context_exceeded, not retryable, 1 attempt", () => {
    const info = classifyA2AError({ waitStatus: "error", waitError: "context length exceeded", attempt: 0 });
    expect(info).toEqual({
      category: A2AErrorCategory.PERMANENT,
      code: "context_exceeded",
      message: "LLM 컨텍스트 윈도우 초과",
      retryable: false,
      attempt: 0,
      maxAttempts: 1,
    });
  });

  it("rule 5: a server error is TRANSIENT server_overload, retryable, 3 attempts", () => {
    const info = classifyA2AError({ waitStatus: "error", waitError: "model overloaded", attempt: 0 });
    expect(info).toEqual({
      category: A2AErrorCategory.TRANSIENT,
      code: "server_overload",
      message: "LLM 서버 과부하",
      retryable: true,
      attempt: 0,
      maxAttempts: 3,
    });
  });

  it("rule 6: status error with an unrecognised waitError is PERMANENT unknown_error whose message is the waitError", () => {
    const info = classifyA2AError({ waitStatus: "error", waitError: "tool crashed: segfault", attempt: 0 });
    expect(info).toEqual({
      category: A2AErrorCategory.PERMANENT,
      code: "unknown_error",
      message: "tool crashed: segfault",
      retryable: false,
      attempt: 0,
      maxAttempts: 1,
    });
  });

  it("rule 6: status error without a waitError uses the default message", () => {
    const info = classifyA2AError({ waitStatus: "error", attempt: 0 });
    expect(info).toMatchObject({
      category: A2AErrorCategory.PERMANENT,
      code: "unknown_error",
      retryable: false,
      maxAttempts: 1,
      message: "알 수 없는 실행 오류",
    });
  });

  it("rule 6: an empty waitError is no waitError: unknown_error with a non-empty default message", () => {
    const info = classifyA2AError({ waitStatus: "error", waitError: "", attempt: 0 });
    expect(info.code).toBe("unknown_error");
    expect(info.message.length).toBeGreaterThan(0);
  });

  it.each<[string, ClassifyParams]>([
    ["status timeout", { waitStatus: "timeout", attempt: 0 }],
    ["no status at all", { attempt: 0 }],
    ["an empty status", { waitStatus: "", attempt: 0 }],
    [
      "status timeout with an unrecognised waitError",
      { waitStatus: "timeout", waitError: "disk full", attempt: 0 },
    ],
    ["an unrecognised waitError without status", { waitError: "disk full", attempt: 0 }],
  ])("rule 7: %s is TRANSIENT wait_timeout, retryable, 2 attempts", (_label, params) => {
    const info = classifyA2AError(params);
    expect(info).toEqual({
      category: A2AErrorCategory.TRANSIENT,
      code: "wait_timeout",
      message: "응답 대기 시간 초과",
      retryable: true,
      attempt: 0,
      maxAttempts: 2,
    });
  });
});

describe("classifyA2AError: the first rule that matches wins", () => {
  it("a gateway error beats not_found, a rate-limit text and status error", () => {
    const info = classifyA2AError({
      gatewayError: new Error("down"),
      waitStatus: "not_found",
      waitError: "429 rate limit",
      attempt: 0,
    });
    expect(info.code).toBe("gateway_connection");
  });

  it("not_found beats a rate-limit waitError (rule 2 before rule 3)", () => {
    expect(classifyA2AError({ waitStatus: "not_found", waitError: "429", attempt: 0 }).code).toBe(
      "session_not_found",
    );
    expect(classifyA2AError({ waitStatus: "not_found", waitError: "429", attempt: 2 }).code).toBe(
      "session_gone",
    );
  });

  it("rate limit beats context exceeded (rule 3 before rule 4)", () => {
    expect(classifyA2AError({ waitError: "rate limit: context length exceeded", attempt: 0 }).code).toBe(
      "rate_limit",
    );
  });

  it("context exceeded beats a server error code (rule 4 before rule 5)", () => {
    expect(classifyA2AError({ waitError: "HTTP 500: prompt is too long", attempt: 0 }).code).toBe(
      "context_exceeded",
    );
    expect(classifyA2AError({ waitError: "overloaded because token limit hit", attempt: 0 }).code).toBe(
      "context_exceeded",
    );
  });

  it("rate limit beats a server error code (rule 3 before rule 5)", () => {
    expect(classifyA2AError({ waitError: "503 too many requests", attempt: 0 }).code).toBe("rate_limit");
  });

  it("a server error text beats status error (rule 5 before rule 6)", () => {
    expect(
      classifyA2AError({ waitStatus: "error", waitError: "Internal Server Error", attempt: 0 }).code,
    ).toBe("server_overload");
  });

  it("waitError rules apply whatever the status (rule 3 before rule 7)", () => {
    expect(classifyA2AError({ waitStatus: "timeout", waitError: "Too Many Requests", attempt: 0 }).code).toBe(
      "rate_limit",
    );
    expect(classifyA2AError({ waitError: "server_error", attempt: 0 }).code).toBe("server_overload");
  });
});

describe("classifyA2AError: the patterns of each rule", () => {
  it.each([
    "rate limit reached",
    "rate_limit_error",
    "RateLimitError: slow down",
    "rate-limit exceeded",
    "HTTP 429",
    "status=429",
    "E429",
    "Too Many Requests",
    "too many concurrent runs",
  ])("rate limit: %j", (waitError) => {
    const info = classifyA2AError({ waitStatus: "error", waitError, attempt: 0 });
    expect(info.code).toBe("rate_limit");
    expect(info.retryAfterMs).toBe(10_000);
  });

  it.each([
    "context length exceeded",
    "context_length_exceeded",
    "maximum token limit reached",
    "token_limit",
    "prompt is too long",
  ])("context exceeded: %j", (waitError) => {
    expect(classifyA2AError({ waitStatus: "error", waitError, attempt: 0 }).code).toBe("context_exceeded");
  });

  it.each([
    "model overloaded",
    "Overloaded",
    "internal server error",
    "server_error",
    "HTTP 529",
    "500",
    "status 502 bad gateway",
    "HTTP 503",
    "HTTP_503",
    "HTTP503",
    "(502)",
    "code=500,",
  ])("server overload: %j", (waitError) => {
    expect(classifyA2AError({ waitStatus: "error", waitError, attempt: 0 }).code).toBe("server_overload");
  });

  it.each([
    "processed 1500 items",
    "request id 45030 failed",
    "took 5290ms",
    "queue position 14290",
    "5029 bytes written",
    "run 4291 failed",
    "5000 steps",
  ])("numbers touched by a digit are not codes: %j is an unknown error", (waitError) => {
    const info = classifyA2AError({ waitStatus: "error", waitError, attempt: 0 });
    expect(info.code).toBe("unknown_error");
    expect(info.message).toBe(waitError);
  });

  it("numbers touched by a digit without status error fall through to wait_timeout", () => {
    expect(classifyA2AError({ waitError: "processed 1500 items", attempt: 0 }).code).toBe("wait_timeout");
  });

  it.each<[string, string]>([
    ["RATE LIMIT", "rate_limit"],
    ["tOo MaNy requests", "rate_limit"],
    ["CONTEXT_LENGTH", "context_exceeded"],
    ["Token Limit", "context_exceeded"],
    ["TOO LONG", "context_exceeded"],
    ["OVERLOADED", "server_overload"],
    ["Server Error", "server_overload"],
  ])("matching is case-insensitive: %j → %s", (waitError, code) => {
    expect(classifyA2AError({ waitStatus: "error", waitError, attempt: 0 }).code).toBe(code);
  });
});

describe("classifyA2AError: retryAfterMs of a rate limit", () => {
  it.each<[string, number]>([
    ["429 Too Many Requests: retry after 30s", 30_000],
    ["Rate limit reached. Retry-After: 12", 12_000],
    ["rate_limit_error retry_after_ms=1500", 1_500],
    ["rate limit; please retry in 2.5s", 2_500],
    ["Too many requests, try again in 20 seconds", 20_000],
  ])("comes from the text: %j → %i ms", (waitError, ms) => {
    expect(classifyA2AError({ waitStatus: "error", waitError, attempt: 0 }).retryAfterMs).toBe(ms);
  });

  it("is 10000 when the text gives no wait", () => {
    expect(classifyA2AError({ waitError: "429", attempt: 1 }).retryAfterMs).toBe(10_000);
  });

  it.each<[string, ClassifyParams]>([
    ["gateway_connection", { gatewayError: new Error("x"), attempt: 0 }],
    ["session_not_found", { waitStatus: "not_found", attempt: 0 }],
    ["context_exceeded", { waitError: "context length", attempt: 0 }],
    ["server_overload", { waitError: "503 retry after 5s", attempt: 0 }],
    ["unknown_error", { waitStatus: "error", waitError: "retry after 5s", attempt: 0 }],
    ["wait_timeout", { waitStatus: "timeout", attempt: 0 }],
  ])("is absent on %s, even when the text names a wait", (code, params) => {
    const info = classifyA2AError(params);
    expect(info.code).toBe(code);
    expect(info.retryAfterMs).toBeUndefined();
  });
});

describe("classifyA2AError: attempt and maxAttempts are echoed", () => {
  const cases: ReadonlyArray<readonly [string, Omit<ClassifyParams, "attempt">, number]> = [
    ["gateway_connection", { gatewayError: new Error("x") }, 3],
    ["rate_limit", { waitError: "rate limit" }, 3],
    ["context_exceeded", { waitError: "context length" }, 1],
    ["server_overload", { waitError: "overloaded" }, 3],
    ["unknown_error", { waitStatus: "error", waitError: "boom" }, 1],
    ["wait_timeout", { waitStatus: "timeout" }, 2],
  ];
  for (const [code, params, maxAttempts] of cases) {
    it.each([0, 1, 2, 7])(`${code} at attempt %i`, (attempt) => {
      const info = classifyA2AError({ ...params, attempt });
      expect(info.code).toBe(code);
      expect(info.attempt).toBe(attempt);
      expect(info.maxAttempts).toBe(maxAttempts);
    });
  }

  it("session_not_found / session_gone echo the attempt with maxAttempts 2", () => {
    for (const attempt of [0, 1, 2, 5]) {
      const info = classifyA2AError({ waitStatus: "not_found", attempt });
      expect(info.attempt).toBe(attempt);
      expect(info.maxAttempts).toBe(2);
    }
  });
});

describe("canRetry: retryable && attempt < maxAttempts - 1 && retry.enabled", () => {
  it.each<[string, ClassifyParams, boolean]>([
    ["gateway_connection at 0", { gatewayError: new Error("x"), attempt: 0 }, true],
    ["gateway_connection at 1", { gatewayError: new Error("x"), attempt: 1 }, true],
    ["gateway_connection at 2", { gatewayError: new Error("x"), attempt: 2 }, false],
    ["rate_limit at 0", { waitError: "429", attempt: 0 }, true],
    ["rate_limit at 1", { waitError: "429", attempt: 1 }, true],
    ["rate_limit at 2", { waitError: "429", attempt: 2 }, false],
    ["server_overload at 1", { waitError: "503", attempt: 1 }, true],
    ["server_overload at 2", { waitError: "503", attempt: 2 }, false],
    ["wait_timeout at 0", { waitStatus: "timeout", attempt: 0 }, true],
    ["wait_timeout at 1", { waitStatus: "timeout", attempt: 1 }, false],
    ["session_not_found at 0", { waitStatus: "not_found", attempt: 0 }, true],
    [
      "session_not_found at 1 (retryable but out of attempts)",
      { waitStatus: "not_found", attempt: 1 },
      false,
    ],
    ["session_gone at 2", { waitStatus: "not_found", attempt: 2 }, false],
    ["context_exceeded at 0", { waitError: "context length", attempt: 0 }, false],
    ["unknown_error at 0", { waitStatus: "error", attempt: 0 }, false],
  ])("%s → %s when enabled", (_label, params, expected) => {
    expect(canRetry(classifyA2AError(params), true)).toBe(expected);
  });

  it.each<[string, ClassifyParams]>([
    ["gateway_connection", { gatewayError: new Error("x"), attempt: 0 }],
    ["rate_limit", { waitError: "429", attempt: 0 }],
    ["server_overload", { waitError: "503", attempt: 0 }],
    ["wait_timeout", { waitStatus: "timeout", attempt: 0 }],
    ["session_not_found", { waitStatus: "not_found", attempt: 0 }],
  ])("retry.enabled false: the first %s failure blocks", (_label, params) => {
    expect(canRetry(classifyA2AError(params), false)).toBe(false);
  });

  it("uses the fields of the info it is given, not the code", () => {
    const base: A2AErrorInfo = {
      category: A2AErrorCategory.TRANSIENT,
      code: "rate_limit",
      message: "m",
      retryable: true,
      attempt: 3,
      maxAttempts: 5,
    };
    expect(canRetry(base, true)).toBe(true);
    expect(canRetry({ ...base, attempt: 4 }, true)).toBe(false);
    expect(canRetry({ ...base, retryable: false, attempt: 0 }, true)).toBe(false);
    expect(canRetry({ ...base, attempt: 0, maxAttempts: 1 }, true)).toBe(false);
  });
});

describe("capMaxAttempts: config retry.maxAttempts caps a class's limit", () => {
  const EVERY_CLASS: ClassifyParams[] = [
    { gatewayError: new Error("x"), attempt: 0 },
    { waitStatus: "not_found", attempt: 0 },
    { waitStatus: "not_found", attempt: 2 },
    { waitError: "429", attempt: 0 },
    { waitError: "context length", attempt: 0 },
    { waitError: "503", attempt: 0 },
    { waitStatus: "error", attempt: 0 },
    { waitStatus: "timeout", attempt: 0 },
  ];

  it("the default 3 changes no class: none allows more than 3 attempts", () => {
    for (const params of EVERY_CLASS) {
      const info = classifyA2AError(params);
      expect(info.maxAttempts, info.code).toBeLessThanOrEqual(3);
      expect(capMaxAttempts(info, 3)).toEqual(info);
    }
  });

  it("lowers a class's limit to the cap, never raises it, and leaves the rest of the info alone", () => {
    const rate = classifyA2AError({ waitError: "429 retry after 3s", attempt: 1 });
    expect(capMaxAttempts(rate, 2)).toEqual({ ...rate, maxAttempts: 2 });
    expect(capMaxAttempts(rate, 10)).toEqual(rate);
    const timeout = classifyA2AError({ waitStatus: "timeout", attempt: 0 });
    expect(capMaxAttempts(timeout, 1)).toMatchObject({ code: "wait_timeout", maxAttempts: 1 });
  });

  it("without a cap (undefined), the class's limit stands", () => {
    for (const params of EVERY_CLASS) {
      const info = classifyA2AError(params);
      expect(capMaxAttempts(info, undefined)).toEqual(info);
    }
  });

  it("with a cap of 1 no class is retried", () => {
    for (const params of EVERY_CLASS) {
      expect(canRetry(capMaxAttempts(classifyA2AError(params), 1), true)).toBe(false);
    }
  });
});

describe("retryResends: wait_timeout and session_not_found resend, the rest wait again", () => {
  it.each<[string, ClassifyParams, boolean]>([
    ["wait_timeout", { waitStatus: "timeout", attempt: 0 }, true],
    ["session_not_found", { waitStatus: "not_found", attempt: 0 }, true],
    ["gateway_connection", { gatewayError: new Error("x"), attempt: 0 }, false],
    ["rate_limit", { waitError: "429", attempt: 0 }, false],
    ["server_overload", { waitError: "503", attempt: 0 }, false],
    ["session_gone", { waitStatus: "not_found", attempt: 2 }, false],
    ["context_exceeded", { waitError: "too long", attempt: 0 }, false],
    ["unknown_error", { waitStatus: "error", attempt: 0 }, false],
  ])("%s → %s", (code, params, expected) => {
    const info = classifyA2AError(params);
    expect(info.code).toBe(code);
    expect(retryResends(info)).toBe(expected);
  });
});

describe("extractRetryAfterMs", () => {
  it.each<[string, number]>([
    ["retry after 30s", 30_000],
    ["Retry-After: 12", 12_000],
    ["retry_after_ms=1500", 1_500],
    ["retryAfter: 3000ms", 3_000],
    ["try again in 20 seconds", 20_000],
    ["please retry in 2.5s", 2_500],
    ["retry after 2 minutes", 120_000],
  ])("understands %j → %i ms", (text, ms) => {
    expect(extractRetryAfterMs(text)).toBe(ms);
  });

  it.each<[string, number]>([
    ["Error 429: Too Many Requests. Please try again in 20 seconds.", 20_000],
    ["HTTP/1.1 429\nRetry-After: 12\nContent-Type: text/plain", 12_000],
    ["RETRY-AFTER: 5", 5_000],
  ])("finds the wait inside a longer text: %j → %i ms", (text, ms) => {
    expect(extractRetryAfterMs(text)).toBe(ms);
  });

  it.each(["rate limit exceeded", "retry later", "processed 1500 items", "", "   "])(
    "nothing recognisable in %j → undefined",
    (text) => {
      expect(extractRetryAfterMs(text)).toBeUndefined();
    },
  );

  it("finds a hint at the end of a 1 MB text", () => {
    expect(extractRetryAfterMs(`${ONE_MB} retry after 5s`)).toBe(5_000);
  });

  it.each<[string, string]>([
    ["1 MB of one letter", ONE_MB],
    ["1 MB of Korean", ONE_MB_KOREAN],
    ["1 MB of 'retry '", "retry ".repeat(170_000)],
    ["1 MB of 'retry after '", "retry after ".repeat(85_000)],
    ["1 MB of 'try again in '", "try again in ".repeat(77_000)],
  ])("%s without a number → undefined", (_label, text) => {
    expect(extractRetryAfterMs(text)).toBeUndefined();
  });

  it.each(JUNK)("given %s: a number or undefined", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => extractRetryAfterMs(value as string),
      ["text"],
      (result) => {
        if (result !== undefined) expect(Number.isFinite(result)).toBe(true);
      },
    );
  });
});

describe("calculateBackoffMs", () => {
  const noHint: A2AErrorInfo = classifyA2AError({ waitError: "overloaded", attempt: 0 });

  it.each<[number, number]>([
    [0, 2_000],
    [1, 4_000],
    [2, 8_000],
    [3, 16_000],
  ])("doubling from 2 s: attempt %i → %i ms at random 0.5", (attempt, ms) => {
    expect(calculateBackoffMs(attempt, noHint, { random: fixed(0.5) })).toBe(ms);
  });

  it.each<[number, number]>([
    [0, 1_500],
    [1, 3_000],
    [3, 12_000],
  ])("random 0 gives 0.75×: attempt %i → %i ms", (attempt, ms) => {
    expect(calculateBackoffMs(attempt, noHint, { random: fixed(0) })).toBe(ms);
  });

  it("random close to 1 gives about 1.25× (never more)", () => {
    const ms = calculateBackoffMs(0, noHint, { random: fixed(0.999_999) });
    expect(ms).toBeGreaterThanOrEqual(2_499);
    expect(ms).toBeLessThanOrEqual(2_500);
    const later = calculateBackoffMs(2, noHint, { random: fixed(0.999_999) });
    expect(later).toBeGreaterThanOrEqual(9_999);
    expect(later).toBeLessThanOrEqual(10_000);
  });

  it("floors the jittered value", () => {
    // 2000 · (0.75 + 0.25·0.5) = 1750; 2000 · (0.75 + 0.3333·0.5) = 1833.3 → 1833
    expect(calculateBackoffMs(0, noHint, { random: fixed(0.25) })).toBe(1_750);
    expect(calculateBackoffMs(0, noHint, { random: fixed(0.3333) })).toBe(1_833);
  });

  it("caps the un-jittered wait at maxMs (default 60 s)", () => {
    // 2000 · 2^5 = 64 s → 60 s
    expect(calculateBackoffMs(5, noHint, { random: fixed(0.5) })).toBe(60_000);
    expect(calculateBackoffMs(10, noHint, { random: fixed(0.5) })).toBe(60_000);
    expect(calculateBackoffMs(10, noHint, { random: fixed(0) })).toBe(45_000);
    const top = calculateBackoffMs(10, noHint, { random: fixed(0.999_999) });
    expect(top).toBeGreaterThan(74_990);
    expect(top).toBeLessThanOrEqual(75_000);
  });

  it("does not overflow on a huge attempt number", () => {
    expect(calculateBackoffMs(5_000, noHint, { random: fixed(0.5) })).toBe(60_000);
  });

  it("honours a custom base and cap", () => {
    const opts: BackoffOptions = { baseMs: 1_000, maxMs: 5_000, random: fixed(0.5) };
    expect(calculateBackoffMs(0, noHint, opts)).toBe(1_000);
    expect(calculateBackoffMs(1, noHint, opts)).toBe(2_000);
    expect(calculateBackoffMs(2, noHint, opts)).toBe(4_000);
    expect(calculateBackoffMs(3, noHint, opts)).toBe(5_000);
    expect(calculateBackoffMs(4, noHint, { baseMs: 500, maxMs: 100_000, random: fixed(0.5) })).toBe(8_000);
    expect(calculateBackoffMs(0, noHint, { baseMs: 300, random: fixed(0) })).toBe(225);
    expect(calculateBackoffMs(6, noHint, { maxMs: 10_000, random: fixed(0) })).toBe(7_500);
  });

  it("returns a positive retryAfterMs exactly, whatever the attempt and random", () => {
    const rateLimit = classifyA2AError({ waitError: "rate limit", attempt: 0 });
    expect(calculateBackoffMs(0, rateLimit, { random: fixed(0) })).toBe(10_000);
    expect(calculateBackoffMs(4, rateLimit, { random: fixed(0.9), maxMs: 1_000 })).toBe(10_000);
    const hinted = classifyA2AError({ waitError: "429: retry after 30s", attempt: 1 });
    expect(calculateBackoffMs(1, hinted, { random: fixed(0.5) })).toBe(30_000);
    expect(calculateBackoffMs(0, { ...noHint, retryAfterMs: 1_234 })).toBe(1_234);
  });

  it.each([0, -500])("a retryAfterMs of %i is not positive: the formula applies", (retryAfterMs) => {
    expect(calculateBackoffMs(1, { ...noHint, retryAfterMs }, { random: fixed(0.5) })).toBe(4_000);
  });

  it("without a random source it still stays within ±25%", () => {
    for (let i = 0; i < 50; i += 1) {
      const ms = calculateBackoffMs(1, noHint);
      expect(ms).toBeGreaterThanOrEqual(3_000);
      expect(ms).toBeLessThanOrEqual(5_000);
    }
  });

  it.each(JUNK)("attempt given as %s: a wait or InvalidInputError naming attempt", (_label, value) => {
    expectAnswerOrInvalidInput(() => calculateBackoffMs(value as number, noHint), ["attempt"], expectBackoff);
  });

  it.each(JUNK)("info given as %s: a wait or InvalidInputError naming info", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => calculateBackoffMs(1, value as A2AErrorInfo, { random: fixed(0.5) }),
      ["info", "retryAfterMs"],
      expectBackoff,
    );
  });

  it.each(JUNK)("options given as %s: a wait or InvalidInputError naming opts", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => calculateBackoffMs(1, noHint, value as BackoffOptions),
      ["opts", "options", "baseMs", "maxMs", "random"],
      expectBackoff,
    );
  });

  it.each(JUNK)("baseMs / maxMs given as %s: a wait or InvalidInputError naming it", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => calculateBackoffMs(1, noHint, { baseMs: value as number, random: fixed(0.5) }),
      ["baseMs"],
      expectBackoff,
    );
    expectAnswerOrInvalidInput(
      () => calculateBackoffMs(1, noHint, { maxMs: value as number, random: fixed(0.5) }),
      ["maxMs"],
      expectBackoff,
    );
  });

  it.each(JUNK)("random given as %s: a wait or InvalidInputError naming random", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => calculateBackoffMs(1, noHint, { random: value as () => number }),
      ["random"],
      expectBackoff,
    );
  });

  it.each<[string, number]>([
    ["NaN", Number.NaN],
    ["-0.5", -0.5],
    ["2", 2],
    ["Infinity", Number.POSITIVE_INFINITY],
  ])("random() returning %s: a wait within bounds or InvalidInputError naming random", (_label, r) => {
    expectAnswerOrInvalidInput(
      () => calculateBackoffMs(1, noHint, { random: fixed(r) }),
      ["random"],
      (ms) => {
        expectBackoff(ms);
        expect(ms).toBeLessThanOrEqual(5_000);
      },
    );
  });
});

describe("buildNoReplyOutcomeMessage", () => {
  it.each<[string, OutcomeParams, string]>([
    ["waitError first", { waitError: "LLM 서버 과부하" }, `${PREFIX} (LLM 서버 과부하)`],
    [
      "waitError beats not_found and the exceeded wait",
      { waitError: "rate limit", waitStatus: "not_found", maxWaitExceeded: true, maxWaitMs: 60_000 },
      `${PREFIX} (rate limit)`,
    ],
    [
      "waitError beats status error",
      { waitError: "context length exceeded", waitStatus: "error" },
      `${PREFIX} (context length exceeded)`,
    ],
    ["not_found", { waitStatus: "not_found" }, `${PREFIX} (실행 상태를 찾을 수 없음)`],
    [
      "not_found beats the exceeded wait",
      { waitStatus: "not_found", maxWaitExceeded: true },
      `${PREFIX} (실행 상태를 찾을 수 없음)`,
    ],
    ["error", { waitStatus: "error" }, `${PREFIX} (실행 오류)`],
    [
      "error beats the exceeded wait",
      { waitStatus: "error", maxWaitExceeded: true, maxWaitMs: 1_000 },
      `${PREFIX} (실행 오류)`,
    ],
    ["an empty waitError is no reason", { waitError: "", waitStatus: "error" }, `${PREFIX} (실행 오류)`],
    ["exceeded wait, default 300초", { maxWaitExceeded: true }, `${PREFIX} (대기 시간 300초 초과)`],
    [
      "exceeded wait with status timeout",
      { waitStatus: "timeout", maxWaitExceeded: true },
      `${PREFIX} (대기 시간 300초 초과)`,
    ],
    [
      "exceeded wait of 120 s",
      { maxWaitExceeded: true, maxWaitMs: 120_000 },
      `${PREFIX} (대기 시간 120초 초과)`,
    ],
    [
      "exceeded wait of 600 s",
      { maxWaitExceeded: true, maxWaitMs: 600_000 },
      `${PREFIX} (대기 시간 600초 초과)`,
    ],
    ["nothing", {}, PREFIX],
    ["status timeout without the exceeded flag", { waitStatus: "timeout" }, PREFIX],
    ["maxWaitMs without the exceeded flag", { maxWaitExceeded: false, maxWaitMs: 5_000 }, PREFIX],
  ])("%s", (_label, params, expected) => {
    expect(buildNoReplyOutcomeMessage(params)).toBe(expected);
  });

  it("the bare sentence has no parentheses", () => {
    expect(buildNoReplyOutcomeMessage({})).not.toMatch(/[()]/);
  });

  it("a 1 MB waitError still gives the blocked sentence with the error as reason", () => {
    const message = buildNoReplyOutcomeMessage({ waitError: ONE_MB });
    expect(message.startsWith(`${PREFIX} (aaa`)).toBe(true);
    expect(message.endsWith(")")).toBe(true);
  });

  it.each(JUNK)("params given as %s: a blocked sentence", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => buildNoReplyOutcomeMessage(value as OutcomeParams),
      ["params"],
      (message) => expect(message.startsWith(PREFIX)).toBe(true),
    );
  });

  it.each(JUNK)("each field given as %s: a blocked sentence", (_label, value) => {
    for (const field of ["waitStatus", "waitError", "maxWaitExceeded", "maxWaitMs"]) {
      expectAnswerOrInvalidInput(
        () => buildNoReplyOutcomeMessage({ [field]: value } as OutcomeParams),
        [field],
        (message) => expect(message.startsWith(PREFIX)).toBe(true),
      );
    }
  });
});

describe("classifyA2AError, canRetry and retryResends given bad input", () => {
  it.each(JUNK)("params given as %s: an error info or InvalidInputError naming attempt", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => classifyA2AError(value as ClassifyParams),
      ["attempt", "params"],
      expectErrorInfo,
    );
  });

  it.each(JUNK)("attempt given as %s: an error info or InvalidInputError naming attempt", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => classifyA2AError({ waitStatus: "timeout", attempt: value as number }),
      ["attempt"],
      expectErrorInfo,
    );
  });

  it.each(JUNK)("waitStatus / waitError / gatewayError given as %s", (_label, value) => {
    for (const field of ["waitStatus", "waitError", "gatewayError"]) {
      expectAnswerOrInvalidInput(
        () => classifyA2AError({ [field]: value, attempt: 0 } as ClassifyParams),
        [field],
        expectErrorInfo,
      );
    }
  });

  it("a 1 MB waitError is classified", () => {
    expect(classifyA2AError({ waitStatus: "error", waitError: ONE_MB, attempt: 0 }).code).toBe(
      "unknown_error",
    );
    expect(classifyA2AError({ waitStatus: "error", waitError: `${ONE_MB} 503`, attempt: 0 }).code).toBe(
      "server_overload",
    );
    expect(classifyA2AError({ waitStatus: "error", waitError: ONE_MB_KOREAN, attempt: 0 }).code).toBe(
      "unknown_error",
    );
    expect(classifyA2AError({ waitError: "9".repeat(1_000_000), waitStatus: "error", attempt: 0 }).code).toBe(
      "unknown_error",
    );
    const rateLimited = classifyA2AError({ waitError: `rate limit ${ONE_MB}`, attempt: 0 });
    expect(rateLimited.code).toBe("rate_limit");
    expect(rateLimited.retryAfterMs).toBe(10_000);
  });

  it("a gateway error with a 1 MB message is classified", () => {
    expect(classifyA2AError({ gatewayError: new Error(ONE_MB), attempt: 0 }).code).toBe("gateway_connection");
  });

  it.each(JUNK)("canRetry given %s as info: a boolean or InvalidInputError naming info", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => canRetry(value as A2AErrorInfo, true),
      ["info"],
      (result) => expect(typeof result).toBe("boolean"),
    );
  });

  it.each(JUNK)("canRetry given %s as retry.enabled: a boolean", (_label, value) => {
    const info = classifyA2AError({ waitStatus: "timeout", attempt: 0 });
    expectAnswerOrInvalidInput(
      () => canRetry(info, value as boolean),
      ["retryEnabled", "enabled"],
      (result) => expect(typeof result).toBe("boolean"),
    );
  });

  it.each(JUNK)("retryResends given %s: a boolean or InvalidInputError naming info", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => retryResends(value as A2AErrorInfo),
      ["info"],
      (result) => expect(typeof result).toBe("boolean"),
    );
  });
});

/**
 * The retry loop played on the policies: classify the failure, decide with canRetry,
 * compute the backoff, then resend or wait again. The script lists each wait's outcome.
 */
type WaitOutcome = "ok" | Omit<ClassifyParams, "attempt">;
interface RetryRecord {
  number: number;
  code: string;
  category: A2AErrorCategory;
  maxAttempts: number;
  backoffMs: number;
  action: "resend" | "wait_again";
}
function playRetryPolicy(script: readonly WaitOutcome[], enabled: boolean, random = fixed(0.5)) {
  const retries: RetryRecord[] = [];
  let attempt = 0;
  for (const outcome of script) {
    if (outcome === "ok") return { outcome: "ok" as const, retryAttempts: attempt, retries };
    const info = classifyA2AError({ ...outcome, attempt });
    if (!canRetry(info, enabled)) {
      return { outcome: "blocked" as const, code: info.code, retryAttempts: attempt, retries };
    }
    retries.push({
      number: attempt + 1,
      code: info.code,
      category: info.category,
      maxAttempts: info.maxAttempts,
      backoffMs: calculateBackoffMs(attempt, info, { random }),
      action: retryResends(info) ? "resend" : "wait_again",
    });
    attempt += 1;
  }
  throw new Error("the script ran out before the flow ended");
}

describe("the retry policy sequence", () => {
  it("rate-limit timeline: rate limit → TRANSIENT → a2a.retry attempt 1 with a 2 s backoff → wait again → reply", () => {
    const played = playRetryPolicy(
      [{ waitStatus: "error", waitError: "429 Too Many Requests: retry after 2s" }, "ok"],
      true,
    );
    expect(played).toEqual({
      outcome: "ok",
      retryAttempts: 1,
      retries: [
        {
          number: 1,
          code: "rate_limit",
          category: A2AErrorCategory.TRANSIENT,
          maxAttempts: 3,
          backoffMs: 2_000,
          action: "wait_again",
        },
      ],
    });
  });

  it("a rate limit without a hint waits the 10 s default, not the 2 s backoff", () => {
    const played = playRetryPolicy([{ waitStatus: "error", waitError: "rate limit" }, "ok"], true);
    expect(played.retries.map((r) => r.backoffMs)).toEqual([10_000]);
  });

  it("server overload: two retries with 2 s and 4 s backoffs, the third failure blocks", () => {
    const overload = { waitStatus: "error", waitError: "overloaded" };
    const played = playRetryPolicy([overload, overload, overload, "ok"], true);
    expect(played.outcome).toBe("blocked");
    expect(played.retryAttempts).toBe(2);
    expect(played.retries.map((r) => [r.number, r.backoffMs, r.action])).toEqual([
      [1, 2_000, "wait_again"],
      [2, 4_000, "wait_again"],
    ]);
  });

  it("wait timeout: one resend, then blocked", () => {
    const played = playRetryPolicy([{ waitStatus: "timeout" }, { waitStatus: "timeout" }, "ok"], true);
    expect(played.outcome).toBe("blocked");
    expect(played.retries).toHaveLength(1);
    expect(played.retries[0]?.action).toBe("resend");
    expect(played.retries[0]?.code).toBe("wait_timeout");
  });

  it("session not found: one resend that succeeds", () => {
    const played = playRetryPolicy([{ waitStatus: "not_found" }, "ok"], true);
    expect(played.outcome).toBe("ok");
    expect(played.retries.map((r) => [r.code, r.category, r.action])).toEqual([
      ["session_not_found", A2AErrorCategory.CONDITIONAL, "resend"],
    ]);
  });

  it("a permanent error blocks at once", () => {
    const played = playRetryPolicy(
      [{ waitStatus: "error", waitError: "context_length_exceeded" }, "ok"],
      true,
    );
    expect(played).toMatchObject({
      outcome: "blocked",
      code: "context_exceeded",
      retryAttempts: 0,
      retries: [],
    });
  });

  it("retry.enabled false: the first failure blocks, as before retries existed", () => {
    const played = playRetryPolicy([{ gatewayError: new Error("ECONNRESET") }, "ok"], false);
    expect(played).toMatchObject({
      outcome: "blocked",
      code: "gateway_connection",
      retryAttempts: 0,
      retries: [],
    });
  });
});
