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
 * observer record, keyed by channel and message; `exchange`: a thread's bot↔bot exchange.
 */
export type ThreadEntry =
  | { c: "parent"; k: string; v?: { channelId: string; at: number } }
  | { c: "participants"; k: string; v?: { agentIds: string[]; seenAt: number } }
  | { c: "route"; k: string; v?: ThreadRoute }
  | { c: "sink"; k: string; v?: true }
  | { c: "system"; k: string; v?: number }
  | { c: "observed"; k: string; v?: ObserverRecord }
  | { c: "exchange"; k: string; v?: BotExchange };

export type ThreadCollection = ThreadEntry["c"];

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
/** Activity alone is saved at most once a minute per thread: expiry is measured in hours. */
const ACTIVITY_SAVE_STEP_MS = 60_000;

const observedKey = (r: ObserverRecord) => `${r.channelId} ${r.messageId}`;
// Discord trims what it stores: compare texts as it shows them.
const systemPostKey = (channelId: string, agentId: string, content: string) =>
  `${channelId}\n${agentId}\n${content.trim()}`;

/**
 * What the runtime knows of Discord threads: parents, participants, the route cache that lets a pair
 * of agents reuse their thread, sink threads, the messages it posted as system messages, who is
 * answering whom, the compact observer history, and each thread's bot↔bot exchange (its turn
 * control). All of it but the short-lived "who is answering whom" is persisted entry by entry:
 * `onChange` says that entries changed, `takeChanges()` hands them over, and `expire()` keeps it all
 * bounded.
 */
export class ThreadState {
  onChange: () => void = () => {};
  readonly parents = new Map<string, string>();
  private readonly parentAt = new Map<string, number>();
  private readonly participants = new Map<string, Set<string>>();
  private readonly seenAt = new Map<string, number>();
  private readonly routes = new Map<string, ThreadRoute>();
  readonly sinkThreads = new Set<string>();
  /** Message id → when it was posted, oldest first. */
  private readonly systemMessages = new Map<string, number>();
  private readonly handling = new Map<string, { senderAgentId: string; threadId: string; at: number }>();
  private readonly observed = new Map<string, ObserverRecord[]>();
  private readonly exchanges = new Map<string, BotExchange>();
  /** System posts sent but not yet answered by Discord, by channel, agent and text: how many of each. */
  private readonly systemPostsInFlight = new Map<string, number>();
  private readonly changed = new Map<ThreadCollection, Set<string>>();

  /** `isLive(threadId)`: a live collaboration awaits an answer there, so expire() keeps its parent. */
  constructor(
    private readonly limits: ThreadStateLimits,
    private readonly now: () => number = Date.now,
    private readonly isLive: (threadId: string) => boolean = () => false,
  ) {}

  /** Adds participants; `at` is the activity that shows them (now, or a stored record's time at start). */
  addParticipants(threadId: string, agentIds: readonly string[], at = this.now()): void {
    // A start re-reads every stored record: what expired long ago is not brought back.
    if (!this.participants.has(threadId) && this.now() - at > this.limits.participantTTL) return;
    const set = this.participants.get(threadId) ?? new Set<string>();
    const before = set.size;
    for (const id of agentIds) set.add(id);
    this.participants.set(threadId, set);
    if (set.size !== before) this.mark("participants", threadId);
    this.touch(threadId, at);
  }

  /** Activity in a thread keeps its participants, for `participantTTL` after the last. */
  touch(threadId: string, at = this.now()): void {
    if (!this.participants.has(threadId)) return;
    const previous = this.seenAt.get(threadId) ?? 0;
    if (at <= previous) return;
    this.seenAt.set(threadId, at);
    if (at - previous > ACTIVITY_SAVE_STEP_MS) this.mark("participants", threadId);
  }

  setParent(threadId: string, channelId: string, at = this.now()): void {
    const same = this.parents.get(threadId) === channelId;
    if (same && at - (this.parentAt.get(threadId) ?? 0) <= ACTIVITY_SAVE_STEP_MS) return;
    this.parents.set(threadId, channelId);
    this.parentAt.set(threadId, Math.max(at, this.parentAt.get(threadId) ?? 0));
    this.mark("parent", threadId);
  }

  markSinkThread(threadId: string): void {
    if (this.sinkThreads.has(threadId)) return;
    this.sinkThreads.add(threadId);
    this.mark("sink", threadId);
  }

  participantsOf(threadId: string): string[] {
    return this.expired(threadId, this.now()) ? [] : [...(this.participants.get(threadId) ?? [])];
  }

  private expired(threadId: string, now: number): boolean {
    const seen = this.seenAt.get(threadId);
    return seen !== undefined && now - seen > this.limits.participantTTL;
  }

  isKnownThread(channelId: string): boolean {
    return this.parents.has(channelId) || this.participants.has(channelId);
  }

  useRoute(p: { fromAgentId: string; targetAgentId: string; topicId?: string } & ThreadRoute): void {
    const key = threadRouteKey(p.fromAgentId, p.targetAgentId, p.topicId);
    const known = this.routes.get(key);
    if (known === undefined && this.now() - p.lastUsedAt >= this.limits.threadReuseTTL) return;
    const same =
      known !== undefined &&
      known.threadId === p.threadId &&
      known.channelId === p.channelId &&
      known.lastUsedAt === p.lastUsedAt;
    // A route seen again as it is (every start re-reads them from the records) changes nothing to save.
    if (!same && (known === undefined || known.lastUsedAt <= p.lastUsedAt)) {
      this.routes.set(key, { threadId: p.threadId, channelId: p.channelId, lastUsedAt: p.lastUsedAt });
      this.mark("route", key);
    }
    this.setParent(p.threadId, p.channelId, p.lastUsedAt);
  }

  /**
   * A route read back from a stored collaboration at start (its post's time, which may differ from
   * when the runtime last used the route): a route already known for that thread stays as it is, so
   * a start does not rewrite every live collaboration's route.
   */
  restoreRoute(p: { fromAgentId: string; targetAgentId: string; topicId?: string } & ThreadRoute): void {
    const known = this.routes.get(threadRouteKey(p.fromAgentId, p.targetAgentId, p.topicId));
    if (known?.threadId === p.threadId && known.channelId === p.channelId) return;
    this.useRoute(p);
  }

  /** The pair's thread, if it was used within `threadReuseTTL`. */
  reusableRoute(fromAgentId: string, targetAgentId: string, topicId: string | undefined, now: number) {
    const route = this.routes.get(threadRouteKey(fromAgentId, targetAgentId, topicId));
    return route !== undefined && now - route.lastUsedAt < this.limits.threadReuseTTL ? route : undefined;
  }

  markSystemMessage(messageId: string, at = this.now()): void {
    this.systemMessages.delete(messageId);
    this.systemMessages.set(messageId, at);
    this.mark("system", messageId);
    for (const oldest of this.systemMessages.keys()) {
      if (this.systemMessages.size <= SYSTEM_MESSAGES_KEPT) break;
      this.systemMessages.delete(oldest);
      this.mark("system", oldest);
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
    if (this.systemMessages.has(messageId)) return true;
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
    return this.exchanges.get(threadId);
  }

  /** Keeps the thread's exchange as it now is; undefined: a new one opens with the next handled message. */
  setExchange(threadId: string, exchange: BotExchange | undefined): void {
    if (exchange === undefined ? !this.exchanges.delete(threadId) : this.exchanges.get(threadId) === exchange)
      return;
    if (exchange !== undefined) this.exchanges.set(threadId, exchange);
    this.mark("exchange", threadId);
  }

  /** Keeps at most `observerHistoryLimit` compact records per channel, none older than the TTL. */
  observe(record: ObserverRecord, now: number): void {
    const list = this.observed.get(record.channelId) ?? [];
    const kept = list.filter((r) => now - r.ts < this.limits.observerHistoryTTL);
    kept.push(record);
    if (kept.length > this.limits.observerHistoryLimit)
      kept.splice(0, kept.length - this.limits.observerHistoryLimit);
    for (const r of list) if (!kept.includes(r)) this.mark("observed", observedKey(r));
    this.mark("observed", observedKey(record));
    this.observed.set(record.channelId, kept);
  }

  observerHistory(channelId: string, now: number): ObserverRecord[] {
    return (this.observed.get(channelId) ?? []).filter((r) => now - r.ts < this.limits.observerHistoryTTL);
  }

  /**
   * Drops what no longer matters, so the state stays bounded however long the runtime runs:
   * - a route unused for `threadReuseTTL` (it can no longer be reused);
   * - a thread's participants `participantTTL` after its last activity;
   * - observer records older than `observerHistoryTTL`, and a channel left with none;
   * - a system-message id older than `cleanupMaxAgeMs` (its reminders are long answered or escalated);
   * - a thread's exchange `participantTTL` after its last handled message or its end;
   * - a thread's parent not learnt or used for `cleanupMaxAgeMs` or `participantTTL`, whichever is
   *   shorter, unless the thread still matters: a live collaboration awaits there, it has participants
   *   or a route, or it is a sink thread. A parent dropped this way is asked of Discord again if that
   *   thread ever comes back.
   * Sink threads are kept: they are registered. Returns how many entries were removed.
   */
  expire(now: number = this.now()): { removed: number } {
    let removed = 0;
    const drop = (c: ThreadCollection, key: string) => {
      removed += 1;
      this.mark(c, key);
    };
    for (const [key, route] of this.routes)
      if (now - route.lastUsedAt >= this.limits.threadReuseTTL && this.routes.delete(key)) drop("route", key);
    for (const threadId of this.participants.keys())
      if (this.expired(threadId, now)) {
        this.participants.delete(threadId);
        this.seenAt.delete(threadId);
        drop("participants", threadId);
      }
    for (const [channelId, list] of this.observed) {
      const kept = list.filter((r) => now - r.ts < this.limits.observerHistoryTTL);
      for (const r of list) if (!kept.includes(r)) drop("observed", observedKey(r));
      if (kept.length === 0) this.observed.delete(channelId);
      else this.observed.set(channelId, kept);
    }
    for (const [id, at] of this.systemMessages)
      if (now - at > this.limits.cleanupMaxAgeMs && this.systemMessages.delete(id)) drop("system", id);
    for (const [threadId, exchange] of this.exchanges)
      if (now - exchange.at > this.limits.participantTTL && this.exchanges.delete(threadId))
        drop("exchange", threadId);
    const routed = new Set([...this.routes.values()].map((r) => r.threadId));
    // A parent is a cache (Discord's messages carry it, and describeChannel tells it): once a thread's
    // participants would have expired, nothing of it is left to serve, and a month of finished
    // threads' parents would be most of the state, read at every start.
    const parentAge = Math.min(this.limits.cleanupMaxAgeMs, this.limits.participantTTL);
    for (const [threadId, at] of this.parentAt) {
      if (now - at <= parentAge || routed.has(threadId)) continue;
      if (this.participants.has(threadId) || this.sinkThreads.has(threadId) || this.isLive(threadId))
        continue;
      this.parents.delete(threadId);
      this.parentAt.delete(threadId);
      drop("parent", threadId);
    }
    return { removed };
  }

  /** Restores persisted entries (the older first: a later entry for the same key wins). */
  load(entries: Iterable<ThreadEntry>): void {
    for (const entry of entries) this.apply(entry);
    this.changed.clear();
  }

  /** Every persisted entry as it is now (for a compaction). */
  entries(): ThreadEntry[] {
    return [...this.eachEntry()];
  }

  /**
   * Every persisted entry, each read as it is when the iteration reaches it, for a fold that lets the
   * event loop run between pieces: an entry changed meanwhile is read as changed (and saved again with
   * the next changes); one removed meanwhile comes without a value, or not at all.
   */
  *eachEntry(): Generator<ThreadEntry> {
    for (const c of ["parent", "participants", "route", "sink", "system", "observed", "exchange"] as const)
      for (const key of this.keysOf(c)) yield this.entry(c, key);
  }

  /** The entries changed since the last call, as they are now (removed ones without a value). */
  takeChanges(): ThreadEntry[] {
    const changes = [...this.changed].flatMap(([c, keys]) => [...keys].map((key) => this.entry(c, key)));
    this.changed.clear();
    return changes;
  }

  /** Hands changes taken but not saved back, so the next save writes them (as they are then). */
  returnChanges(changes: readonly ThreadEntry[]): void {
    for (const { c, k } of changes) this.mark(c, k, false);
  }

  private mark(c: ThreadCollection, key: string, notify = true): void {
    const keys = this.changed.get(c) ?? new Set<string>();
    keys.add(key);
    this.changed.set(c, keys);
    if (notify) this.onChange();
  }

  private keysOf(c: ThreadCollection): Iterable<string> {
    if (c === "parent") return this.parents.keys();
    if (c === "participants") return this.participants.keys();
    if (c === "route") return this.routes.keys();
    if (c === "sink") return this.sinkThreads;
    if (c === "system") return this.systemMessages.keys();
    if (c === "exchange") return this.exchanges.keys();
    return [...this.observed.values()].flat().map(observedKey);
  }

  private entry(c: ThreadCollection, k: string): ThreadEntry {
    if (c === "parent") {
      const channelId = this.parents.get(k);
      return channelId === undefined ? { c, k } : { c, k, v: { channelId, at: this.parentAt.get(k) ?? 0 } };
    }
    if (c === "participants") {
      const set = this.participants.get(k);
      return set === undefined
        ? { c, k }
        : { c, k, v: { agentIds: [...set], seenAt: this.seenAt.get(k) ?? 0 } };
    }
    if (c === "route") {
      const route = this.routes.get(k);
      return route === undefined ? { c, k } : { c, k, v: { ...route } };
    }
    if (c === "sink") return this.sinkThreads.has(k) ? { c, k, v: true } : { c, k };
    if (c === "system") {
      const at = this.systemMessages.get(k);
      return at === undefined ? { c, k } : { c, k, v: at };
    }
    if (c === "exchange") {
      const exchange = this.exchanges.get(k);
      return exchange === undefined ? { c, k } : { c, k, v: exchange };
    }
    const record = this.observed.get(k.slice(0, k.indexOf(" ")))?.find((r) => observedKey(r) === k);
    return record === undefined ? { c, k } : { c, k, v: record };
  }

  private apply(e: ThreadEntry): void {
    if (e.c === "parent") {
      if (e.v === undefined) this.parents.delete(e.k);
      else this.parents.set(e.k, e.v.channelId);
      if (e.v === undefined) this.parentAt.delete(e.k);
      else this.parentAt.set(e.k, e.v.at);
    } else if (e.c === "participants") {
      if (e.v === undefined) this.participants.delete(e.k);
      else this.participants.set(e.k, new Set(e.v.agentIds));
      if (e.v === undefined) this.seenAt.delete(e.k);
      else this.seenAt.set(e.k, e.v.seenAt);
    } else if (e.c === "route") {
      if (e.v === undefined) this.routes.delete(e.k);
      else this.routes.set(e.k, e.v);
    } else if (e.c === "sink") {
      if (e.v === undefined) this.sinkThreads.delete(e.k);
      else this.sinkThreads.add(e.k);
    } else if (e.c === "system") {
      this.systemMessages.delete(e.k);
      if (e.v !== undefined) this.systemMessages.set(e.k, e.v);
    } else if (e.c === "exchange") {
      if (e.v === undefined) this.exchanges.delete(e.k);
      else this.exchanges.set(e.k, e.v);
    } else {
      const channelId = e.k.slice(0, e.k.indexOf(" "));
      const list = (this.observed.get(channelId) ?? []).filter((r) => observedKey(r) !== e.k);
      if (e.v !== undefined) list.push(e.v);
      list.sort((a, b) => a.ts - b.ts);
      if (list.length === 0) this.observed.delete(channelId);
      else this.observed.set(channelId, list);
    }
  }
}
