import { asText } from "../InvalidInputError.js";
import { calculateSimilarity } from "./calculateSimilarity.js";
import { isReplySkip } from "./skipTokens.js";

/** The ping-pong's early endings, in the order they are checked. */
export const EARLY_TERMINATION_REASONS = [
  "explicit_skip",
  "repetition_detected",
  "minimal_content",
  "conclusion_detected",
] as const;
export type EarlyTerminationReason = (typeof EARLY_TERMINATION_REASONS)[number];

export interface TerminationDecision {
  terminate: boolean;
  reason: "" | EarlyTerminationReason;
}

export interface TerminationParams {
  replyText: string;
  turn: number;
  maxTurns: number;
  previousReplies: string[];
}

export const REPETITION_THRESHOLD = 0.85;
export const MINIMAL_CONTENT_LENGTH = 20;

const QUESTION_MARK = /[?？]/;
// Korean acknowledgement openings that conclude an exchange, plus English ones on a word boundary.
const CONCLUSION =
  /^(?:알겠습니다|확인했습니다|감사합니다|네,?\s*이해했습니다|완료|(?:understood|got it|noted|thanks|thank you|sounds good|will do)(?![\p{L}\p{N}_]))/iu;

/**
 * Whether to end the ping-pong after this reply, checked in order: explicit skip, repetition, minimal
 * content, conclusion; a question keeps it going. `autoTerminate` is left to the caller.
 */
export function shouldTerminatePingPong(p: TerminationParams): TerminationDecision {
  const replyText = asText(p?.replyText) ?? "";
  if (isReplySkip(replyText)) return { terminate: true, reason: "explicit_skip" };

  const previous = Array.isArray(p?.previousReplies) ? p.previousReplies : [];
  const last = previous[previous.length - 1];
  if (last !== undefined && calculateSimilarity(replyText, last) > REPETITION_THRESHOLD) {
    return { terminate: true, reason: "repetition_detected" };
  }

  const trimmed = replyText.trim();
  const asksSomething = QUESTION_MARK.test(trimmed);
  if (trimmed.length < MINIMAL_CONTENT_LENGTH && !asksSomething)
    return { terminate: true, reason: "minimal_content" };
  if (CONCLUSION.test(trimmed) && !asksSomething) return { terminate: true, reason: "conclusion_detected" };
  return { terminate: false, reason: "" };
}
