import { asText } from "../InvalidInputError.js";
import { A2AMessageIntent, type ClassifiedIntent, USE_CONFIGURED_TURNS } from "./A2AMessageIntent.js";

/**
 * A rule matches when a regex does, or a pair `[a, b]` occurs in that order on one line: `a.*b` by
 * indexOf, as the regex backtracks quadratically on long texts full of `a`.
 */
interface IntentRule {
  result: ClassifiedIntent;
  patterns: RegExp[];
  inOrder?: Array<[string, string]>;
}

// The Korean rules in their order, first match wins. English equivalents match on word boundaries
// only, and change the class of no Korean example.
const RULES: IntentRule[] = [
  {
    result: { intent: A2AMessageIntent.NOTIFICATION, suggestedTurns: 0, confidence: 1.0 },
    patterns: [/\[NO_REPLY_NEEDED\]|\[NOTIFICATION\]/i],
  },
  {
    result: { intent: A2AMessageIntent.ESCALATION, suggestedTurns: 0, confidence: 1.0 },
    patterns: [/\[URGENT\]|\[ESCALATION\]/i],
  },
  {
    result: { intent: A2AMessageIntent.RESULT_REPORT, suggestedTurns: 1, confidence: 0.8 },
    patterns: [
      /\[outcome\]|\[result\]/i,
      /\b(?:task|work|job) (?:is )?(?:done|complete|completed|finished)\b|\b(?:analysis|test) results?\b|\breporting (?:the )?results?\b/i,
    ],
    inOrder: [
      ["작업", "완료"],
      ["결과", "보고"],
      ["분석", "결과"],
    ],
  },
  {
    result: { intent: A2AMessageIntent.QUESTION, suggestedTurns: 1, confidence: 0.7 },
    patterns: [
      /\?$|어떻게|어디에|뭐가|알려줘/i,
      /\b(?:how (?:do|does|can|should|to)|where (?:is|are|can)|can you (?:check|confirm|tell)|let me know)\b/i,
    ],
    inOrder: [["확인", "해줘"]],
  },
  {
    result: { intent: A2AMessageIntent.COLLABORATION, suggestedTurns: USE_CONFIGURED_TURNS, confidence: 0.7 },
    patterns: [/피드백|리뷰/i, /\b(?:review|feedback|discuss|brainstorm|your (?:opinion|thoughts))\b/i],
    inOrder: [
      ["같이", "검토"],
      ["함께", "논의"],
      ["의견", "줘"],
    ],
  },
];

const DEFAULT_INTENT: ClassifiedIntent = {
  intent: A2AMessageIntent.QUESTION,
  suggestedTurns: 1,
  confidence: 0.5,
};

/**
 * Classifies a message's intent, first match wins: a tag (`[NOTIFICATION]`, `[URGENT]`, ...), then a
 * result report, a question, a collaboration; the default is a question.
 */
export function classifyMessageIntent(message: string): ClassifiedIntent {
  const text = (asText(message) ?? "").trim();
  const rule = RULES.find(
    (r) => r.patterns.some((p) => p.test(text)) || r.inOrder?.some(([a, b]) => inOrderOnOneLine(text, a, b)),
  );
  return { ...(rule?.result ?? DEFAULT_INTENT) };
}

// The line terminators JavaScript's `.` does not match.
const LINE_BREAK = /[\n\r\u2028\u2029]/;

function inOrderOnOneLine(text: string, first: string, second: string): boolean {
  if (!text.includes(first) || !text.includes(second)) return false;
  return text.split(LINE_BREAK).some((line) => {
    const at = line.indexOf(first);
    return at !== -1 && line.lastIndexOf(second) >= at + first.length;
  });
}
