import { cutText } from "../InvalidInputError.js";
import { ko } from "../messages/ko.js";
import type { MessageCatalog } from "../messages/messageKeys.js";
import { renderMessage } from "../messages/messageCatalog.js";

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

/** `[리마인더 1/3] <@이든> 위 요청에 대해 확인 부탁해요.` + the quoted original (in Korean by default). */
export function buildReminderMessage(p: MentionMessageParams, catalog: MessageCatalog = ko): string {
  return renderMessage(catalog, "reminder", mentionTextParams(p));
}

/** The escalation to a human: it pings only the human (nobody without an escalation id), not the target. */
export function buildEscalationMessage(
  p: MentionMessageParams & { escalationMentionId?: string },
  catalog: MessageCatalog = ko,
): string {
  return renderMessage(catalog, "escalation", { ...mentionTextParams(p), ping: ping(p.escalationMentionId) });
}

function mentionTextParams(p: MentionMessageParams) {
  return {
    attempts: p.attempts,
    maxAttempts: p.maxAttempts,
    target: `<@${p.targetBotId}>`,
    original: quote(p.originalText),
    minutes: p.elapsedMinutes,
  };
}

/** The human's mention and a space, or nothing: what `{ping}` stands for. */
function ping(userId: string | undefined): string {
  return userId ? `<@${userId}> ` : "";
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
 * The notice of a collaboration's 403/404 in the escalation channel: who failed to reach whom, where,
 * and what to check. It pings only the human, or nobody without an escalation id.
 */
export function buildFailureNotice(p: FailureNoticeParams, catalog: MessageCatalog = ko): string {
  const check = p.errorCode === "discord_permission" ? "failureCheckPermission" : "failureCheckNotFound";
  return renderMessage(catalog, "failureNotice", {
    from: p.fromName,
    to: p.toName,
    code: p.errorCode,
    location:
      p.channelId === undefined
        ? ""
        : renderMessage(catalog, "failureNoticeLocation", { channel: `<#${p.channelId}>` }),
    reason: quote(cutText(p.errorMessage, NOTICE_REASON_LENGTH)),
    original: quote(p.originalText),
    ping: ping(p.escalationMentionId),
    check: renderMessage(catalog, check, {}),
  });
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
