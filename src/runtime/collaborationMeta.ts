import type { AnyActorRef } from "xstate";
import type { CollaborateInput, MentionContext } from "../machines/index.js";
import type { MentionSummary } from "./ports.js";

/** A collaboration record's meta: what mentions() lists (for a dormant actor too) and indexes the thread state. */
export interface CollaborationMeta {
  fromAgentId: string;
  targetAgentId: string;
  topicId?: string;
  threadId?: string;
  parentChannelId?: string;
  mention?: { status: MentionSummary["status"]; attempts: number };
  sentAt?: number;
  /** The mention's Discord message: an answer must come after it. */
  messageId?: string;
}

type CollaborationContextView = CollaborateInput & {
  resolvedThreadId?: string;
  parentChannelId?: string;
  sentAt?: number;
  messageId?: string;
  mentionAttempts?: number;
};
type MentionView = { value: string; context: MentionContext };

/** The collaboration's thread and its mention's progress, read from the live actor tree. */
export function collaborationMeta(actor: AnyActorRef): CollaborationMeta {
  const snapshot = actor.getSnapshot() as {
    value: string;
    context: CollaborationContextView;
    children: Record<string, AnyActorRef | undefined>;
  };
  const c = snapshot.context;
  const child = snapshot.children.mention?.getSnapshot() as MentionView | undefined;
  const mention = mentionStatus(snapshot.value, c.mentionAttempts, child);
  return {
    fromAgentId: c.fromAgentId,
    targetAgentId: c.targetAgentId,
    ...(c.topicId === undefined ? {} : { topicId: c.topicId }),
    ...(c.resolvedThreadId === undefined || c.sentAt === undefined ? {} : { threadId: c.resolvedThreadId }),
    ...(c.parentChannelId === undefined ? {} : { parentChannelId: c.parentChannelId }),
    ...(c.sentAt === undefined ? {} : { sentAt: c.sentAt }),
    ...(c.messageId === undefined ? {} : { messageId: c.messageId }),
    ...(mention === undefined ? {} : { mention }),
  };
}

function mentionStatus(
  value: string,
  endedAttempts: number | undefined,
  child: MentionView | undefined,
): CollaborationMeta["mention"] {
  if (value === "responded" || value === "escalated") return { status: value, attempts: endedAttempts ?? 1 };
  if (child === undefined) return undefined;
  const attempts = child.context.attempts;
  if (child.value === "responded" || child.value === "escalated") return { status: child.value, attempts };
  return { status: attempts > 1 ? "reminded" : "pending", attempts };
}
