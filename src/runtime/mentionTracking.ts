import type { ActorRecord } from "../persistence/index.js";
import type { InboundDiscordMessage } from "../services/index.js";
import type { Host } from "../durable/DurableHost.js";
import type { AwaitingAnswers } from "./AwaitingAnswers.js";
import { type CollaborationMeta, collaborationMeta, dormantMeta } from "./collaborationMeta.js";
import type { MentionSummary } from "./ports.js";
import type { ThreadState } from "./ThreadState.js";

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

  /** Tells every collaboration awaiting an answer in the thread; returns how many were told. */
  function trackResponse(threadId: string, m: InboundDiscordMessage): number {
    let told = 0;
    for (const id of awaiting.in(threadId)) {
      const entry = actors.hostedOrWoken(id);
      if (entry === undefined) continue;
      const snapshot = entry.actor.getSnapshot() as { value: string };
      if (snapshot.value !== "awaitingResponse") continue;
      // Only the target's answer can end a mention. Another bot's message (the requester's own post
      // echoed back, say) would rewrite an unchanged snapshot and move its save time past the first
      // try of a post in flight, which EarlierPosts reads as the post's age.
      // A message of the target's from before the mention (delivered late) cannot answer it either.
      const meta = collaborationMeta(entry.actor);
      if (agentOfBot.get(m.authorId) !== meta.targetAgentId || m.ts < (meta.sentAt ?? 0)) continue;
      entry.actor.send({ type: "RESPONSE_RECEIVED", authorId: m.authorId, at: m.ts, messageId: m.messageId });
      told += 1;
    }
    return told;
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
        threads.useRoute({
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

  return { trackResponse, mentions, indexRecord };
}
