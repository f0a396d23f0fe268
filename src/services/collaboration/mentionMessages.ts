import { cutText } from "../InvalidInputError.js";

/** How many characters of the original request a reminder or escalation quotes. */
export const MENTION_QUOTE_LENGTH = 500;

export interface MentionMessageParams {
  targetBotId: string;
  originalText: string;
  /** The attempt count when the message is posted (the original mention is attempt 1). */
  attempts: number;
  maxAttempts: number;
  /** Whole minutes since the original mention, floored. */
  elapsedMinutes: number;
}

/** `[리마인더 1/3] <@이든> 위 요청에 대해 확인 부탁해요.` + the quoted original. */
export function buildReminderMessage(p: MentionMessageParams): string {
  return [
    `[리마인더 ${p.attempts}/${p.maxAttempts}] <@${p.targetBotId}> 위 요청에 대해 확인 부탁해요.`,
    `원본: "${quote(p.originalText)}" (${p.elapsedMinutes}분 전)`,
  ].join("\n");
}

/**
 * The escalation to a human. It names the target without pinging it (the sender
 * limits allowed mentions to the human) and, without an escalation id, pings nobody.
 */
export function buildEscalationMessage(p: MentionMessageParams & { escalationMentionId?: string }): string {
  return [
    `⚠️ 응답 없음 (${p.attempts}회 시도, ${p.elapsedMinutes}분 경과)`,
    `대상: <@${p.targetBotId}>`,
    `요청: "${quote(p.originalText)}"`,
    p.escalationMentionId ? `<@${p.escalationMentionId}> 확인 필요` : "확인 필요",
  ].join("\n");
}

export interface FailureNoticeParams {
  fromName: string;
  toName: string;
  /** `discord_permission` (403) or `discord_not_found` (404): what a human should check. */
  errorCode: string;
  /** Discord's own words, e.g. `Missing Permissions`. */
  errorMessage: string;
  /** The channel or thread the failed call was for, when known. */
  channelId?: string;
  originalText: string;
  escalationMentionId?: string;
}

/**
 * The notice a 403 or 404 of a collaboration posts in the escalation channel: who
 * failed to reach whom and where, and what to check. It names the channel without a ping and pings
 * only the human, or nobody without an escalation id.
 */
export function buildFailureNotice(p: FailureNoticeParams): string {
  const check = p.errorCode === "discord_permission" ? "채널 권한 확인 필요" : "봇/채널 존재 확인 필요";
  return [
    `⚠️ 협업 전송 실패: ${p.fromName} → ${p.toName} (${p.errorCode})`,
    ...(p.channelId === undefined ? [] : [`위치: <#${p.channelId}>`]),
    `사유: ${quote(cutText(p.errorMessage, NOTICE_REASON_LENGTH))}`,
    `요청: "${quote(p.originalText)}"`,
    p.escalationMentionId ? `<@${p.escalationMentionId}> ${check}` : check,
  ].join("\n");
}

/** How much of Discord's error message a failure notice quotes. */
const NOTICE_REASON_LENGTH = 200;

/** Whole minutes from `from` to `to`, floored, never negative. */
export function elapsedMinutes(from: number, to: number): number {
  return Math.max(0, Math.floor((to - from) / 60_000));
}

function quote(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > MENTION_QUOTE_LENGTH ? `${cutText(oneLine, MENTION_QUOTE_LENGTH - 1)}…` : oneLine;
}
