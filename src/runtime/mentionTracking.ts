import type { EventObject } from "xstate";
import { ActorNotFoundError, type DurableHost } from "../durable/index.js";
import { type ActorRecord, isSharedStore, type SnapshotStore } from "../persistence/index.js";
import type { InboundDiscordMessage } from "../policies/index.js";
import type { AwaitingAnswers } from "./AwaitingAnswers.js";
import type { CollaborationMeta } from "./collaborationMeta.js";
import type { MentionSummary } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

export interface MentionTrackingDeps {
  actors: DurableHost;
  /** The store the actors are kept in: a shared one is asked for the other processes' collaborations. */
  store: SnapshotStore;
  threads: ThreadState;
  awaiting: AwaitingAnswers;
  requireStarted: (method: string) => void;
  /** How long finished collaborations stay listed. */
  cleanupMaxAgeMs: number;
  now: () => number;
}

/** Thread messages to their collaborations, mentions(), and the index of stored collaborations. */
export function createMentionTracking(deps: MentionTrackingDeps) {
  const { actors, store, threads, requireStarted, now, cleanupMaxAgeMs } = deps;
  const { awaiting } = deps;

  /** To every live collaboration in the thread (a shared store's too); resolves once each is durable. */
  async function routeThreadMessage(threadId: string, m: InboundDiscordMessage): Promise<void> {
    // Every message, a human's too: the mention machine decides whether it answers.
    const event = { type: "RESPONSE_RECEIVED", authorId: m.authorId, at: m.ts, messageId: m.messageId };
    const here = [...awaiting.in(threadId)];
    // One Promise.all over every call: a failure of one leaves no other's rejection unhandled.
    await Promise.all([...here.map((id) => tell(id, event)), tellOtherProcesses(threadId, event, here)]);
  }

  /** With a store shared by several processes: the thread's collaborations that `here` does not list. */
  async function tellOtherProcesses(threadId: string, event: EventObject, here: string[]): Promise<void> {
    if (!isSharedStore(store)) return;
    const others = await store.listEveryLive({ machineId: "collaborate", meta: { threadId } });
    const told = new Set(here);
    await Promise.all(others.filter(({ id }) => !told.has(id)).map(({ id }) => tell(id, event)));
  }

  /** One that has ended meanwhile has nothing to hear. */
  async function tell(id: string, event: EventObject): Promise<void> {
    try {
      await actors.send(id, event);
    } catch (error) {
      if (!(error instanceof ActorNotFoundError)) throw error;
    }
  }

  async function mentions(): Promise<MentionSummary[]> {
    requireStarted("mentions");
    await store.prune(now() - cleanupMaxAgeMs);
    const summaries = new Map<string, MentionSummary>();
    const add = (id: string, meta: CollaborationMeta | undefined) => {
      if (meta?.threadId === undefined || meta.mention === undefined) return;
      summaries.set(id, { id, threadId: meta.threadId, targetAgentId: meta.targetAgentId, ...meta.mention });
    };
    for (const record of await store.list("archive")) {
      if (record.machineId === "collaborate") add(record.id, record.meta as CollaborationMeta | undefined);
    }
    // Live ones (every process's, with a shared store), and those whose last write is still in flight.
    for (const actor of await actors.list()) {
      if (actor.kind === "collaborate") add(actor.id, actor.meta as CollaborationMeta | undefined);
    }
    return [...summaries.values()];
  }

  /** Indexes a stored record (thread participants, routes, collaborations awaiting an answer) at start. */
  function indexRecord(record: Readonly<ActorRecord>): void {
    const meta = record.meta as CollaborationMeta | undefined;
    if (record.machineId === "collaborate" && meta?.threadId !== undefined) {
      threads.addParticipants(meta.threadId, [meta.fromAgentId, meta.targetAgentId], record.updatedAt);
      if (record.status === "active") {
        awaiting.add(meta.threadId, record.id);
      }
      if (meta.parentChannelId !== undefined) {
        threads.restoreRoute({
          fromAgentId: meta.fromAgentId,
          targetAgentId: meta.targetAgentId,
          ...(meta.topicId === undefined ? {} : { topicId: meta.topicId }),
          threadId: meta.threadId,
          channelId: meta.parentChannelId,
          lastUsedAt: meta.sentAt ?? record.updatedAt,
        });
      }
    }
  }

  return { routeThreadMessage, mentions, indexRecord };
}
