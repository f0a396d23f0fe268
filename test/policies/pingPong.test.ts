// Ping-pong policies: intent, turns, early termination, announce, prompts.
// Expectations are taken from the specification, not from running the code.
import { describe, expect, it } from "vitest";
import {
  A2AMessageIntent,
  ANNOUNCE_SKIP_TOKEN,
  buildAgentToAgentAnnounceContext,
  buildAgentToAgentReplyContext,
  calculateSimilarity,
  classifyMessageIntent,
  decideAnnounce,
  isAnnounceSkip,
  isReplySkip,
  REPLY_SKIP_TOKEN,
  resolveEffectivePingPongTurns,
  shouldRunAnnounce,
  shouldTerminatePingPong,
} from "../../src/policies/entryPoint.js";
import { expectAnswerOrInvalidInput, junkCases, ONE_MB, ONE_MB_KOREAN } from "../support/badInput.js";

const JUNK = junkCases("REPLY_SKIP");

type TurnsParams = Parameters<typeof resolveEffectivePingPongTurns>[0];
type TerminateParams = Parameters<typeof shouldTerminatePingPong>[0];
type AnnounceParams = Parameters<typeof decideAnnounce>[0];
type ReplyContextParams = Parameters<typeof buildAgentToAgentReplyContext>[0];
type AnnounceContextParams = Parameters<typeof buildAgentToAgentAnnounceContext>[0];

const INTENTS = Object.values(A2AMessageIntent);
const NOTIFICATION = { intent: A2AMessageIntent.NOTIFICATION, suggestedTurns: 0, confidence: 1 };
const ESCALATION = { intent: A2AMessageIntent.ESCALATION, suggestedTurns: 0, confidence: 1 };
const RESULT_REPORT = { intent: A2AMessageIntent.RESULT_REPORT, suggestedTurns: 1, confidence: 0.8 };
const QUESTION = { intent: A2AMessageIntent.QUESTION, suggestedTurns: 1, confidence: 0.7 };
const COLLABORATION = { intent: A2AMessageIntent.COLLABORATION, suggestedTurns: -1, confidence: 0.7 };
const DEFAULT_QUESTION = { intent: A2AMessageIntent.QUESTION, suggestedTurns: 1, confidence: 0.5 };

describe("A2AMessageIntent", () => {
  it("has the lower-case string values", () => {
    expect(A2AMessageIntent.NOTIFICATION).toBe("notification");
    expect(A2AMessageIntent.QUESTION).toBe("question");
    expect(A2AMessageIntent.COLLABORATION).toBe("collaboration");
    expect(A2AMessageIntent.ESCALATION).toBe("escalation");
    expect(A2AMessageIntent.RESULT_REPORT).toBe("result_report");
  });
});

describe("classifyMessageIntent", () => {
  const expectIntent = (message: string, expected: typeof QUESTION) =>
    expect(classifyMessageIntent(message)).toEqual(expected);

  describe("the Korean examples the rules were written for", () => {
    it("'이 파일 어디 있어?' is a question (1 turn)", () => expectIntent("이 파일 어디 있어?", QUESTION));
    it("'이 아키텍처 설계 같이 검토하자' is a collaboration (configured turns)", () =>
      expectIntent("이 아키텍처 설계 같이 검토하자", COLLABORATION));
    it("'[NO_REPLY_NEEDED]' is a notification (0 turns)", () =>
      expectIntent("[NO_REPLY_NEEDED]", NOTIFICATION));
  });

  describe("rule 1: explicit tags", () => {
    it.each([
      "[NO_REPLY_NEEDED] 배포가 끝났습니다",
      "[NOTIFICATION] 서버 점검 예정입니다",
      "[no_reply_needed] fyi",
      "[Notification] 작업 완료",
      "서버 점검 예정 [NOTIFICATION] 어디에 공지할까?",
      "[URGENT] [NOTIFICATION] 공지",
    ])("%j is a notification, whatever else it says", (message) => expectIntent(message, NOTIFICATION));

    it.each([
      "[URGENT] 프로덕션 장애 발생",
      "[ESCALATION] 결제 서버 다운",
      "[urgent] 로그 어디에 있어?",
      "[Escalation] 작업 완료 보고",
      "[escalation] 같이 검토하자",
    ])("%j is an escalation (0 turns), whatever else it says", (message) =>
      expectIntent(message, ESCALATION),
    );
  });

  describe("rule 2: result report, before questions and collaboration", () => {
    it.each([
      "[outcome] blocked: 응답을 받지 못했습니다",
      "[OUTCOME] done",
      "[result] 테스트 통과",
      "[RESULT] 어떻게 할까?",
      "작업이 모두 완료되었습니다",
      "작업 완료",
      "빌드 결과를 보고드립니다",
      "로그 분석 결과입니다",
      "작업 완료했는데 배포는 어떻게 해?",
      "분석 결과 알려줘",
      "결과 보고서 같이 검토하자",
      "분석 결과에 대한 피드백 부탁드립니다",
    ])("%j is a result report (1 turn, 0.8)", (message) => expectIntent(message, RESULT_REPORT));

    it.each(["완료된 작업 목록입니다", "보고 결과입니다", "결과 분석 중입니다"])(
      "%j has the words in the wrong order: not a result report",
      (message) => expectIntent(message, DEFAULT_QUESTION),
    );

    it("the pair must be on one line (the rule's `a.*b`: `.` does not cross a line break)", () =>
      expectIntent("작업 목록입니다\n완료 여부는 나중에", DEFAULT_QUESTION));
  });

  describe("rule 3: question", () => {
    it.each([
      "이 파일 어디 있어?",
      "배포는 어떻게 해",
      "설정 파일 어디에 둬",
      "뭐가 문제야",
      "로그 확인 좀 해줘",
      "확인해줘",
      "빌드 상태 알려줘",
      "리뷰 어떻게 해",
      "피드백 줄 수 있어?",
      "이 설계 같이 검토할 수 있어?",
      "Where is the config?",
    ])("%j is a question (1 turn, 0.7)", (message) => expectIntent(message, QUESTION));

    it.each(["이 파일 어디 있어?   ", "이 파일 어디 있어?\n", "\t  이 파일 어디 있어? \r\n "])(
      "a trailing '?' counts after trimming: %j",
      (message) => expectIntent(message, QUESTION),
    );

    it.each(["이거 맞나? 그럼 진행할게", "해줘 확인"])(
      "%j does not match a question pattern: default question 0.5",
      (message) => expectIntent(message, DEFAULT_QUESTION),
    );
  });

  describe("rule 4: collaboration (suggestedTurns -1 = the configured turns)", () => {
    it.each([
      "이 아키텍처 설계 같이 검토하자",
      "같이 검토",
      "이 문제 함께 논의해 봅시다",
      "이 안에 대해 의견 좀 줘",
      "피드백 부탁드립니다",
      "코드 리뷰 부탁드립니다",
    ])("%j is a collaboration", (message) => expectIntent(message, COLLABORATION));

    it.each(["검토 같이 하자", "논의 함께 하자", "줘 의견"])(
      "%j has the words in the wrong order: default question 0.5",
      (message) => expectIntent(message, DEFAULT_QUESTION),
    );
  });

  describe("English equivalents (word boundaries only)", () => {
    it("'Can you review this design' is a collaboration", () =>
      expectIntent("Can you review this design", COLLABORATION));
    it("'Task is done' is a result report", () => expectIntent("Task is done", RESULT_REPORT));
    it("'Task is done.' is a result report", () => expectIntent("Task is done.", RESULT_REPORT));
    it.each(["Please preview the landing page", "The reviewers are on leave"])(
      "%j contains 'review' only inside a word: default question 0.5",
      (message) => expectIntent(message, DEFAULT_QUESTION),
    );
  });

  describe("default: a question with confidence 0.5", () => {
    it.each([
      ["a greeting", "안녕하세요"],
      ["an empty message", ""],
      ["a blank message", "   \n\t "],
      ["1 MB of one letter", ONE_MB],
      ["1 MB of 작업 without 완료", ONE_MB_KOREAN],
      ["1 MB of 같이 without 검토", "같이".repeat(500_000)],
      ["1 MB of 함께 without 논의", "함께".repeat(500_000)],
      ["1 MB of 확인 without 해줘", "확인".repeat(500_000)],
      ["1 MB of 의견 without 줘", "의견".repeat(500_000)],
      ["1 MB of 분석 without 결과", "분석".repeat(500_000)],
      ["1 MB of 결과 without 보고", "결과".repeat(500_000)],
      ["1 MB of 작업 lines and 완료 on its own line", `${"작업\n".repeat(333_333)}완료`],
      ["1 MB of 'task '", "task ".repeat(200_000)],
    ])("%s", (_label, message) => expectIntent(message, DEFAULT_QUESTION));
  });

  describe("long messages that do match", () => {
    it("1 MB of 작업 then 완료 is a result report", () =>
      expectIntent(`${ONE_MB_KOREAN}완료`, RESULT_REPORT));
    it("1 MB of 같이 then 검토 is a collaboration", () =>
      expectIntent(`${"같이".repeat(500_000)}검토`, COLLABORATION));
    it("1 MB ending in '?' is a question", () => expectIntent(`${ONE_MB}?`, QUESTION));
    it("1 MB of '?' is a question", () => expectIntent("?".repeat(1_000_000), QUESTION));
    it("1 MB after a tag is a notification", () => expectIntent(`[NOTIFICATION] ${ONE_MB}`, NOTIFICATION));
  });

  it.each(JUNK)("given %s: an intent or InvalidInputError naming message", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => classifyMessageIntent(value as string),
      ["message"],
      (result) => {
        expect(INTENTS).toContain(result.intent);
        expect(Number.isInteger(result.suggestedTurns)).toBe(true);
        expect(result.confidence).toBeGreaterThan(0);
        expect(result.confidence).toBeLessThanOrEqual(1);
      },
    );
  });
});

describe("resolveEffectivePingPongTurns", () => {
  // Explicit skip → 0; suggested 0 → 0; suggested -1 → config; else min(suggested, config).
  const byIntent = [NOTIFICATION, ESCALATION, QUESTION, RESULT_REPORT, COLLABORATION, DEFAULT_QUESTION];
  const configs = [0, 1, 2, 5, 10];
  const expected = (suggested: number, config: number) => {
    if (suggested === 0) return 0;
    if (suggested === -1) return config;
    return Math.min(suggested, config);
  };

  for (const classified of byIntent) {
    it.each(configs)(
      `${classified.intent} (suggested ${classified.suggestedTurns}) with config %i`,
      (configMaxTurns) => {
        expect(
          resolveEffectivePingPongTurns({
            configMaxTurns,
            classifiedIntent: classified,
            explicitSkipPingPong: false,
          }),
        ).toBe(expected(classified.suggestedTurns, configMaxTurns));
      },
    );
    it.each(configs)(`${classified.intent} with config %i and an explicit skip → 0`, (configMaxTurns) => {
      expect(
        resolveEffectivePingPongTurns({
          configMaxTurns,
          classifiedIntent: classified,
          explicitSkipPingPong: true,
        }),
      ).toBe(0);
    });
  }

  it("the matrix spelled out for config 5", () => {
    const turns = (classifiedIntent: TurnsParams["classifiedIntent"]) =>
      resolveEffectivePingPongTurns({ configMaxTurns: 5, classifiedIntent, explicitSkipPingPong: false });
    expect(turns(NOTIFICATION)).toBe(0);
    expect(turns(ESCALATION)).toBe(0);
    expect(turns(QUESTION)).toBe(1);
    expect(turns(RESULT_REPORT)).toBe(1);
    expect(turns(COLLABORATION)).toBe(5);
  });

  it("a larger suggestion is capped by the config, a smaller one kept", () => {
    const classifiedIntent = { intent: A2AMessageIntent.QUESTION, suggestedTurns: 3 };
    expect(
      resolveEffectivePingPongTurns({ configMaxTurns: 5, classifiedIntent, explicitSkipPingPong: false }),
    ).toBe(3);
    expect(
      resolveEffectivePingPongTurns({ configMaxTurns: 2, classifiedIntent, explicitSkipPingPong: false }),
    ).toBe(2);
  });

  it.each<[string, number, number]>([
    ["이 파일 어디 있어?", 5, 1],
    ["이 아키텍처 설계 같이 검토하자", 5, 5],
    ["이 아키텍처 설계 같이 검토하자", 10, 10],
    ["이 아키텍처 설계 같이 검토하자", 0, 0],
    ["[NO_REPLY_NEEDED] 배포 끝", 5, 0],
    ["[URGENT] 장애", 5, 0],
    ["작업 완료", 5, 1],
    ["작업 완료", 0, 0],
    ["Can you review this design", 7, 7],
  ])("end to end: %j with config %i → %i turns", (message, configMaxTurns, turns) => {
    const classifiedIntent = classifyMessageIntent(message);
    expect(
      resolveEffectivePingPongTurns({ configMaxTurns, classifiedIntent, explicitSkipPingPong: false }),
    ).toBe(turns);
  });

  const expectTurns = (turns: number) => {
    expect(Number.isInteger(turns)).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(0);
  };

  it.each(JUNK)("params given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => resolveEffectivePingPongTurns(value as TurnsParams),
      ["params", "configMaxTurns", "classifiedIntent"],
      expectTurns,
    );
  });

  it.each(JUNK)("configMaxTurns given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () =>
        resolveEffectivePingPongTurns({
          configMaxTurns: value as number,
          classifiedIntent: COLLABORATION,
          explicitSkipPingPong: false,
        }),
      ["configMaxTurns"],
      expectTurns,
    );
  });

  it.each(JUNK)("classifiedIntent given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () =>
        resolveEffectivePingPongTurns({
          configMaxTurns: 5,
          classifiedIntent: value as TurnsParams["classifiedIntent"],
          explicitSkipPingPong: false,
        }),
      ["classifiedIntent"],
      expectTurns,
    );
    expectAnswerOrInvalidInput(
      () =>
        resolveEffectivePingPongTurns({
          configMaxTurns: 5,
          classifiedIntent: { intent: A2AMessageIntent.QUESTION, suggestedTurns: value as number },
          explicitSkipPingPong: false,
        }),
      ["suggestedTurns"],
      expectTurns,
    );
  });

  it.each(JUNK)("explicitSkipPingPong given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () =>
        resolveEffectivePingPongTurns({
          configMaxTurns: 5,
          classifiedIntent: COLLABORATION,
          explicitSkipPingPong: value as boolean,
        }),
      ["explicitSkipPingPong"],
      expectTurns,
    );
  });
});

describe("calculateSimilarity", () => {
  it.each<[string, string, number]>([
    ["a b c", "a b c", 1],
    ["a b c", "a b d", 2 / 4],
    ["a b", "c d", 0],
    ["the cat sat", "the cat sat on the mat", 3 / 5],
    ["b a", "a b", 1],
    ["Hello World", "hello world", 1],
    ["hello, world", "hello world", 1 / 3],
    ["a a a b", "a b", 1],
    ["a\tb\nc", "a b c", 1],
    ["  a b  ", "a b", 1],
    ["작업 완료 했습니다", "작업 완료 했어요", 2 / 4],
    ["배포 완료", "배포 완료", 1],
  ])("%j vs %j → %d", (a, b, similarity) => {
    expect(calculateSimilarity(a, b)).toBeCloseTo(similarity, 12);
    expect(calculateSimilarity(b, a)).toBeCloseTo(similarity, 12);
  });

  it.each<[string, string]>([
    ["", ""],
    ["   ", "\n\t"],
    ["", "a"],
    ["a b", ""],
    [" ", "a b"],
  ])("texts without words: %j vs %j → 0", (a, b) => {
    expect(calculateSimilarity(a, b)).toBe(0);
  });

  it("handles 1 MB texts", () => {
    expect(calculateSimilarity(ONE_MB, ONE_MB)).toBe(1);
    expect(calculateSimilarity("a ".repeat(500_000), "a")).toBe(1);
    expect(calculateSimilarity(ONE_MB, "b")).toBe(0);
    expect(calculateSimilarity(ONE_MB_KOREAN, ONE_MB_KOREAN)).toBe(1);
    expect(calculateSimilarity("x y ".repeat(250_000), "x z")).toBeCloseTo(1 / 3, 12);
  });

  it.each(JUNK)("given %s on either side: a number in [0, 1]", (_label, value) => {
    const check = (result: number) => {
      expect(result).toBeGreaterThanOrEqual(0);
      expect(result).toBeLessThanOrEqual(1);
    };
    expectAnswerOrInvalidInput(() => calculateSimilarity(value as string, "a b"), ["a"], check);
    expectAnswerOrInvalidInput(() => calculateSimilarity("a b", value as string), ["b"], check);
  });
});

describe("isReplySkip / isAnnounceSkip", () => {
  it("the tokens are exactly REPLY_SKIP and ANNOUNCE_SKIP", () => {
    expect(REPLY_SKIP_TOKEN).toBe("REPLY_SKIP");
    expect(ANNOUNCE_SKIP_TOKEN).toBe("ANNOUNCE_SKIP");
  });

  const skipForms = (token: string) => [
    token,
    token.toLowerCase(),
    `${token[0]}${token.slice(1).toLowerCase()}`,
    `  ${token}  `,
    `\n${token}\n`,
    `${token}.`,
    `${token},`,
    `${token}!`,
    `${token}?`,
    `${token};`,
    `${token}:`,
    `${token} 더 할 말이 없습니다`,
    `${token} - nothing to add`,
  ];
  const notSkipForms = (token: string) => [
    `${token}_NOW`,
    `${token}PED`,
    `${token}s`,
    `${token}-`,
    `${token}/`,
    `${token}1`,
    `I will ${token}`,
    `"${token}"`,
    token.replace("_", " "),
    "",
    "   ",
  ];

  it.each(skipForms("REPLY_SKIP"))("isReplySkip(%j) is true", (text) => expect(isReplySkip(text)).toBe(true));
  it.each(notSkipForms("REPLY_SKIP"))("isReplySkip(%j) is false", (text) =>
    expect(isReplySkip(text)).toBe(false),
  );
  it.each(skipForms("ANNOUNCE_SKIP"))("isAnnounceSkip(%j) is true", (text) =>
    expect(isAnnounceSkip(text)).toBe(true),
  );
  it.each(notSkipForms("ANNOUNCE_SKIP"))("isAnnounceSkip(%j) is false", (text) =>
    expect(isAnnounceSkip(text)).toBe(false),
  );

  it("each function knows only its own token", () => {
    expect(isReplySkip("ANNOUNCE_SKIP")).toBe(false);
    expect(isAnnounceSkip("REPLY_SKIP")).toBe(false);
  });

  it("no argument is not a skip", () => {
    expect(isReplySkip()).toBe(false);
    expect(isAnnounceSkip()).toBe(false);
  });

  it("1 MB texts", () => {
    expect(isReplySkip(ONE_MB)).toBe(false);
    expect(isReplySkip(`REPLY_SKIP ${ONE_MB}`)).toBe(true);
    expect(isAnnounceSkip(`${ONE_MB} ANNOUNCE_SKIP`)).toBe(false);
    expect(isAnnounceSkip(`${" ".repeat(1_000_000)}ANNOUNCE_SKIP${" ".repeat(1_000_000)}`)).toBe(true);
  });

  it.each(JUNK)("given %s: a boolean", (_label, value) => {
    const check = (result: boolean) => expect(typeof result).toBe("boolean");
    expectAnswerOrInvalidInput(() => isReplySkip(value as string), ["text"], check);
    expectAnswerOrInvalidInput(() => isAnnounceSkip(value as string), ["text"], check);
  });
});

describe("shouldTerminatePingPong", () => {
  const SUBSTANTIVE = "배포 스크립트를 수정했고 스테이징에서 검증 중입니다";
  const SUBSTANTIVE_EN = "the deployment script was updated and verified on staging this morning";
  const UNRELATED = "database migration plan needs another index on the orders table";
  const decide = (replyText: string, previousReplies: string[] = [], turn = 1, maxTurns = 5) =>
    shouldTerminatePingPong({ replyText, turn, maxTurns, previousReplies });
  const KEEP_GOING = { terminate: false, reason: "" };

  it("the fixtures are long enough not to be minimal content", () => {
    for (const text of [SUBSTANTIVE, SUBSTANTIVE_EN, UNRELATED])
      expect(text.trim().length).toBeGreaterThanOrEqual(20);
  });

  it("a substantive reply keeps the conversation going", () => {
    expect(decide(SUBSTANTIVE)).toEqual(KEEP_GOING);
    expect(decide(SUBSTANTIVE_EN, [UNRELATED])).toEqual(KEEP_GOING);
  });

  it("the turn limit is not this function's business", () => {
    expect(decide(SUBSTANTIVE, [], 5, 5)).toEqual(KEEP_GOING);
    expect(decide(SUBSTANTIVE, [], 10, 3)).toEqual(KEEP_GOING);
  });

  describe("1. explicit skip beats everything", () => {
    it.each(["REPLY_SKIP", "reply_skip.", "  REPLY_SKIP  ", "REPLY_SKIP 더 할 말이 없습니다?"])(
      "%j",
      (text) => {
        expect(decide(text)).toEqual({ terminate: true, reason: "explicit_skip" });
      },
    );

    it("even when it repeats the last reply and is short", () => {
      expect(decide("REPLY_SKIP", ["REPLY_SKIP"])).toEqual({ terminate: true, reason: "explicit_skip" });
    });

    it("REPLY_SKIPPED is not a skip (it is minimal content)", () => {
      expect(decide("REPLY_SKIPPED")).toEqual({ terminate: true, reason: "minimal_content" });
    });
  });

  describe("2. repetition: similarity to the last previous reply above 0.85", () => {
    it("an identical reply", () => {
      expect(decide(SUBSTANTIVE_EN, [SUBSTANTIVE_EN])).toEqual({
        terminate: true,
        reason: "repetition_detected",
      });
    });

    it("the same words in another order and case", () => {
      const shuffled = "This Morning the deployment script was updated and verified on staging";
      expect(decide(shuffled, [SUBSTANTIVE_EN])).toEqual({ terminate: true, reason: "repetition_detected" });
    });

    it("only the LAST previous reply counts", () => {
      expect(decide(SUBSTANTIVE_EN, [SUBSTANTIVE_EN, UNRELATED])).toEqual(KEEP_GOING);
      expect(decide(SUBSTANTIVE_EN, [UNRELATED, SUBSTANTIVE_EN])).toEqual({
        terminate: true,
        reason: "repetition_detected",
      });
    });

    const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i + 1}`).join(" ");
    it("exactly 0.85 (17 of 20 words) is not repetition", () => {
      expect(calculateSimilarity(words(20), words(17))).toBeCloseTo(0.85, 12);
      expect(decide(words(20), [words(17)])).toEqual(KEEP_GOING);
    });

    it("0.9 (18 of 20 words) and 6/7 ≈ 0.857 are repetition", () => {
      expect(decide(words(20), [words(18)])).toEqual({ terminate: true, reason: "repetition_detected" });
      expect(decide(words(7), [words(6)])).toEqual({ terminate: true, reason: "repetition_detected" });
    });

    it("beats minimal content", () => {
      expect(decide("좋아요", ["좋아요"])).toEqual({ terminate: true, reason: "repetition_detected" });
    });

    it("beats the conclusion check", () => {
      const ack = "알겠습니다 말씀하신 대로 배포 일정을 금요일로 조정하겠습니다";
      expect(decide(ack, [ack])).toEqual({ terminate: true, reason: "repetition_detected" });
    });

    it("applies to a repeated question too", () => {
      const question = "배포 일정은 언제로 잡을까요? 금요일 오후 괜찮으신가요?";
      expect(decide(question, [question])).toEqual({ terminate: true, reason: "repetition_detected" });
    });

    it("no previous reply, no repetition", () => {
      expect(decide(SUBSTANTIVE_EN, [])).toEqual(KEEP_GOING);
    });
  });

  describe("3. minimal content: trimmed length < 20 UTF-16 units and no ? or ？", () => {
    it.each([
      "좋아요",
      "네",
      "ok",
      "",
      "   ",
      "a".repeat(19),
      `   ${"a".repeat(19)}   `,
      "알겠습니다",
      "Thanks",
    ])("%j", (text) => {
      expect(decide(text)).toEqual({ terminate: true, reason: "minimal_content" });
    });

    it("an agent's closing '더 이상 논의할 사항이 없습니다' is ended by the system", () => {
      const text = "더 이상 논의할 사항이 없습니다";
      expect(text.length).toBeLessThan(20);
      expect(decide(text)).toEqual({ terminate: true, reason: "minimal_content" });
    });

    it("20 units is enough", () => {
      expect(decide("a".repeat(20))).toEqual(KEEP_GOING);
    });

    it("length is counted in UTF-16 units, not code points", () => {
      expect(decide("😀".repeat(10))).toEqual(KEEP_GOING);
      expect(decide(`${"😀".repeat(9)}a`)).toEqual({ terminate: true, reason: "minimal_content" });
    });

    it.each(["왜요?", "왜요？", "?", "Why?", "어디에？ 있죠"])("a short question %j keeps going", (text) => {
      expect(decide(text)).toEqual(KEEP_GOING);
    });
  });

  describe("4. conclusion: starts with an acknowledgement and asks nothing", () => {
    it.each([
      "알겠습니다. 말씀하신 대로 배포 일정을 금요일로 조정하겠습니다",
      "확인했습니다. 수정된 스키마로 마이그레이션을 다시 실행하겠습니다",
      "감사합니다. 덕분에 장애 원인을 빠르게 찾을 수 있었습니다",
      "네, 이해했습니다. 캐시 무효화 로직을 먼저 손보겠습니다",
      "네 이해했습니다. 캐시 무효화 로직을 먼저 손보겠습니다",
      "네,이해했습니다. 캐시 무효화 로직을 먼저 손보겠습니다",
      "완료했습니다. 모든 테스트가 통과했고 PR을 올렸습니다",
      "   알겠습니다. 말씀하신 대로 배포 일정을 금요일로 조정하겠습니다",
      "Understood, I will move the release to Friday and update the plan",
      "understood. I will move the release to Friday and update the plan",
      "Got it, I will rerun the migration with the new schema",
      "Noted, the cache invalidation goes first in the next sprint",
      "Thanks for the detailed analysis of the outage root cause",
      "Thank you, the fix is merged and deployed to staging",
      "Sounds good, let us ship it on Friday after the final review",
      "Will do, I am updating the runbook with the new steps now",
    ])("%j", (text) => {
      expect(text.trim().length).toBeGreaterThanOrEqual(20);
      expect(decide(text)).toEqual({ terminate: true, reason: "conclusion_detected" });
    });

    it.each([
      "알겠습니다. 그런데 배포 일정은 언제로 잡을까요?",
      "알겠습니다. 그런데 배포 일정은 언제로 잡을까요？",
      "확인했습니다. 혹시 롤백 계획도 있나요? 공유 부탁드려요",
      "Got it, but which branch should I rebase onto?",
      "Thanks! Could you also send me the staging logs?",
    ])("a question after the acknowledgement keeps going: %j", (text) => {
      expect(decide(text)).toEqual(KEEP_GOING);
    });

    it.each([
      "배포 스크립트 수정은 아직이고 알겠습니다 라고만 답했습니다",
      "The migration is understood by everyone on the team now",
      "I have noted the cache invalidation issue for the next sprint",
    ])("an acknowledgement that does not open the reply is not a conclusion: %j", (text) => {
      expect(decide(text)).toEqual(KEEP_GOING);
    });
  });

  it("1 MB replies", () => {
    expect(decide(ONE_MB)).toEqual(KEEP_GOING);
    expect(decide(ONE_MB, [ONE_MB])).toEqual({ terminate: true, reason: "repetition_detected" });
    expect(decide(ONE_MB_KOREAN, [UNRELATED])).toEqual(KEEP_GOING);
    expect(decide(`알겠습니다 ${ONE_MB_KOREAN}`)).toEqual({ terminate: true, reason: "conclusion_detected" });
    expect(decide(`알겠습니다 ${ONE_MB_KOREAN}?`)).toEqual(KEEP_GOING);
    expect(decide(SUBSTANTIVE, [ONE_MB])).toEqual(KEEP_GOING);
  });

  const REASONS = ["", "explicit_skip", "repetition_detected", "minimal_content", "conclusion_detected"];
  const checkDecision = (result: { terminate: boolean; reason: string }) => {
    expect(typeof result.terminate).toBe("boolean");
    expect(REASONS).toContain(result.reason);
    expect(result.reason === "").toBe(!result.terminate);
  };

  it.each(JUNK)("params given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => shouldTerminatePingPong(value as TerminateParams),
      ["params", "replyText", "previousReplies"],
      checkDecision,
    );
  });

  it.each(JUNK)("replyText given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () =>
        shouldTerminatePingPong({ replyText: value as string, turn: 1, maxTurns: 5, previousReplies: [] }),
      ["replyText"],
      checkDecision,
    );
  });

  it.each(JUNK)("previousReplies given as %s, or holding it", (_label, value) => {
    expectAnswerOrInvalidInput(
      () =>
        shouldTerminatePingPong({
          replyText: SUBSTANTIVE,
          turn: 1,
          maxTurns: 5,
          previousReplies: value as string[],
        }),
      ["previousReplies"],
      checkDecision,
    );
    expectAnswerOrInvalidInput(
      () =>
        shouldTerminatePingPong({
          replyText: SUBSTANTIVE,
          turn: 1,
          maxTurns: 5,
          previousReplies: [value as string],
        }),
      ["previousReplies"],
      checkDecision,
    );
  });

  it.each(JUNK)("turn / maxTurns given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () =>
        shouldTerminatePingPong({
          replyText: SUBSTANTIVE,
          turn: value as number,
          maxTurns: 5,
          previousReplies: [],
        }),
      ["turn"],
      checkDecision,
    );
    expectAnswerOrInvalidInput(
      () =>
        shouldTerminatePingPong({
          replyText: SUBSTANTIVE,
          turn: 1,
          maxTurns: value as number,
          previousReplies: [],
        }),
      ["maxTurns"],
      checkDecision,
    );
  });
});

describe("decideAnnounce / shouldRunAnnounce", () => {
  const RUN: AnnounceParams = {
    announceTarget: { channel: "discord", to: "channel:1234567890" },
    requesterSessionKey: "agent:ruda:main",
    targetSessionKey: "agent:eden:main",
    latestReply: "합의: 이벤트 버스를 도입한다",
  };

  const cases: ReadonlyArray<readonly [string, AnnounceParams, ReturnType<typeof decideAnnounce>]> = [
    ["an external target with a reply runs", RUN, { run: true }],
    ["without a requester it runs", { ...RUN, requesterSessionKey: undefined }, { run: true }],
    ["a target without `to` runs", { ...RUN, announceTarget: { channel: "slack" } }, { run: true }],
    ["no target", { ...RUN, announceTarget: null }, { run: false, reason: "no_target" }],
    [
      "no target beats an empty reply, internal and self",
      { ...RUN, announceTarget: null, latestReply: "", requesterSessionKey: RUN.targetSessionKey },
      { run: false, reason: "no_target" },
    ],
    ["no reply", { ...RUN, latestReply: undefined }, { run: false, reason: "empty_reply" }],
    ["an empty reply", { ...RUN, latestReply: "" }, { run: false, reason: "empty_reply" }],
    ["a blank reply", { ...RUN, latestReply: "  \n\t " }, { run: false, reason: "empty_reply" }],
    [
      "an empty reply beats internal and self",
      {
        ...RUN,
        announceTarget: { channel: "internal" },
        latestReply: " ",
        requesterSessionKey: RUN.targetSessionKey,
      },
      { run: false, reason: "empty_reply" },
    ],
    [
      "the internal channel",
      { ...RUN, announceTarget: { channel: "internal" } },
      { run: false, reason: "internal_channel" },
    ],
    [
      "internal beats self",
      { ...RUN, announceTarget: { channel: "internal", to: "x" }, requesterSessionKey: RUN.targetSessionKey },
      { run: false, reason: "internal_channel" },
    ],
    [
      "requester == target",
      { ...RUN, requesterSessionKey: "agent:eden:main" },
      { run: false, reason: "self" },
    ],
  ];

  it.each(cases)("%s", (_label, params, expected) => {
    const decision = decideAnnounce(params);
    expect(decision.run).toBe(expected.run);
    expect(decision.reason).toBe(expected.reason);
    expect(shouldRunAnnounce(params)).toBe(expected.run);
  });

  it("a 1 MB reply runs", () => {
    expect(decideAnnounce({ ...RUN, latestReply: ONE_MB })).toEqual({ run: true });
    expect(decideAnnounce({ ...RUN, latestReply: " ".repeat(1_000_000) }).reason).toBe("empty_reply");
  });

  const REASONS = ["no_target", "empty_reply", "internal_channel", "self"];
  const check = (params: AnnounceParams) => (decision: ReturnType<typeof decideAnnounce>) => {
    expect(typeof decision.run).toBe("boolean");
    if (decision.run) expect(decision.reason).toBeUndefined();
    else expect(REASONS).toContain(decision.reason);
    expect(shouldRunAnnounce(params)).toBe(decision.run);
  };

  it.each(JUNK)("params given as %s", (_label, value) => {
    const params = value as AnnounceParams;
    expectAnswerOrInvalidInput(() => decideAnnounce(params), ["params", "announceTarget"], check(params));
  });

  it.each(JUNK)("each field given as %s", (_label, value) => {
    for (const field of ["announceTarget", "requesterSessionKey", "targetSessionKey", "latestReply"]) {
      const params = { ...RUN, [field]: value } as AnnounceParams;
      expectAnswerOrInvalidInput(() => decideAnnounce(params), [field], check(params));
    }
    const params = { ...RUN, announceTarget: { channel: value } } as AnnounceParams;
    expectAnswerOrInvalidInput(() => decideAnnounce(params), ["channel"], check(params));
  });
});

describe("buildAgentToAgentReplyContext", () => {
  const BASE: ReplyContextParams = {
    requesterSessionKey: "agent:ruda:main",
    targetSessionKey: "agent:eden:main",
    currentRole: "requester",
    turn: 2,
    maxTurns: 5,
    originalMessage: "이 아키텍처 설계 같이 검토하자",
    messageIntent: A2AMessageIntent.COLLABORATION,
  };
  const EXACT_REPLY_SKIP = /(?<![A-Za-z0-9_])REPLY_SKIP(?![A-Za-z0-9_])/;

  it("names the turn as `Turn N of M`", () => {
    expect(buildAgentToAgentReplyContext(BASE)).toContain("Turn 2 of 5");
    expect(buildAgentToAgentReplyContext({ ...BASE, turn: 1, maxTurns: 10 })).toContain("Turn 1 of 10");
  });

  it("carries the original request and the intent", () => {
    const prompt = buildAgentToAgentReplyContext(BASE);
    expect(prompt).toContain("이 아키텍처 설계 같이 검토하자");
    expect(prompt).toContain("collaboration");
    expect(
      buildAgentToAgentReplyContext({ ...BASE, messageIntent: A2AMessageIntent.RESULT_REPORT }),
    ).toContain("result_report");
  });

  it.each<[number, number, number]>([
    [2, 5, 4],
    [1, 5, 5],
    [5, 5, 1],
    [1, 1, 1],
    [3, 10, 8],
  ])("turn %i of %i: %i turns remain (M - N + 1)", (turn, maxTurns, remaining) => {
    const prompt = buildAgentToAgentReplyContext({ ...BASE, turn, maxTurns });
    expect(prompt).toMatch(new RegExp(`(?<!\\d)${remaining} more turns?\\b`));
  });

  it("contains the exact skip token", () => {
    expect(buildAgentToAgentReplyContext(BASE)).toMatch(EXACT_REPLY_SKIP);
  });

  it("includes the previous-discussion summary when given", () => {
    const summary = "이벤트 버스 도입에 합의했고, 저장소 계층은 미정";
    const prompt = buildAgentToAgentReplyContext({ ...BASE, previousTurnSummary: summary });
    expect(prompt).toContain(summary);
    expect(prompt).toMatch(/previous discussion/i);
  });

  it.each<[string, string | undefined]>([
    ["absent", undefined],
    ["empty", ""],
    ["blank", "  \n "],
  ])("leaves the previous-discussion section out when the summary is %s", (_label, previousTurnSummary) => {
    const prompt = buildAgentToAgentReplyContext({ ...BASE, previousTurnSummary });
    expect(prompt).not.toMatch(/previous discussion/i);
  });

  it("tells the requester from the target", () => {
    const requester = buildAgentToAgentReplyContext(BASE);
    const target = buildAgentToAgentReplyContext({ ...BASE, currentRole: "target" });
    expect(requester).not.toBe(target);
  });

  it("keeps a 1 MB original request", () => {
    const prompt = buildAgentToAgentReplyContext({ ...BASE, originalMessage: ONE_MB_KOREAN });
    expect(prompt).toContain(ONE_MB_KOREAN);
    expect(prompt).toContain("Turn 2 of 5");
  });

  const checkPrompt = (prompt: string) => {
    expect(typeof prompt).toBe("string");
    expect(prompt).toMatch(EXACT_REPLY_SKIP);
  };

  it.each(JUNK)("params given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => buildAgentToAgentReplyContext(value as ReplyContextParams),
      // A non-object names params; an object without the turn numbers names the first missing one.
      ["params", "turn"],
      checkPrompt,
    );
  });

  it.each(JUNK)("each field given as %s", (_label, value) => {
    for (const field of Object.keys({ ...BASE, previousTurnSummary: "" })) {
      expectAnswerOrInvalidInput(
        () => buildAgentToAgentReplyContext({ ...BASE, [field]: value } as ReplyContextParams),
        [field],
        checkPrompt,
      );
    }
  });
});

describe("buildAgentToAgentAnnounceContext", () => {
  const EXACT_ANNOUNCE_SKIP = /(?<![A-Za-z0-9_])ANNOUNCE_SKIP(?![A-Za-z0-9_])/;
  const FULL: AnnounceContextParams = {
    originalMessage: "이 아키텍처 설계 같이 검토하자",
    roundOneReply: "레이어 분리가 먼저 필요해 보입니다",
    latestReply: "합의: 이벤트 버스를 도입한다",
  };

  it("contains the original request, the round-one reply, the latest reply and the exact token", () => {
    const prompt = buildAgentToAgentAnnounceContext(FULL);
    expect(prompt).toContain(FULL.originalMessage);
    expect(prompt).toContain("레이어 분리가 먼저 필요해 보입니다");
    expect(prompt).toContain("합의: 이벤트 버스를 도입한다");
    expect(prompt).toMatch(EXACT_ANNOUNCE_SKIP);
  });

  it("works without the optional replies", () => {
    const prompt = buildAgentToAgentAnnounceContext({ originalMessage: "배포 상황 공유" });
    expect(prompt).toContain("배포 상황 공유");
    expect(prompt).toMatch(EXACT_ANNOUNCE_SKIP);
  });

  it("keeps 1 MB texts", () => {
    const prompt = buildAgentToAgentAnnounceContext({ ...FULL, latestReply: ONE_MB });
    expect(prompt).toContain(ONE_MB);
    expect(prompt).toMatch(EXACT_ANNOUNCE_SKIP);
  });

  const checkPrompt = (prompt: string) => {
    expect(typeof prompt).toBe("string");
    expect(prompt).toMatch(EXACT_ANNOUNCE_SKIP);
  };

  it.each(JUNK)("params given as %s", (_label, value) => {
    expectAnswerOrInvalidInput(
      () => buildAgentToAgentAnnounceContext(value as AnnounceContextParams),
      ["params"],
      checkPrompt,
    );
  });

  it.each(JUNK)("each field given as %s", (_label, value) => {
    for (const field of ["originalMessage", "roundOneReply", "latestReply"]) {
      expectAnswerOrInvalidInput(
        () => buildAgentToAgentAnnounceContext({ ...FULL, [field]: value } as AnnounceContextParams),
        [field],
        checkPrompt,
      );
    }
  });
});
