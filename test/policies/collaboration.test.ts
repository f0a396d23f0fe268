// Collaboration policies: thread names and route keys, observer records, Discord failures, session keys.
import { DiscordAPIError, HTTPError, RateLimitError } from "discord.js";
import { describe, expect, it } from "vitest";
import {
  buildCollaborationThreadName,
  buildReportThreadName,
  classifyDiscordFailure,
  extractObserverTokens,
  filterBootstrapFiles,
  InvalidInputError,
  isA2ASessionKey,
  isReportThreadName,
  resolveThreadSessionKey,
  threadRouteKey,
  toObserverRecord,
} from "../../src/policies/entryPoint.js";
import type { InboundDiscordMessage } from "../../src/index.js";
import {
  buildThreadStarterMessage,
  DISCORD_TRANSIENT_MAX_RETRIES,
  discordTransientBackoffMs,
  isDiscordChannelSessionKey,
  MAX_THREAD_NAME_LENGTH,
} from "../../src/policies/index.js";
import { callLoosely, expectAnswerOrInvalidInput, junkCases, ONE_MB } from "../support/badInput.js";

const expectDefinedOrInvalidInput = (run: () => unknown, param: string): unknown =>
  expectAnswerOrInvalidInput(run, [param]);

const MB = ONE_MB.length;
const HUGE = ONE_MB;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const JUNK_CASES = junkCases().filter(([, value]) => typeof value !== "string");
const JUNK: unknown[] = JUNK_CASES.map(([, value]) => value);
/** Undefined, empty, 1 MB and junk, for parameters that take text. */
const BAD_TEXT_CASES: ReadonlyArray<readonly [string, unknown]> = [
  ['""', ""],
  ["a 1 MB string", HUGE],
  ...JUNK_CASES,
];

/** Calls a function with arguments the type system would refuse, as a JavaScript caller could. */

// ---------------------------------------------------------------------------------------------
// Thread names (collaboration and report threads)
// ---------------------------------------------------------------------------------------------
describe("buildCollaborationThreadName", () => {
  const HEAD = "[협업] 루다 → 이든"; // 12 UTF-16 units
  const PREFIX = `${HEAD} · `; // 15 UTF-16 units

  it('builds "[협업] {from} → {to} · {topic}" from a given topic', () => {
    expect(
      buildCollaborationThreadName({ fromName: "루다", toName: "이든", topic: "인증 모듈 코드 리뷰" }),
    ).toBe("[협업] 루다 → 이든 · 인증 모듈 코드 리뷰");
  });

  it("takes the topic from the message's first line when no topic is given", () => {
    expect(
      buildCollaborationThreadName({
        fromName: "루다",
        toName: "이든",
        message: "인증 모듈 코드 리뷰\n로그인 토큰 만료 처리도 같이 봐 주세요",
      }),
    ).toBe("[협업] 루다 → 이든 · 인증 모듈 코드 리뷰");
  });

  it("skips blank lines to find the message's first non-empty line", () => {
    expect(
      buildCollaborationThreadName({
        fromName: "루다",
        toName: "이든",
        message: "\n   \n\t\n인증 모듈 코드 리뷰\n두 번째 줄",
      }),
    ).toBe("[협업] 루다 → 이든 · 인증 모듈 코드 리뷰");
  });

  it("handles CRLF line endings in the message", () => {
    expect(
      buildCollaborationThreadName({
        fromName: "루다",
        toName: "이든",
        message: "\r\n인증 모듈 코드 리뷰\r\n둘째",
      }),
    ).toBe("[협업] 루다 → 이든 · 인증 모듈 코드 리뷰");
  });

  it("prefers the given topic over the message", () => {
    expect(
      buildCollaborationThreadName({
        fromName: "루다",
        toName: "이든",
        topic: "배포 일정",
        message: "인증 모듈 코드 리뷰",
      }),
    ).toBe("[협업] 루다 → 이든 · 배포 일정");
  });

  it("cuts a topic taken from the message to its first 30 characters", () => {
    expect(
      buildCollaborationThreadName({
        fromName: "루다",
        toName: "이든",
        message: "Please review the authentication module before Friday\nthanks",
      }),
    ).toBe("[협업] 루다 → 이든 · Please review the authenticati");
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든", message: "가".repeat(45) })).toBe(
      `${PREFIX}${"가".repeat(30)}`,
    );
  });

  it("keeps a message line of exactly 30 characters whole", () => {
    const line = "나".repeat(30);
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든", message: line })).toBe(
      `${PREFIX}${line}`,
    );
  });

  it("does not cut a given topic to 30 characters when the name fits in 100", () => {
    const topic = "t".repeat(40);
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든", topic })).toBe(
      `${PREFIX}${topic}`,
    );
  });

  it('without any topic is "[협업] {from} → {to}"', () => {
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든" })).toBe(HEAD);
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든", message: "" })).toBe(HEAD);
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든", message: "  \n \n\t" })).toBe(
      HEAD,
    );
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든", topic: "" })).toBe(HEAD);
  });

  it("keeps a name of exactly 100 characters unchanged", () => {
    const topic = "t".repeat(MAX_THREAD_NAME_LENGTH - PREFIX.length);
    const name = buildCollaborationThreadName({ fromName: "루다", toName: "이든", topic });
    expect(MAX_THREAD_NAME_LENGTH).toBe(100);
    expect(name).toBe(`${PREFIX}${topic}`);
    expect(name).toHaveLength(100);
  });

  it("cuts a name over 100 characters by cutting the topic, keeping the prefix intact", () => {
    for (const topic of ["t".repeat(86), "가".repeat(200), `${"word ".repeat(60)}end`]) {
      const name = buildCollaborationThreadName({ fromName: "루다", toName: "이든", topic });
      expect(name.length).toBeLessThanOrEqual(100);
      expect(name.startsWith(PREFIX)).toBe(true);
      const kept = name.slice(PREFIX.length);
      expect(kept.length).toBeGreaterThan(0);
      expect(topic.startsWith(kept)).toBe(true);
    }
  });

  it("never splits a surrogate pair when cutting the topic (odd and even room)", () => {
    for (const fromName of ["루다", "루다a"]) {
      const topic = "😀".repeat(60);
      const name = buildCollaborationThreadName({ fromName, toName: "이든", topic });
      expect(name.length).toBeLessThanOrEqual(100);
      expect(name).not.toMatch(LONE_SURROGATE);
      expect(name.startsWith(`[협업] ${fromName} → 이든 · 😀`)).toBe(true);
    }
  });

  it("never splits a surrogate pair when cutting the message line to 30", () => {
    for (const line of [`a${"😀".repeat(20)}`, "😀".repeat(20)]) {
      const name = buildCollaborationThreadName({ fromName: "루다", toName: "이든", message: line });
      expect(name).not.toMatch(LONE_SURROGATE);
      const topic = name.slice(PREFIX.length);
      expect(topic.length).toBeGreaterThan(0);
      expect(topic.length).toBeLessThanOrEqual(30);
      expect(line.startsWith(topic)).toBe(true);
    }
  });

  it("cuts a 1 MB message to a 30-character topic", () => {
    expect(buildCollaborationThreadName({ fromName: "루다", toName: "이든", message: HUGE })).toBe(
      `${PREFIX}${"a".repeat(30)}`,
    );
  });

  it("stays within 100 characters with 1 MB names or topic", () => {
    for (const p of [
      { fromName: HUGE, toName: "이든" },
      { fromName: "루다", toName: HUGE, topic: "x" },
      { fromName: "루다", toName: "이든", topic: HUGE },
    ]) {
      const name = buildCollaborationThreadName(p);
      expect(name.length).toBeLessThanOrEqual(100);
      expect(name.startsWith("[협업] ")).toBe(true);
    }
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["{}", {}],
    ["all fields empty", { fromName: "", toName: "", topic: "", message: "" }],
  ])("answers or throws InvalidInputError for p = %s", (_label, p) => {
    const name = expectDefinedOrInvalidInput(() => callLoosely(buildCollaborationThreadName, p), "p");
    if (typeof name === "string") expect(name.length).toBeLessThanOrEqual(100);
  });

  it.each(BAD_TEXT_CASES)("answers or throws InvalidInputError with every field = %s", (_label, junk) => {
    const name = expectDefinedOrInvalidInput(
      () =>
        callLoosely(buildCollaborationThreadName, {
          fromName: junk,
          toName: junk,
          topic: junk,
          message: junk,
        }),
      "fromName",
    );
    if (typeof name === "string") {
      expect(name.length).toBeLessThanOrEqual(100);
      expect(name.startsWith("[협업]")).toBe(true);
    }
  });
});

describe("buildThreadStarterMessage", () => {
  it("is the thread's name behind 🧵, on one line", () => {
    expect(buildThreadStarterMessage("[협업] 루다 → 이든 · 인증 모듈 코드 리뷰")).toBe(
      "🧵 [협업] 루다 → 이든 · 인증 모듈 코드 리뷰",
    );
    expect(buildThreadStarterMessage("  [협업] 루다 →\n이든  ")).toBe("🧵 [협업] 루다 → 이든");
  });

  it("carries no mention markup: user, nickname and role mentions lose their brackets", () => {
    const text = buildThreadStarterMessage("[협업] 루다 → 이든 · <@123> <@!456> <@&789> 확인");
    expect(text).toBe("🧵 [협업] 루다 → 이든 · @123 @!456 @&789 확인");
    expect(text).not.toMatch(/<@/);
  });
});

describe("buildReportThreadName / isReportThreadName", () => {
  it('is "[리포트] {eventType} · {ISO time}"', () => {
    const ts = Date.UTC(2026, 1, 26, 9, 30, 15, 250);
    expect(buildReportThreadName("a2a.complete", ts)).toBe(
      "[리포트] a2a.complete · 2026-02-26T09:30:15.250Z",
    );
    expect(buildReportThreadName("a2a.send", 0)).toBe("[리포트] a2a.send · 1970-01-01T00:00:00.000Z");
  });

  it("recognises report names by their [리포트] prefix", () => {
    expect(isReportThreadName(buildReportThreadName("a2a.retry", Date.UTC(2026, 0, 1)))).toBe(true);
    expect(isReportThreadName("[리포트] anything")).toBe(true);
    expect(isReportThreadName("[리포트]")).toBe(true);
  });

  it("does not take collaboration threads or other names for report threads", () => {
    expect(isReportThreadName("[협업] 루다 → 이든 · 인증 모듈 코드 리뷰")).toBe(false);
    expect(isReportThreadName("리포트 정리")).toBe(false);
    expect(isReportThreadName("주간 [리포트] 정리")).toBe(false);
    expect(isReportThreadName("[리포트 ]")).toBe(false);
    expect(isReportThreadName("")).toBe(false);
    expect(isReportThreadName()).toBe(false);
    expect(isReportThreadName(undefined)).toBe(false);
  });

  it("answers false for junk and 1 MB names", () => {
    for (const junk of JUNK) expect(callLoosely(isReportThreadName, junk)).toBe(false);
    expect(isReportThreadName(HUGE)).toBe(false);
    expect(isReportThreadName(`[리포트]${HUGE}`)).toBe(true);
  });

  it("throws InvalidInputError naming ts for an unusable time", () => {
    for (const ts of [Number.NaN, Number.POSITIVE_INFINITY, 1e20, undefined, "2026-02-26", null]) {
      expect(() => callLoosely(buildReportThreadName, "a2a.send", ts)).toThrow(InvalidInputError);
      expect(() => callLoosely(buildReportThreadName, "a2a.send", ts)).toThrow(/\bts\b/);
    }
  });

  it("answers for undefined, empty, junk and 1 MB event types and stays a valid report name", () => {
    for (const eventType of [undefined, "", HUGE, ...JUNK]) {
      const name = expectDefinedOrInvalidInput(
        () => callLoosely(buildReportThreadName, eventType, 0),
        "eventType",
      );
      if (typeof name === "string") {
        expect(name.length).toBeLessThanOrEqual(100);
        expect(isReportThreadName(name)).toBe(true);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Thread route keys
// ---------------------------------------------------------------------------------------------
describe("threadRouteKey", () => {
  it('is "from:to" without a topic', () => {
    expect(threadRouteKey("ruda", "eden")).toBe("ruda:eden");
    expect(threadRouteKey("루다", "이든")).toBe("루다:이든");
  });

  it("is directional: 루다:이든 and 이든:루다 are different threads", () => {
    expect(threadRouteKey("루다", "이든")).not.toBe(threadRouteKey("이든", "루다"));
    expect(threadRouteKey("eden", "ruda")).toBe("eden:ruda");
  });

  it('is "from:to:topic" with a topic, splitting one pair by topic', () => {
    expect(threadRouteKey("ruda", "eden", "auth")).toBe("ruda:eden:auth");
    expect(threadRouteKey("ruda", "eden", "auth")).not.toBe(threadRouteKey("ruda", "eden", "deploy"));
  });

  it('treats "" (and an absent topic) as no topic', () => {
    expect(threadRouteKey("ruda", "eden", "")).toBe("ruda:eden");
    expect(threadRouteKey("ruda", "eden", undefined)).toBe("ruda:eden");
  });

  it("answers or throws InvalidInputError naming the agent id for bad ids", () => {
    for (const bad of [undefined, "", ...JUNK]) {
      expectDefinedOrInvalidInput(() => callLoosely(threadRouteKey, bad, "eden"), "fromAgentId");
      expectDefinedOrInvalidInput(() => callLoosely(threadRouteKey, "ruda", bad), "toAgentId");
      expectDefinedOrInvalidInput(() => callLoosely(threadRouteKey, "ruda", "eden", bad), "topicId");
    }
  });

  it("handles 1 MB ids", () => {
    expect(threadRouteKey(HUGE, "eden")).toBe(`${HUGE}:eden`);
    expect(threadRouteKey("ruda", "eden", HUGE)).toHaveLength(MB + "ruda:eden:".length);
  });
});

// ---------------------------------------------------------------------------------------------
// Observer tokens and records
// ---------------------------------------------------------------------------------------------
describe("extractObserverTokens", () => {
  it("takes the ids of <@id> and <@!id> user mentions", () => {
    expect(
      extractObserverTokens("<@123456789012345678> 확인 부탁, <@!987654321098765432>도").mentions,
    ).toEqual(["123456789012345678", "987654321098765432"]);
  });

  it("takes @name words, Korean and Latin", () => {
    expect(extractObserverTokens("@이든 코드 리뷰 부탁해요").mentions).toEqual(["이든"]);
    expect(extractObserverTokens("hey @eden, can you look?").mentions).toEqual(["eden"]);
  });

  it("does not take e-mail addresses for mentions", () => {
    expect(extractObserverTokens("메일은 eden@example.com 으로 주세요").mentions).toEqual([]);
    expect(extractObserverTokens("write to ruda.kim@corp.co.kr").mentions).toEqual([]);
  });

  it("de-duplicates mentions in first-seen order", () => {
    expect(extractObserverTokens("@eden <@111> @루다 <@!111> @eden <@222>").mentions).toEqual([
      "eden",
      "111",
      "루다",
      "222",
    ]);
  });

  it("takes http(s) URLs without trailing punctuation", () => {
    expect(extractObserverTokens("PR: https://github.com/org/repo/pull/42.").urls).toEqual([
      "https://github.com/org/repo/pull/42",
    ]);
    expect(extractObserverTokens("(see https://example.com/a/b), and http://x.io/y!").urls).toEqual([
      "https://example.com/a/b",
      "http://x.io/y",
    ]);
    expect(extractObserverTokens("링크 https://example.com/q?a=1&b=2; 확인").urls).toEqual([
      "https://example.com/q?a=1&b=2",
    ]);
  });

  it("does not take non-http schemes or bare domains for URLs", () => {
    expect(extractObserverTokens("ftp://example.com/file and example.com").urls).toEqual([]);
  });

  it("de-duplicates URLs in first-seen order", () => {
    expect(
      extractObserverTokens("https://b.example/2 https://a.example/1, https://b.example/2.").urls,
    ).toEqual(["https://b.example/2", "https://a.example/1"]);
  });

  it('takes standalone #123 as "#123"', () => {
    expect(extractObserverTokens("#42 고쳤어요").prNumbers).toEqual(["#42"]);
    expect(extractObserverTokens("fixes #42, #43 and (#42)").prNumbers).toEqual(["#42", "#43"]);
  });

  it("does not take <#123> channel mentions for PR numbers", () => {
    expect(extractObserverTokens("<#123456789012345678> 채널에서 보자").prNumbers).toEqual([]);
    expect(extractObserverTokens("<#111> and #7").prNumbers).toEqual(["#7"]);
  });

  it("does not take #fragments inside URLs for PR numbers", () => {
    const tokens = extractObserverTokens(
      "https://example.com/docs#42 그리고 https://github.com/o/r/pull/9#123",
    );
    expect(tokens.prNumbers).toEqual([]);
    expect(tokens.urls).toEqual(["https://example.com/docs#42", "https://github.com/o/r/pull/9#123"]);
  });

  it("takes backticked spans without the backticks", () => {
    expect(extractObserverTokens("run `npm test` then `tsc --noEmit`").codeRefs).toEqual([
      "npm test",
      "tsc --noEmit",
    ]);
  });

  it("takes paths with a slash and an extension, and file:line", () => {
    expect(extractObserverTokens("see src/a/b.ts please").codeRefs).toEqual(["src/a/b.ts"]);
    expect(extractObserverTokens("error at b.ts:42 again").codeRefs).toEqual(["b.ts:42"]);
  });

  it("takes name() calls", () => {
    expect(extractObserverTokens("handleMessage() 에서 터져요").codeRefs).toEqual(["handleMessage()"]);
  });

  it("lists code references de-duplicated in first-seen order", () => {
    expect(
      extractObserverTokens("`config` 보고 src/auth/token.ts 의 refresh() 확인, 다시 `config` 와 refresh()")
        .codeRefs,
    ).toEqual(["config", "src/auth/token.ts", "refresh()"]);
    expect(extractObserverTokens("`src/a/b.ts` and src/a/b.ts").codeRefs).toEqual(["src/a/b.ts"]);
  });

  it("extracts every kind from one message (a review request)", () => {
    expect(
      extractObserverTokens(
        "<@555> @이든 PR #42 리뷰 부탁: https://github.com/org/repo/pull/42. src/auth/login.ts 의 verify() 가 `null` 반환",
      ),
    ).toEqual({
      mentions: ["555", "이든"],
      urls: ["https://github.com/org/repo/pull/42"],
      prNumbers: ["#42"],
      codeRefs: ["src/auth/login.ts", "verify()", "null"],
    });
  });

  it("answers empty lists for text without tokens, undefined, empty and junk", () => {
    const none = { mentions: [], urls: [], prNumbers: [], codeRefs: [] };
    expect(extractObserverTokens("그냥 평범한 문장입니다.")).toEqual(none);
    expect(extractObserverTokens("")).toEqual(none);
    for (const junk of JUNK) {
      const tokens = expectDefinedOrInvalidInput(() => callLoosely(extractObserverTokens, junk), "text");
      if (tokens !== undefined) expect(tokens).toEqual(none);
    }
  });

  it("handles 1 MB adversarial strings", () => {
    const none = { mentions: [], urls: [], prNumbers: [], codeRefs: [] };
    expect(extractObserverTokens(HUGE)).toEqual(none);
    expect(extractObserverTokens("a/".repeat(MB / 2))).toEqual(none);
    expect(extractObserverTokens("@".repeat(MB))).toEqual(none);
    expect(extractObserverTokens("#".repeat(MB)).prNumbers).toEqual([]);
    expect(extractObserverTokens("`".repeat(MB)).codeRefs).toEqual([]);
    expect(extractObserverTokens("a.".repeat(MB / 2)).codeRefs).toEqual([]);
    expect(extractObserverTokens("<@".repeat(MB / 2)).mentions).toEqual([]);
    for (const text of [
      "@a".repeat(MB / 2),
      "https://".repeat(MB / 8),
      "#1".repeat(MB / 2),
      "a(".repeat(MB / 2),
    ]) {
      const tokens = extractObserverTokens(text);
      expect(Array.isArray(tokens.mentions)).toBe(true);
    }
  });
});

describe("toObserverRecord", () => {
  const content =
    "<@222222222222222222> 인증 모듈 리뷰 부탁해요. 로그인 토큰 만료 처리가 이상합니다. 자세한 내용은 https://github.com/org/repo/pull/42 와 src/auth/token.ts 참고, #42";
  const message: InboundDiscordMessage = {
    messageId: "m-1",
    channelId: "thread-9",
    threadId: "thread-9",
    threadName: "[협업] 루다 → 이든 · 인증 모듈 코드 리뷰",
    parentChannelId: "chan-1",
    guildId: "guild-1",
    authorId: "111111111111111111",
    authorIsBot: true,
    content,
    mentionUserIds: ["222222222222222222"],
    ts: 1_772_000_000_000,
  };

  it("keeps the compact fields only", () => {
    expect(toObserverRecord(message, "루다")).toEqual({
      messageId: "m-1",
      sender: "루다",
      summary: content.slice(0, 50),
      ts: 1_772_000_000_000,
      channelId: "thread-9",
      threadId: "thread-9",
      mentionedBots: ["222222222222222222"],
      extractedTokens: {
        mentions: ["222222222222222222"],
        urls: ["https://github.com/org/repo/pull/42"],
        prNumbers: ["#42"],
        codeRefs: ["src/auth/token.ts"],
      },
    });
  });

  it("summarises with a plain cut to the first 50 characters, not the original", () => {
    const record = toObserverRecord(message, "루다");
    expect(record.summary).toHaveLength(50);
    expect(content.startsWith(record.summary)).toBe(true);
    expect(record.summary).not.toBe(content);
  });

  it("keeps a short message whole as its summary", () => {
    expect(toObserverRecord({ ...message, content: "짧은 메시지" }, "루다").summary).toBe("짧은 메시지");
  });

  it("keeps the tokens the 50-character cut loses", () => {
    const record = toObserverRecord(message, "루다");
    expect(record.summary).not.toContain("https://");
    expect(record.extractedTokens.urls).toEqual(["https://github.com/org/repo/pull/42"]);
  });

  it("does not split a surrogate pair at the 50th character", () => {
    const record = toObserverRecord({ ...message, content: `${"a".repeat(49)}😀 tail` }, "루다");
    expect(record.summary).not.toMatch(LONE_SURROGATE);
    expect(record.summary.startsWith("a".repeat(49))).toBe(true);
  });

  it("has no threadId and no mentioned bots for a plain channel message without mentions", () => {
    const { threadId: _t, threadName: _n, parentChannelId: _p, ...plain } = message;
    const record = toObserverRecord(
      { ...plain, channelId: "chan-1", content: "hello", mentionUserIds: [] },
      "사용자",
    );
    expect(record.threadId).toBeUndefined();
    expect(record.mentionedBots ?? []).toEqual([]);
    expect(record.channelId).toBe("chan-1");
    expect(record.sender).toBe("사용자");
  });

  it("handles a 1 MB message", () => {
    const record = toObserverRecord({ ...message, content: HUGE }, "루다");
    expect(record.summary).toBe("a".repeat(50));
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["{}", {}],
  ])("answers or throws InvalidInputError naming m for m = %s", (_label, m) => {
    expectDefinedOrInvalidInput(() => callLoosely(toObserverRecord, m, "루다"), "m");
  });

  it.each(BAD_TEXT_CASES)("answers or throws InvalidInputError for senderName = %s", (_label, junk) => {
    const record = expectDefinedOrInvalidInput(
      () => callLoosely(toObserverRecord, message, junk),
      "senderName",
    );
    if (record !== undefined) expect((record as { summary: unknown }).summary).toBe(content.slice(0, 50));
  });

  it.each(BAD_TEXT_CASES)(
    "answers or throws InvalidInputError for content and mentions = %s",
    (_label, junk) => {
      const record = expectDefinedOrInvalidInput(
        () => callLoosely(toObserverRecord, { ...message, content: junk, mentionUserIds: junk }, "루다"),
        "content",
      );
      if (record !== undefined) {
        const summary = (record as { summary: unknown }).summary;
        expect(typeof summary).toBe("string");
        expect((summary as string).length).toBeLessThanOrEqual(50);
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Discord failures (discord.js errors and plain `{ status }` objects)
// ---------------------------------------------------------------------------------------------
describe("classifyDiscordFailure", () => {
  const noBody = { body: undefined, files: undefined };
  const apiError = (status: number, code: number, message: string) =>
    new DiscordAPIError({ code, message }, code, status, "POST", "https://discord.com/api/v10/x", noBody);

  it("403 (DiscordAPIError 50013 Missing Permissions) → permission, not retryable, escalate", () => {
    const expected = { kind: "permission", retryable: false, escalate: true };
    expect(classifyDiscordFailure(apiError(403, 50013, "Missing Permissions"))).toMatchObject(expected);
    expect(
      classifyDiscordFailure({
        name: "DiscordAPIError[50013]",
        status: 403,
        code: 50013,
        message: "Missing Permissions",
      }),
    ).toMatchObject(expected);
    expect(classifyDiscordFailure({ name: "DiscordAPIError", status: 403, code: 50001 })).toMatchObject(
      expected,
    );
    expect(classifyDiscordFailure({ status: 403 })).toMatchObject(expected);
  });

  it("404 (DiscordAPIError 10003 Unknown Channel) → not_found, not retryable, escalate", () => {
    const expected = { kind: "not_found", retryable: false, escalate: true };
    expect(classifyDiscordFailure(apiError(404, 10003, "Unknown Channel"))).toMatchObject(expected);
    expect(classifyDiscordFailure({ name: "DiscordAPIError", status: 404, code: 10008 })).toMatchObject(
      expected,
    );
    expect(classifyDiscordFailure({ status: 404 })).toMatchObject(expected);
  });

  it("429 from discord.js RateLimitError (retryAfter in ms, no status) → rate_limit with the same ms", () => {
    const err = new RateLimitError({
      timeToReset: 2_500,
      limit: 5,
      method: "POST",
      hash: "hash",
      url: "https://discord.com/api/v10/channels/1/messages",
      route: "/channels/:id/messages",
      majorParameter: "1",
      global: false,
      retryAfter: 2_500,
      sublimitTimeout: 0,
      scope: "user",
    });
    expect(classifyDiscordFailure(err)).toEqual({
      kind: "rate_limit",
      retryable: true,
      escalate: false,
      retryAfterMs: 2_500,
    });
  });

  it("429 from a RateLimitError-shaped object → rate_limit, retryAfter taken as ms", () => {
    expect(
      classifyDiscordFailure({
        name: "RateLimitError",
        retryAfter: 750,
        global: false,
        route: "/channels/:id",
      }),
    ).toEqual({ kind: "rate_limit", retryable: true, escalate: false, retryAfterMs: 750 });
  });

  it("429 raw API body: retry_after in seconds → milliseconds", () => {
    expect(classifyDiscordFailure({ status: 429, retry_after: 1.5 })).toEqual({
      kind: "rate_limit",
      retryable: true,
      escalate: false,
      retryAfterMs: 1_500,
    });
  });

  it("429 DiscordAPIError whose rawError (the API body) says retry_after in seconds → milliseconds", () => {
    const body = { code: 0, message: "You are being rate limited.", retry_after: 0.75, global: false };
    const err = new DiscordAPIError(body, 0, 429, "POST", "https://discord.com/api/v10/x", noBody);
    expect(classifyDiscordFailure(err)).toEqual({
      kind: "rate_limit",
      retryable: true,
      escalate: false,
      retryAfterMs: 750,
    });
  });

  it("429 without a wait → rate_limit, retryable, no escalation", () => {
    const result = classifyDiscordFailure({ status: 429 });
    expect(result).toMatchObject({ kind: "rate_limit", retryable: true, escalate: false });
    if (result.retryAfterMs !== undefined) expect(result.retryAfterMs).toBeGreaterThan(0);
  });

  it("5xx (HTTPError after discord.js's own retries) → transient, retryable", () => {
    const expected = { kind: "transient", retryable: true, escalate: false };
    const httpError = new HTTPError(
      500,
      "Internal Server Error",
      "POST",
      "https://discord.com/api/v10/x",
      noBody,
    );
    expect(classifyDiscordFailure(httpError)).toMatchObject(expected);
    expect(classifyDiscordFailure({ name: "HTTPError", status: 500 })).toMatchObject(expected);
    for (const status of [500, 502, 503, 504, 599]) {
      expect(classifyDiscordFailure({ status })).toMatchObject(expected);
    }
  });

  it("timeouts and connection errors without a status → transient, retryable", () => {
    const expected = { kind: "transient", retryable: true, escalate: false };
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    for (const err of [
      { code: "ECONNRESET" },
      reset,
      { code: "ETIMEDOUT" },
      { code: "ECONNREFUSED" },
      { code: "UND_ERR_CONNECT_TIMEOUT" },
      { name: "AbortError", message: "This operation was aborted" },
      new DOMException("This operation was aborted", "AbortError"),
      Object.assign(new Error("Request timed out"), { name: "TimeoutError" }),
    ]) {
      expect(classifyDiscordFailure(err)).toMatchObject(expected);
    }
  });

  it("other 4xx → invalid, not retryable, no escalation", () => {
    const expected = { kind: "invalid", retryable: false, escalate: false };
    expect(classifyDiscordFailure(apiError(400, 50035, "Invalid Form Body"))).toMatchObject(expected);
    expect(classifyDiscordFailure(apiError(400, 160004, "A thread has already been created"))).toMatchObject(
      expected,
    );
    for (const status of [400, 401, 405, 409, 413, 422]) {
      expect(classifyDiscordFailure({ status })).toMatchObject(expected);
    }
  });

  it("only permission and not_found escalate", () => {
    const samples: unknown[] = [
      { status: 403 },
      { status: 404 },
      { status: 429, retry_after: 1 },
      { status: 500 },
      { code: "ECONNRESET" },
      { status: 400 },
      undefined,
    ];
    for (const err of samples) {
      const result = classifyDiscordFailure(err);
      expect(result.escalate).toBe(result.kind === "permission" || result.kind === "not_found");
      expect(result.retryable).toBe(result.kind === "rate_limit" || result.kind === "transient");
    }
  });

  it("only whole-number status codes count: 403.5 is not a 403, 404.5 not a 404", () => {
    for (const status of [403.5, 404.5, 429.5, 400.5]) {
      const result = classifyDiscordFailure({ status });
      expect(result.kind).not.toBe("permission");
      expect(result.kind).not.toBe("not_found");
      expect(result.kind).not.toBe("rate_limit");
      expect(result.kind).not.toBe("invalid");
      expect(result.escalate).toBe(false);
    }
    for (const status of [Number.NaN, Number.POSITIVE_INFINITY, -403]) {
      expect(classifyDiscordFailure({ status }).escalate).toBe(false);
    }
  });

  it("answers for undefined, empty strings, 1 MB strings and junk without escalating", () => {
    for (const err of [undefined, "", HUGE, { status: HUGE }, { name: HUGE }, ...JUNK]) {
      const result = expectDefinedOrInvalidInput(() => classifyDiscordFailure(err), "err");
      if (result !== undefined) {
        expect(["permission", "not_found", "rate_limit", "transient", "invalid"]).toContain(
          (result as { kind: string }).kind,
        );
        expect((result as { escalate: boolean }).escalate).toBe(false);
      }
    }
  });
});

describe("discordTransientBackoffMs", () => {
  it("allows 3 retries after the first failure", () => {
    expect(DISCORD_TRANSIENT_MAX_RETRIES).toBe(3);
  });

  it("waits 1 s, 2 s, 4 s before retries 1, 2, 3", () => {
    expect([1, 2, 3].map(discordTransientBackoffMs)).toEqual([1_000, 2_000, 4_000]);
  });

  it.each(BAD_TEXT_CASES)(
    "answers a finite wait or throws InvalidInputError naming retry for %s",
    (_label, bad) => {
      let value: unknown;
      try {
        value = callLoosely(discordTransientBackoffMs, bad);
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidInputError);
        expect((error as Error).message).toContain("retry");
        return;
      }
      expect(typeof value).toBe("number");
      expect(Number.isFinite(value)).toBe(true);
      expect(value as number).toBeGreaterThan(0);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Session keys and bootstrap files
// ---------------------------------------------------------------------------------------------
describe("session keys", () => {
  it('resolves a thread session key "agent:{agentId}:discord:channel:{threadId}"', () => {
    expect(resolveThreadSessionKey("eden", "1111111")).toBe("agent:eden:discord:channel:1111111");
    expect(resolveThreadSessionKey("eden", "1111111")).not.toBe(resolveThreadSessionKey("eden", "2222222"));
  });

  it("recognises A2A session keys agent:*:a2a:*", () => {
    expect(isA2ASessionKey("agent:eden:a2a:3f1c2a9e-8b1d-4c1e-9a7e-1d2c3b4a5f60")).toBe(true);
    expect(isA2ASessionKey("agent:ruda:a2a:x")).toBe(true);
    expect(isA2ASessionKey("agent:eden:discord:channel:1111111")).toBe(false);
    expect(isA2ASessionKey("agent:eden:main")).toBe(false);
    expect(isA2ASessionKey("agent:eden:a2a")).toBe(false);
    expect(isA2ASessionKey("a2a:agent:eden:x")).toBe(false);
  });

  it("does not take a thread session key for an A2A one", () => {
    expect(isA2ASessionKey(resolveThreadSessionKey("eden", "123456"))).toBe(false);
    expect(isDiscordChannelSessionKey(resolveThreadSessionKey("eden", "123456"))).toBe(true);
  });

  it("recognises Discord channel session keys agent:*:discord:channel:*", () => {
    expect(isDiscordChannelSessionKey("agent:eden:discord:channel:1111111")).toBe(true);
    expect(isDiscordChannelSessionKey("agent:eden:a2a:abc")).toBe(false);
    expect(isDiscordChannelSessionKey("agent:eden:main")).toBe(false);
    expect(isDiscordChannelSessionKey("agent:eden:discord:dm:1")).toBe(false);
  });

  it("answers false for undefined, empty, 1 MB and junk keys", () => {
    for (const key of [undefined, "", HUGE, `agent:${HUGE}`, ...JUNK]) {
      expect(callLoosely(isA2ASessionKey, key)).toBe(false);
      expect(callLoosely(isDiscordChannelSessionKey, key)).toBe(false);
    }
  });

  it("answers or throws InvalidInputError naming the parameter for bad ids", () => {
    for (const bad of [undefined, "", ...JUNK]) {
      expectDefinedOrInvalidInput(() => callLoosely(resolveThreadSessionKey, bad, "123"), "agentId");
      expectDefinedOrInvalidInput(() => callLoosely(resolveThreadSessionKey, "eden", bad), "threadId");
    }
    expect(resolveThreadSessionKey("eden", HUGE)).toBe(`agent:eden:discord:channel:${HUGE}`);
  });
});

describe("filterBootstrapFiles", () => {
  const ALL = [
    "AGENTS.md",
    "TOOLS.md",
    "IDENTITY.md",
    "MEMORY.md",
    "SOUL.md",
    "USER.md",
    "CURRENT_TASK.md",
    "HEARTBEAT.md",
  ];
  const files = () => ALL.map((name) => ({ name }));
  const names = (list: { name: string }[]) => list.map((f) => f.name);

  it("A2A sessions keep only AGENTS.md, TOOLS.md and IDENTITY.md", () => {
    expect(names(filterBootstrapFiles("agent:eden:a2a:uuid-1", files()))).toEqual([
      "AGENTS.md",
      "TOOLS.md",
      "IDENTITY.md",
    ]);
  });

  it("Discord channel and thread sessions get every file except HEARTBEAT.md", () => {
    const expected = ALL.filter((n) => n !== "HEARTBEAT.md");
    expect(names(filterBootstrapFiles("agent:eden:discord:channel:1111111", files()))).toEqual(expected);
    expect(names(filterBootstrapFiles(resolveThreadSessionKey("eden", "2222222"), files()))).toEqual(
      expected,
    );
  });

  it("other sessions get everything", () => {
    expect(names(filterBootstrapFiles("agent:eden:main", files()))).toEqual(ALL);
    expect(names(filterBootstrapFiles("agent:eden:discord:dm:1", files()))).toEqual(ALL);
  });

  it("keeps extra file properties", () => {
    const list = [
      { name: "AGENTS.md", content: "a" },
      { name: "HEARTBEAT.md", content: "h" },
    ];
    expect(filterBootstrapFiles("agent:eden:discord:channel:1", list)).toEqual([
      { name: "AGENTS.md", content: "a" },
    ]);
  });

  it("does not mutate its input", () => {
    for (const key of ["agent:eden:a2a:1", "agent:eden:discord:channel:1", "agent:eden:main"]) {
      const input = files();
      const snapshot = structuredClone(input);
      const result = filterBootstrapFiles(key, input);
      expect(input).toEqual(snapshot);
      result.push({ name: "EXTRA.md" });
      expect(input).toEqual(snapshot);
    }
  });

  it("answers or throws InvalidInputError for undefined, empty, 1 MB and junk input", () => {
    for (const key of [undefined, "", HUGE, ...JUNK]) {
      const result = expectDefinedOrInvalidInput(
        () => callLoosely(filterBootstrapFiles, key, files()),
        "sessionKey",
      );
      if (result !== undefined) expect(names(result as { name: string }[])).toEqual(ALL);
    }
    for (const list of [
      undefined,
      null,
      "",
      HUGE,
      42,
      {},
      [null, undefined, 42, { name: 7 }, { name: "SOUL.md" }],
    ]) {
      expectDefinedOrInvalidInput(() => callLoosely(filterBootstrapFiles, "agent:eden:a2a:1", list), "files");
      expectDefinedOrInvalidInput(
        () => callLoosely(filterBootstrapFiles, "agent:eden:discord:channel:1", list),
        "files",
      );
    }
  });
});
