import { type ActorRecord, isSharedStore } from "../persistence/index.js";
import type { Entry } from "../durable/hostedActors.js";
import type { InboundDiscordMessage } from "../policies/index.js";
import type { Host } from "../durable/DurableHost.js";
import { landedOrRelayed } from "../durable/sharedStoreEvents.js";
import type { AwaitingAnswers } from "./AwaitingAnswers.js";
import { type CollaborationMeta, collaborationMeta } from "./collaborationMeta.js";
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
  actors: Host;
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
  const { actors, threads, requireStarted, now, cleanupMaxAgeMs } = deps;
  const { awaiting } = deps;

  /**
   * Hands the message to every live collaboration in the thread: those this process runs, and (with a
   * store shared by several processes) the others' through the store. Resolves once each change it made
   * is durable (relayed through a shared store to the process that took an actor over meanwhile, if one
   * did) and each relayed event is stored.
   */
  async function routeThreadMessage(threadId: string, m: InboundDiscordMessage): Promise<void> {
    const event = threadMessageEvent(m);
    const told: Entry[] = [];
    for (const id of awaiting.in(threadId)) {
      const entry = actors.hostedOrWoken(id);
      if (entry === undefined) continue;
      entry.actor.send(event);
      told.push(entry);
    }
    actors.flush();
    const store = actors.openStore("handleDiscordMessage");
    await Promise.all([
      ...told.map((entry) => landedOrRelayed(store, entry, event)),
      relayToOtherProcesses(threadId, event),
    ]);
  }

  /** With a store shared by several processes: the event to the thread's collaborations the others run. */
  async function relayToOtherProcesses(threadId: string, event: ThreadMessageEvent): Promise<void> {
    const store = actors.openStore("handleDiscordMessage");
    if (!isSharedStore(store)) return;
    const local = new Set(actors.ids());
    const others = (await store.listEveryLive({ machineId: "collaborate", meta: { threadId } })).filter(
      (record) => !local.has(record.id),
    );
    await Promise.all(others.map((record) => store.sendTo({ id: record.id, event })));
  }

  async function mentions(): Promise<MentionSummary[]> {
    requireStarted("mentions");
    const store = actors.openStore("mentions");
    await store.prune(now() - cleanupMaxAgeMs);
    const summaries = new Map<string, MentionSummary>();
    const add = (id: string, meta: CollaborationMeta | undefined) => {
      if (meta?.threadId === undefined || meta.mention === undefined) return;
      summaries.set(id, { id, threadId: meta.threadId, targetAgentId: meta.targetAgentId, ...meta.mention });
    };
    for (const record of await store.list("archive")) {
      if (record.machineId === "collaborate") add(record.id, record.meta as CollaborationMeta | undefined);
    }
    // Another process's live collaborations, as last stored (its own entries below are newer).
    if (isSharedStore(store)) {
      for (const record of await store.listEveryLive({ machineId: "collaborate" }))
        add(record.id, record.meta as CollaborationMeta | undefined);
    }
    // One that has just finished is archived once its last write lands: until then it is listed from that record.
    for (const record of actors.finishingRecords())
      if (record.machineId === "collaborate") add(record.id, record.meta as CollaborationMeta | undefined);
    for (const record of actors.dormantRecords())
      if (record.machineId === "collaborate") add(record.id, record.meta as CollaborationMeta | undefined);
    for (const entry of actors.hostedEntries())
      if (entry.kind === "collaborate") add(entry.id, collaborationMeta(entry.actor));
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
