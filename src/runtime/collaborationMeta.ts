import type { AnyActorRef } from "xstate";
import type { CollaborateInput, MentionContext } from "../machines/index.js";
import type { ActorRecord } from "../persistence/index.js";
import type { MentionSummary } from "./ports.js";

// A collaboration's thread and its mention's progress, read from a live actor or from a stored record
// (a dormant one): what mentions() lists and what indexes the thread state.

/** What a collaboration record keeps outside its snapshot, for mentions() and the thread state. */
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

/**
 * The mention child's states in which a collaboration only waits, no post in flight: for a timeout or a
 * retry's delay (an `after` delay stored with the record), or for the answer.
 */
const WAITING_MENTION_STATES: ReadonlySet<unknown> = new Set([
  "pending",
  "reminded",
  "untimed",
  "reminderRetrying",
  "escalationRetrying",
]);

type CollaborationContextView = CollaborateInput & {
  resolvedThreadId?: string;
  parentChannelId?: string;
  sentAt?: number;
  messageId?: string;
  mentionAttempts?: number;
};
type MentionView = { value: string; context: MentionContext };
/** A collaborate snapshot as persisted (`getPersistedSnapshot()`): children hold their own snapshots. */
type PersistedCollaboration = {
  status?: unknown;
  value?: unknown;
  context?: CollaborationContextView;
  children?: Record<string, { snapshot?: { status?: unknown; value?: unknown; context?: MentionContext } }>;
};

/** The collaboration's thread and its mention's progress, read from the live actor tree. */
export function collaborationMeta(actor: AnyActorRef): CollaborationMeta {
  const snapshot = actor.getSnapshot() as {
    value: string;
    context: CollaborationContextView;
    children: Record<string, AnyActorRef | undefined>;
  };
  const child = snapshot.children.mention?.getSnapshot() as MentionView | undefined;
  return metaOf(snapshot.value, snapshot.context, child);
}

/**
 * A collaboration that only waits: in `awaitingResponse`, its mention child (`mention`) active in a
 * waiting state (see WAITING_MENTION_STATES). It can stay a record until its first event or its
 * earliest stored delay (lazy hosting).
 */
export function onlyWaits(snapshot: unknown): boolean {
  const s = snapshot as PersistedCollaboration | null;
  if (typeof s !== "object" || s === null) return false;
  const child = s.children?.mention?.snapshot;
  return (
    s.status === "active" &&
    s.value === "awaitingResponse" &&
    typeof s.context === "object" &&
    child !== undefined &&
    child.status === "active" &&
    WAITING_MENTION_STATES.has(child.value) &&
    typeof child.context === "object"
  );
}

/** collaborationMeta of a dormant (only waiting, see onlyWaits) collaboration, read from its record. */
export function dormantMeta(record: Readonly<ActorRecord>): CollaborationMeta {
  const s = record.snapshot as PersistedCollaboration;
  const child = s.children?.mention?.snapshot;
  return metaOf(
    s.value as string,
    s.context as CollaborationContextView,
    child === undefined
      ? undefined
      : { value: child.value as string, context: child.context as MentionContext },
  );
}

function metaOf(
  value: string,
  c: CollaborationContextView,
  child: MentionView | undefined,
): CollaborationMeta {
  const mention = mentionStatus(value, c.mentionAttempts, child);
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
  child: { value: string; context: MentionContext } | undefined,
): CollaborationMeta["mention"] {
  if (value === "responded" || value === "escalated") return { status: value, attempts: endedAttempts ?? 1 };
  if (child === undefined) return undefined;
  const attempts = child.context.attempts;
  if (child.value === "responded" || child.value === "escalated") return { status: child.value, attempts };
  return { status: attempts > 1 ? "reminded" : "pending", attempts };
}
