import { ActorNotFoundError, type DurableHost } from "../durable/index.js";
import { type ActorRecord, isSharedStore, type SnapshotStore } from "../persistence/index.js";
import type { InboundDiscordMessage } from "../policies/index.js";
import type { AwaitingAnswers } from "./AwaitingAnswers.js";
import type { CollaborationMeta } from "./collaborationMeta.js";
import type { MentionSummary } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

/**
 * What a collaboration hears of each message in its thread (a human's too). Whether it answers the
 * mention (the target's, sent after the mention) is the mention machine's to decide; one that does not
 * changes nothing, so nothing is written.
 */
export type ThreadMessageEvent = {
  type: "RESPONSE_RECEIVED";
  authorId: string;
  at: number;
  messageId: string;
};

function threadMessageEvent(m: InboundDiscordMessage): ThreadMessageEvent {
  return { type: "RESPONSE_RECEIVED", authorId: m.authorId, at: m.ts, messageId: m.messageId };
}

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

/**
 * The mentions side of the collaborations: handing each thread message to every live collaboration
 * in that thread, listing them (mentions()), and indexing the stored ones at start.
 */
export function createMentionTracking(deps: MentionTrackingDeps) {
  const { actors, store, threads, requireStarted, now, cleanupMaxAgeMs } = deps;
  const { awaiting } = deps;

  /**
   * Hands the message to every live collaboration in the thread: those this process runs, and (with a
   * store shared by several processes) the others' through the store. Resolves once each change it made
   * is durable (relayed through a shared store to the process that took an actor over meanwhile, if one
   * did) and each relayed event is stored.
   */
  async function routeThreadMessage(threadId: string, m: InboundDiscordMessage): Promise<void> {
    const event = threadMessageEvent(m);
    const here = [...awaiting.in(threadId)];
    // One Promise.all over every call: a failure of one leaves no other's rejection unhandled.
    await Promise.all([...here.map((id) => tell(id, event)), tellOtherProcesses(threadId, event, here)]);
  }

  /** With a store shared by several processes: the thread's collaborations that `here` does not list. */
  async function tellOtherProcesses(
    threadId: string,
    event: ThreadMessageEvent,
    here: string[],
  ): Promise<void> {
    if (!isSharedStore(store)) return;
    const others = await store.listEveryLive({ machineId: "collaborate", meta: { threadId } });
    const told = new Set(here);
    await Promise.all(others.filter(({ id }) => !told.has(id)).map(({ id }) => tell(id, event)));
  }

  /** One that has ended meanwhile has nothing to hear. */
  async function tell(id: string, event: ThreadMessageEvent): Promise<void> {
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
