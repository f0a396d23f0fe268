import { displayText } from "../../errors/displayText.js";
import { asText, requireObject, requireWholeNumber } from "../InvalidInputError.js";
import { ko } from "../messages/ko.js";
import { renderMessage } from "../messages/messageCatalog.js";
import type { MessageCatalog } from "../messages/messageKeys.js";
import { ANNOUNCE_SKIP_TOKEN, REPLY_SKIP_TOKEN } from "./skipTokens.js";

export interface ReplyContextParams {
  requesterSessionKey: string;
  targetSessionKey: string;
  currentRole: "requester" | "target";
  turn: number;
  maxTurns: number;
  originalMessage: string;
  messageIntent: string;
  previousTurnSummary?: string;
}

/** The extra system prompt for one ping-pong step (the default catalog's text, in English). */
export function buildAgentToAgentReplyContext(p: ReplyContextParams, catalog: MessageCatalog = ko): string {
  requireObject("buildAgentToAgentReplyContext", "params", p);
  const turn = requireWholeNumber("buildAgentToAgentReplyContext", "turn", p.turn, 1);
  const maxTurns = requireWholeNumber("buildAgentToAgentReplyContext", "maxTurns", p.maxTurns, 1);
  const summary = asText(p.previousTurnSummary)?.trim();
  return renderMessage(catalog, "replyContext", {
    role: renderMessage(catalog, p.currentRole === "target" ? "replyRoleTarget" : "replyRoleRequester", {}),
    turn,
    maxTurns,
    intent: displayText(p.messageIntent),
    requesterSessionKey: displayText(p.requesterSessionKey),
    targetSessionKey: displayText(p.targetSessionKey),
    original: asText(p.originalMessage) ?? "",
    previous: summary ? renderMessage(catalog, "replyContextPrevious", { summary }) : "",
    remaining: Math.max(0, maxTurns - turn + 1),
    skipToken: REPLY_SKIP_TOKEN,
  });
}

export interface AnnounceContextParams {
  originalMessage: string;
  roundOneReply?: string;
  latestReply?: string;
}

/** The extra system prompt for the announce step (the default catalog's text, in English). */
export function buildAgentToAgentAnnounceContext(
  p: AnnounceContextParams,
  catalog: MessageCatalog = ko,
): string {
  requireObject("buildAgentToAgentAnnounceContext", "params", p);
  const none = renderMessage(catalog, "announceNone", {});
  return renderMessage(catalog, "announceContext", {
    original: asText(p.originalMessage) ?? "",
    roundOneReply: asText(p.roundOneReply) ?? none,
    latestReply: asText(p.latestReply) ?? none,
    skipToken: ANNOUNCE_SKIP_TOKEN,
  });
}
