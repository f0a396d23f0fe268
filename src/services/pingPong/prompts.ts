import { asText, displayText, requireObject, requireWholeNumber } from "../InvalidInputError.js";
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

/** The extra system prompt for one ping-pong step. */
export function buildAgentToAgentReplyContext(p: ReplyContextParams): string {
  requireObject("buildAgentToAgentReplyContext", "params", p);
  const turn = requireWholeNumber("buildAgentToAgentReplyContext", "turn", p.turn, 1);
  const maxTurns = requireWholeNumber("buildAgentToAgentReplyContext", "maxTurns", p.maxTurns, 1);
  const role = p.currentRole === "target" ? "Agent 2 (target)" : "Agent 1 (requester)";
  const remaining = Math.max(0, maxTurns - turn + 1);
  const summary = asText(p.previousTurnSummary)?.trim();
  return [
    "## Agent-to-agent reply step",
    "",
    `**Your role**: ${role}`,
    `**Turn**: Turn ${turn} of ${maxTurns}`,
    `**Conversation purpose**: ${displayText(p.messageIntent)}`,
    `Agent 1 (requester) session: ${displayText(p.requesterSessionKey)}`,
    `Agent 2 (target) session: ${displayText(p.targetSessionKey)}`,
    "",
    "### Original request",
    asText(p.originalMessage) ?? "",
    ...(summary ? ["", "### Previous discussion", summary] : []),
    "",
    "### Guidelines",
    "- Be concise and focused on the topic",
    `- If you have nothing substantive to add, reply exactly: ${REPLY_SKIP_TOKEN}`,
    "- Do NOT repeat what has already been said",
    `- This conversation will end after at most ${remaining} more turns`,
    "",
    `To end the conversation, reply exactly "${REPLY_SKIP_TOKEN}".`,
  ].join("\n");
}

export interface AnnounceContextParams {
  originalMessage: string;
  roundOneReply?: string;
  latestReply?: string;
}

/** The extra system prompt for the announce step. */
export function buildAgentToAgentAnnounceContext(p: AnnounceContextParams): string {
  requireObject("buildAgentToAgentAnnounceContext", "params", p);
  return [
    "Agent-to-agent announce step:",
    `Original request: ${asText(p.originalMessage) ?? ""}`,
    `Round 1 reply: ${asText(p.roundOneReply) ?? "(none)"}`,
    `Latest reply: ${asText(p.latestReply) ?? "(none)"}`,
    `If you want to remain silent, reply exactly "${ANNOUNCE_SKIP_TOKEN}".`,
    "Any other reply will be posted to the target channel.",
  ].join("\n");
}
