import { cameAfter } from "../machines/index.js";
import { type ActorRecord, isSharedStore } from "../persistence/index.js";
import type { Entry } from "../durable/hostedActors.js";
import type { InboundDiscordMessage } from "../policies/index.js";
import type { Host } from "../durable/DurableHost.js";
import { landedOrRelayed } from "../durable/sharedStoreEvents.js";
import type { AwaitingAnswers } from "./AwaitingAnswers.js";
import { type CollaborationMeta, collaborationMeta, dormantMeta } from "./collaborationMeta.js";
import type { MentionSummary } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

/** The event that tells a collaboration its target answered. */
export type ResponseEvent = { type: "RESPONSE_RECEIVED"; authorId: string; at: number; messageId: string };

/** An event relayed through a shared store is checked before it reaches an actor. */
function isResponseEvent(event: { type: string; [key: string]: unknown }): event is ResponseEvent {
  return (
    event.type === "RESPONSE_RECEIVED" &&
    typeof event.authorId === "string" &&
    typeof event.at === "number" &&
    typeof event.messageId === "string"
  );
}

function responseEvent(m: InboundDiscordMessage): ResponseEvent {
  return { type: "RESPONSE_RECEIVED", authorId: m.authorId, at: m.ts, messageId: m.messageId };
}

export interface MentionTrackingDeps {
  actors: Host;
  threads: ThreadState;
  awaiting: AwaitingAnswers;
  /** Agent id by its bot's user id. */
  agentOfBot: ReadonlyMap<string, string>;
  requireStarted: (method: string) => void;
  /** How long finished collaborations stay listed. */
  cleanupMaxAgeMs: number;
  now: () => number;
}

/**
 * The mentions side of the collaborations: which collaborations await an answer in which thread,
 * telling them of their target's message, listing them (mentions()), and indexing the stored ones at
 * start.
 */
export function createMentionTracking(deps: MentionTrackingDeps) {
  const { actors, threads, agentOfBot, requireStarted, now, cleanupMaxAgeMs } = deps;
  const { awaiting } = deps;

  /**
   * Tells every collaboration awaiting an answer in the thread; resolves once each one told has it
   * durably (relayed through a shared store to the process that took it over meanwhile, if one did).
   * Resolves how many were told.
   */
  async function trackResponse(threadId: string, m: InboundDiscordMessage): Promise<number> {
    const event = responseEvent(m);
    const told: Entry[] = [];
    for (const id of awaiting.in(threadId)) {
      const entry = actors.hostedOrWoken(id);
      if (entry !== undefined && tellResponse(entry, event)) told.push(entry);
    }
    if (told.length === 0) return 0;
    actors.flush();
    const store = actors.openStore("handleDiscordMessage");
    await Promise.all(told.map((entry) => landedOrRelayed(store, entry, event)));
    return told.length;
  }

  /**
   * Tells a hosted collaboration of a message in its thread, if it is its target's answer; returns
   * whether it was. Also how an answer relayed by another process (through a shared store) arrives.
   */
  function tellResponse(entry: Entry, event: { type: string; [key: string]: unknown }): boolean {
    if (entry.kind !== "collaborate" || !isResponseEvent(event)) return false;
    const snapshot = entry.actor.getSnapshot() as { value: string };
    if (snapshot.value !== "awaitingResponse") return false;
    // Only the target's answer can end a mention. Another bot's message (the requester's own post
    // echoed back, say) would rewrite an unchanged snapshot and move its save time past the first
    // try of a post in flight, which EarlierPosts reads as the post's age.
    // A message of the target's from before the mention (delivered late) cannot answer it either.
    const meta = collaborationMeta(entry.actor);
    if (agentOfBot.get(event.authorId) !== meta.targetAgentId || !cameAfter(event, meta)) return false;
    entry.actor.send(event);
    return true;
  }

  /**
   * With a store shared by several processes: sends the answer to the collaborations in the thread that
   * other processes run (their owner checks it as tellResponse does); resolves once it is stored.
   * Returns how many were sent.
   */
  async function relayResponse(threadId: string, m: InboundDiscordMessage): Promise<number> {
    const store = actors.openStore("handleDiscordMessage");
    if (!isSharedStore(store)) return 0;
    const local = new Set(actors.ids());
    const author = agentOfBot.get(m.authorId);
    const others = (await store.listEveryLive({ machineId: "collaborate", threadId })).filter((record) => {
      const meta = record.meta as CollaborationMeta | undefined;
      return (
        !local.has(record.id) &&
        meta !== undefined &&
        meta.targetAgentId === author &&
        cameAfter({ at: m.ts, messageId: m.messageId }, meta)
      );
    });
    await Promise.all(others.map((record) => store.sendTo({ id: record.id, event: responseEvent(m) })));
    return others.length;
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
        add(record.id, (record.meta as CollaborationMeta | undefined) ?? dormantMeta(record));
    }
    // One that has just finished is archived once its last write lands: until then it is listed from that record.
    for (const record of actors.finishingRecords())
      if (record.machineId === "collaborate") add(record.id, record.meta as CollaborationMeta | undefined);
    for (const record of actors.dormantRecords())
      if (record.machineId === "collaborate") add(record.id, dormantMeta(record));
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

  return { trackResponse, tellResponse, relayResponse, mentions, indexRecord };
}
