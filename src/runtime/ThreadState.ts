import type { BotExchange } from "../policies/collaboration/botExchange.js";
import { type ObserverRecord, threadRouteKey } from "../policies/index.js";

export interface ThreadRoute {
  threadId: string;
  channelId: string;
  lastUsedAt: number;
}

/**
 * One persisted entry of the thread state, by collection and key; without `v` it was removed.
 * `parent`: a thread's parent channel and when it was last learnt or used; `participants`: the agents
 * in a thread and its last activity; `route`: a pair's thread (by threadRouteKey); `sink`: a report
 * thread; `system`: a message the runtime posted as a system message, and when; `observed`: one
 * observer record, keyed by channel and message; `exchange`: a thread's bot↔bot exchange;
 * `conversation`: a sessionsSend route's latest conversation and the `ts` of the event that set it;
 * `withdrawn`: the actor of a call rejected as the runtime stopped, which the next start withdraws.
 */
export type ThreadEntry =
  | { c: "parent"; k: string; v?: { channelId: string; at: number } }
  | { c: "participants"; k: string; v?: { agentIds: string[]; seenAt: number } }
  | { c: "route"; k: string; v?: ThreadRoute }
  | { c: "sink"; k: string; v?: true }
  | { c: "system"; k: string; v?: number }
  | { c: "observed"; k: string; v?: ObserverRecord }
  | { c: "exchange"; k: string; v?: BotExchange }
  | { c: "conversation"; k: string; v?: { conversationId: string; at: number } }
  | { c: "withdrawn"; k: string; v?: true };

export type ThreadCollection = ThreadEntry["c"];
/** The collections held as a Map of their persisted values (the observer history is held by channel). */
type KeyedCollection = Exclude<ThreadCollection, "observed">;
type ValueOf<C extends ThreadCollection> = NonNullable<Extract<ThreadEntry, { c: C }>["v"]>;

export interface ThreadStateLimits {
  threadReuseTTL: number;
  observerHistoryLimit: number;
  observerHistoryTTL: number;
  participantTTL: number;
  /**
   * How long a system-message id is kept (a2aRetry.cleanupMaxAgeMs); a parent no live thread needs is
   * kept for the shorter of this and `participantTTL`.
   */
  cleanupMaxAgeMs: number;
}

/** System-message ids kept at most: enough to recognise the reminders of every live mention. */
const SYSTEM_MESSAGES_KEPT = 10_000;
/** sessionsSend routes whose latest conversation is kept at most; the least recently updated goes first. */
const CONVERSATIONS_KEPT = 10_000;
/** Activity alone is saved at most once a minute per thread: expiry is measured in hours. */
const ACTIVITY_SAVE_STEP_MS = 60_000;

/** An observer record's key in the thread state: its channel and message ids. */
export const observedKey = (r: Pick<ObserverRecord, "channelId" | "messageId">) =>
  `${r.channelId} ${r.messageId}`;
// Discord trims what it stores: compare texts as it shows them.
const systemPostKey = (channelId: string, agentId: string, content: string) =>
  `${channelId}\n${agentId}\n${content.trim()}`;

/**
 * What the runtime knows of Discord threads and routes (see ThreadEntry), persisted entry by entry:
 * `onChange` names each entry that changed, by its id (`<collection> <key>`), and `expire()` keeps it
 * all bounded. Who is answering whom and the system posts in flight are short-lived, and not persisted.
 */
export class ThreadState {
  onChange: (id: string) => void = () => {};
  /** Each collection as persisted, by key; the system messages and conversations oldest first. */
  private readonly held: { [C in KeyedCollection]: Map<string, ValueOf<C>> } = {
    parent: new Map(),
    participants: new Map(),
    route: new Map(),
    sink: new Map(),
    system: new Map(),
    exchange: new Map(),
    conversation: new Map(),
    withdrawn: new Map(),
  };
  private readonly handling = new Map<string, { senderAgentId: string; threadId: string; at: number }>();
  private readonly observed = new Map<string, ObserverRecord[]>();
  /** System posts sent but not yet answered by Discord, by channel, agent and text: how many of each. */
  private readonly systemPostsInFlight = new Map<string, number>();

  /** `isLive(threadId)`: a live collaboration awaits an answer there, so expire() keeps its parent. */
  constructor(
    private readonly limits: ThreadStateLimits,
    private readonly now: () => number = Date.now,
    private readonly isLive: (threadId: string) => boolean = () => false,
  ) {}

  /** Adds participants; `at` is the activity that shows them (now, or a stored record's time at start). */
  addParticipants(threadId: string, agentIds: readonly string[], at = this.now()): void {
    const known = this.held.participants.get(threadId);
    // A start re-reads every stored record: what expired long ago is not brought back.
    if (known === undefined && this.now() - at > this.limits.participantTTL) return;
    // Nearly always no one is new: a start adds the participants of every live collaboration again.
    if (known === undefined || agentIds.some((id) => !known.agentIds.includes(id))) {
      const ids = [...new Set([...(known?.agentIds ?? []), ...agentIds])];
      this.put("participants", threadId, { agentIds: ids, seenAt: known?.seenAt ?? 0 });
    }
    this.touch(threadId, at);
  }

  /** Activity in a thread keeps its participants, for `participantTTL` after the last. */
  touch(threadId: string, at = this.now()): void {
    const known = this.held.participants.get(threadId);
    if (known === undefined || at <= known.seenAt) return;
    this.held.participants.set(threadId, { ...known, seenAt: at });
    if (at - known.seenAt > ACTIVITY_SAVE_STEP_MS) this.mark("participants", threadId);
  }

  /** The thread's parent channel, as the runtime knows it. */
  parentOf(threadId: string): string | undefined {
    return this.held.parent.get(threadId)?.channelId;
  }

  setParent(threadId: string, channelId: string, at = this.now()): void {
    const known = this.held.parent.get(threadId);
    if (known?.channelId === channelId && at - known.at <= ACTIVITY_SAVE_STEP_MS) return;
    this.put("parent", threadId, { channelId, at: Math.max(at, known?.at ?? 0) });
  }

  isSinkThread(threadId: string): boolean {
    return this.held.sink.has(threadId);
  }

  markSinkThread(threadId: string): void {
    if (this.held.sink.has(threadId)) return;
    this.put("sink", threadId, true);
  }

  participantsOf(threadId: string): string[] {
    return this.expired(threadId, this.now())
      ? []
      : [...(this.held.participants.get(threadId)?.agentIds ?? [])];
  }

  private expired(threadId: string, now: number): boolean {
    const seen = this.held.participants.get(threadId)?.seenAt;
    return seen !== undefined && now - seen > this.limits.participantTTL;
  }

  isKnownThread(channelId: string): boolean {
    return this.held.parent.has(channelId) || this.held.participants.has(channelId);
  }

  useRoute(p: { fromAgentId: string; targetAgentId: string; topicId?: string } & ThreadRoute): void {
    const key = threadRouteKey(p.fromAgentId, p.targetAgentId, p.topicId);
    const known = this.held.route.get(key);
    if (known === undefined && this.now() - p.lastUsedAt >= this.limits.threadReuseTTL) return;
    const same =
      known !== undefined &&
      known.threadId === p.threadId &&
      known.channelId === p.channelId &&
      known.lastUsedAt === p.lastUsedAt;
    // A route seen again as it is (every start re-reads them from the records) changes nothing to save.
    if (!same && (known === undefined || known.lastUsedAt <= p.lastUsedAt)) {
      this.put("route", key, { threadId: p.threadId, channelId: p.channelId, lastUsedAt: p.lastUsedAt });
    }
    this.setParent(p.threadId, p.channelId, p.lastUsedAt);
  }

  /**
   * A route read back from a stored collaboration at start: one already known for that thread stays as
   * it is (its time may differ), so a start does not rewrite every live collaboration's route.
   */
  restoreRoute(p: { fromAgentId: string; targetAgentId: string; topicId?: string } & ThreadRoute): void {
    const known = this.held.route.get(threadRouteKey(p.fromAgentId, p.targetAgentId, p.topicId));
    if (known?.threadId === p.threadId && known.channelId === p.channelId) return;
    this.useRoute(p);
  }

  /** The pair's thread, if it was used within `threadReuseTTL`. */
  reusableRoute(fromAgentId: string, targetAgentId: string, topicId: string | undefined, now: number) {
    const route = this.held.route.get(threadRouteKey(fromAgentId, targetAgentId, topicId));
    return route !== undefined && now - route.lastUsedAt < this.limits.threadReuseTTL ? route : undefined;
  }

  /** The latest conversation of a sessionsSend route. */
  conversationOf(routeKey: string): string | undefined {
    return this.held.conversation.get(routeKey)?.conversationId;
  }

  /**
   * A route's conversation as an a2a.send, a2a.response or a2a.complete event carries it (`at`: its
   * `ts`); an event older than the route's entry changes nothing.
   */
  noteConversation(routeKey: string, conversationId: string, at: number): void {
    const known = this.held.conversation.get(routeKey);
    if (known !== undefined && known.at > at) return;
    this.keepLatest("conversation", routeKey, { conversationId, at }, CONVERSATIONS_KEPT);
  }

  /** The actors of calls rejected as the runtime stopped, for the next start to withdraw. */
  withdrawnCalls(): string[] {
    return [...this.held.withdrawn.keys()];
  }

  /** Keeps the actors of rejected calls until the next start; `kept` false: they were withdrawn. */
  keepWithdrawn(ids: readonly string[], kept = true): void {
    for (const id of ids) this.put("withdrawn", id, kept || undefined);
  }

  markSystemMessage(messageId: string, at = this.now()): void {
    this.keepLatest("system", messageId, at, SYSTEM_MESSAGES_KEPT);
  }

  /** Sets the entry as the collection's newest, and drops the oldest beyond `kept`. */
  private keepLatest<C extends "system" | "conversation">(
    c: C,
    key: string,
    value: ValueOf<C>,
    kept: number,
  ) {
    const held = this.held[c] as Map<string, ValueOf<C>>;
    held.delete(key);
    held.set(key, value);
    this.mark(c, key);
    for (const oldest of held.keys()) {
      if (held.size <= kept) break;
      held.delete(oldest);
      this.mark(c, oldest);
    }
  }

  /**
   * Whether the runtime posted this message as a system message (a reminder, an escalation, a notice).
   * Discord may deliver a post before its request returns the id: while a system post is in flight,
   * a message of the same agent, channel and text is taken for it.
   */
  isSystemMessage(
    messageId: string,
    post?: { channelId: string; agentId?: string; content: string },
  ): boolean {
    if (this.held.system.has(messageId)) return true;
    return (
      post?.agentId !== undefined &&
      this.systemPostsInFlight.has(systemPostKey(post.channelId, post.agentId, post.content))
    );
  }

  /** A system post is being sent; call the returned function once Discord has answered (or failed). */
  postingSystemMessage(channelId: string, agentId: string, content: string): () => void {
    const key = systemPostKey(channelId, agentId, content);
    this.systemPostsInFlight.set(key, (this.systemPostsInFlight.get(key) ?? 0) + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.systemPostsInFlight.get(key) ?? 1) - 1;
      if (left > 0) this.systemPostsInFlight.set(key, left);
      else this.systemPostsInFlight.delete(key);
    };
  }

  /** `agentId` is now answering `senderAgentId` in `threadId` (for the reply_in_thread rule). */
  noteHandling(agentId: string, senderAgentId: string, threadId: string, at: number): void {
    this.handling.set(agentId, { senderAgentId, threadId, at });
  }

  handlingOf(agentId: string, now: number, maxAgeMs: number) {
    const h = this.handling.get(agentId);
    return h !== undefined && now - h.at <= maxAgeMs ? h : undefined;
  }

  /** The thread's current bot↔bot exchange, if one has opened since the last human message. */
  exchangeOf(threadId: string): BotExchange | undefined {
    return this.held.exchange.get(threadId);
  }

  /** Keeps the thread's exchange as it now is; undefined: a new one opens with the next handled message. */
  setExchange(threadId: string, exchange: BotExchange | undefined): void {
    if (this.held.exchange.get(threadId) !== exchange) this.put("exchange", threadId, exchange);
  }

  /** Keeps at most `observerHistoryLimit` compact records per channel, none older than the TTL. */
  observe(record: ObserverRecord, now: number): void {
    const kept = this.observerHistory(record.channelId, now);
    kept.push(record);
    if (kept.length > this.limits.observerHistoryLimit)
      kept.splice(0, kept.length - this.limits.observerHistoryLimit);
    this.mark("observed", observedKey(record));
    this.keepObserved(record.channelId, kept);
  }

  /** Replaces a channel's observer records with `kept`; returns how many were dropped. */
  private keepObserved(channelId: string, kept: ObserverRecord[]): number {
    // A Set: a channel may keep thousands (observerHistoryLimit), and each observe() comes here.
    const keeping = new Set(kept);
    const dropped = (this.observed.get(channelId) ?? []).filter((r) => !keeping.has(r));
    for (const r of dropped) this.mark("observed", observedKey(r));
    if (kept.length === 0) this.observed.delete(channelId);
    else this.observed.set(channelId, kept);
    return dropped.length;
  }

  observerHistory(channelId: string, now: number): ObserverRecord[] {
    return (this.observed.get(channelId) ?? []).filter((r) => now - r.ts < this.limits.observerHistoryTTL);
  }

  /**
   * Drops what no longer matters, each by its age, so the state stays bounded however long the runtime
   * runs (sink threads and withdrawn calls are kept; conversations are bounded by count).
   */
  expire(now: number = this.now()): { removed: number } {
    let removed = 0;
    const dropWhere = <C extends KeyedCollection>(c: C, old: (value: ValueOf<C>, key: string) => boolean) => {
      for (const [key, value] of this.held[c] as Map<string, ValueOf<C>>)
        if (old(value, key)) {
          removed += 1;
          this.put(c, key, undefined);
        }
    };
    dropWhere("route", (route) => now - route.lastUsedAt >= this.limits.threadReuseTTL);
    dropWhere("participants", (_, threadId) => this.expired(threadId, now));
    for (const channelId of this.observed.keys())
      removed += this.keepObserved(channelId, this.observerHistory(channelId, now));
    dropWhere("system", (at) => now - at > this.limits.cleanupMaxAgeMs);
    dropWhere("exchange", (exchange) => now - exchange.at > this.limits.participantTTL);
    const routed = new Set([...this.held.route.values()].map((r) => r.threadId));
    // A parent is a cache (Discord tells it again): kept only while its thread still matters, else a
    // month of finished threads' parents would be most of the state, read at every start.
    const parentAge = Math.min(this.limits.cleanupMaxAgeMs, this.limits.participantTTL);
    dropWhere(
      "parent",
      (parent, threadId) =>
        now - parent.at > parentAge &&
        !routed.has(threadId) &&
        !this.held.participants.has(threadId) &&
        !this.held.sink.has(threadId) &&
        !this.isLive(threadId),
    );
    return { removed };
  }

  /** Restores persisted entries (the older first: a later entry for the same key wins). */
  load(entries: Iterable<ThreadEntry>): void {
    // Observer records by channel and key, each channel's put in time order once: it may hold many.
    const observed = new Map<string, Map<string, ObserverRecord>>();
    for (const entry of entries) {
      if (entry.c !== "observed") {
        const held = this.held[entry.c] as Map<string, unknown>;
        held.delete(entry.k);
        if (entry.v !== undefined) held.set(entry.k, entry.v);
        continue;
      }
      const channelId = entry.k.slice(0, entry.k.indexOf(" "));
      const byKey =
        observed.get(channelId) ??
        new Map((this.observed.get(channelId) ?? []).map((r) => [observedKey(r), r]));
      observed.set(channelId, byKey);
      byKey.delete(entry.k);
      if (entry.v !== undefined) byKey.set(entry.k, entry.v);
    }
    for (const [channelId, byKey] of observed) {
      const list = [...byKey.values()].sort((a, b) => a.ts - b.ts);
      if (list.length === 0) this.observed.delete(channelId);
      else this.observed.set(channelId, list);
    }
    // Stored by key, read back in any order: the least recently updated conversation goes first again.
    const conversations = [...this.held.conversation].sort(([, a], [, b]) => a.at - b.at);
    this.held.conversation.clear();
    for (const [key, value] of conversations) this.held.conversation.set(key, value);
  }

  /** Every persisted entry as it is now. */
  entries(): ThreadEntry[] {
    return [...this.ids()].map((id) => this.entry(id));
  }

  /** The id (`<collection> <key>`) of every persisted entry. */
  *ids(): Generator<string> {
    for (const c of Object.keys(this.held) as KeyedCollection[])
      for (const key of this.held[c].keys()) yield `${c} ${key}`;
    for (const record of [...this.observed.values()].flat()) yield `observed ${observedKey(record)}`;
  }

  /** How many persisted entries there are: as many as ids() yields, without making their ids. */
  get size(): number {
    let entries = 0;
    for (const held of Object.values(this.held)) entries += held.size;
    for (const records of this.observed.values()) entries += records.length;
    return entries;
  }

  /** The entry with this id as it is now; without a value when there is none. */
  entry(id: string): ThreadEntry {
    const at = id.indexOf(" ");
    const [c, k] = [id.slice(0, at) as ThreadCollection, id.slice(at + 1)];
    const v =
      c === "observed"
        ? this.observed.get(k.slice(0, k.indexOf(" ")))?.find((r) => observedKey(r) === k)
        : this.held[c].get(k);
    return (v === undefined ? { c, k } : { c, k, v }) as ThreadEntry;
  }

  /** Sets an entry (removes it, with undefined) and notes the change. */
  private put<C extends KeyedCollection>(c: C, key: string, value: ValueOf<C> | undefined): void {
    const held = this.held[c] as Map<string, ValueOf<C>>;
    if (value === undefined) held.delete(key);
    else held.set(key, value);
    this.mark(c, key);
  }

  private mark(c: ThreadCollection, key: string): void {
    this.onChange(`${c} ${key}`);
  }
}
