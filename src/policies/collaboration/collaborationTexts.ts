import { ko } from "../messages/ko.js";
import type { MessageCatalog } from "../messages/messageKeys.js";
import {
  buildEscalationMessage,
  buildFailureNotice,
  buildReminderMessage,
  type FailureNoticeParams,
  type MentionMessageParams,
} from "./mentionMessages.js";
import {
  buildCollaborationThreadName,
  buildThreadStarterMessage,
  type CollaborationThreadNameParams,
} from "./threadNames.js";

/**
 * A collaboration text as data, written in the configured language only when posted: kept in snapshots,
 * so a restart after a change of language posts in the new one.
 */
export type CollaborationText =
  | { kind: "reminder"; params: MentionMessageParams }
  | { kind: "escalation"; params: MentionMessageParams & { escalationMentionId?: string } }
  | { kind: "failureNotice"; params: FailureNoticeParams }
  | { kind: "threadName"; params: CollaborationThreadNameParams }
  | { kind: "threadStarter"; params: CollaborationThreadNameParams }
  /** The mention itself: the requester's message, in no language of ours. */
  | { kind: "mention"; params: { targetBotId: string; message: string } };

/** What the target reads: the mention first, so Discord pings exactly that bot. */
export function mentionContent(targetBotId: string, message: string): string {
  return `<@${targetBotId}> ${message.trim()}`;
}

/** The text in `catalog`'s language (Korean by default). */
export function renderCollaborationText(text: CollaborationText, catalog: MessageCatalog = ko): string {
  switch (text.kind) {
    case "reminder":
      return buildReminderMessage(text.params, catalog);
    case "escalation":
      return buildEscalationMessage(text.params, catalog);
    case "failureNotice":
      return buildFailureNotice(text.params, catalog);
    case "threadName":
      return buildCollaborationThreadName(text.params, catalog);
    case "threadStarter":
      return buildThreadStarterMessage(buildCollaborationThreadName(text.params, catalog), catalog);
    case "mention":
      return mentionContent(text.params.targetBotId, text.params.message);
  }
}
