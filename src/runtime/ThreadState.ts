import { type ObserverRecord, threadRouteKey } from "../services/index.js";

export interface ThreadRoute {
  threadId: string;
  channelId: string;
  lastUsedAt: number;
}

/** The persisted part of ThreadState (`threads.json` in the state dir). */
export interface ThreadStateData {
  version: 1;
  parents: Record<string, string>;
  participants: Record<string, string[]>;
  /** The last activity in each participants' thread: participants expire `participantTTL` after it. */
  participantsSeenAt?: Record<string, number>;
  routes: Record<string, ThreadRoute>;
  sinkThreads: string[];
  systemMessages: string[];
  observed: Record<string, ObserverRecord[]>;
}

/** System-message ids kept: enough to recognise the reminders of every live mention. */
const SYSTEM_MESSAGES_KEPT = 10_000;

/**
 * What the runtime knows of Discord threads: parents, participants, the route cache that lets a pair
 * of agents reuse their thread (design 002 §4), sink threads, the messages it posted as system
 * messages, who is answering whom, and the compact observer history (design 002 §3). All of it but
 * the short-lived "who is answering whom" is persisted (see ThreadStateData); `onChange` says when.
 */
export class ThreadState {
  onChange: () => void = () => {};
  readonly parents = new Map<string, string>();
  private readonly participants = new Map<string, Set<string>>();
  private readonly seenAt = new Map<string, number>();
  private readonly routes = new Map<string, ThreadRoute>();
  readonly sinkThreads = new Set<string>();
  private readonly systemMessages = new Set<string>();
  private readonly handling = new Map<string, { senderAgentId: string; threadId: string; at: number }>();
  private readonly observed = new Map<string, ObserverRecord[]>();

  constructor(
    private readonly limits: {
      threadReuseTTL: number;
      observerHistoryLimit: number;
      observerHistoryTTL: number;
      participantTTL: number;
    },
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds participants; `at` is the activity that shows them (now, or a stored record's time at start). */
  addParticipants(threadId: string, agentIds: readonly string[], at = this.now()): void {
    const set = this.participants.get(threadId) ?? new Set<string>();
    const before = set.size;
    for (const id of agentIds) set.add(id);
    this.participants.set(threadId, set);
    if (set.size !== before) this.onChange();
    this.touch(threadId, at);
  }

  /** Activity in a thread keeps its participants (design 002 appendix: participantTTL after the last). */
  touch(threadId: string, at = this.now()): void {
    if (!this.participants.has(threadId)) return;
    const previous = this.seenAt.get(threadId) ?? 0;
    if (at <= previous) return;
    this.seenAt.set(threadId, at);
    // Saved at most once a minute per thread for activity alone: expiry is measured in hours.
    if (at - previous > 60_000) this.onChange();
  }

  setParent(threadId: string, channelId: string): void {
    if (this.parents.get(threadId) === channelId) return;
    this.parents.set(threadId, channelId);
    this.onChange();
  }

  markSinkThread(threadId: string): void {
    if (this.sinkThreads.has(threadId)) return;
    this.sinkThreads.add(threadId);
    this.onChange();
  }

  snapshot(): ThreadStateData {
    return {
      version: 1,
      parents: Object.fromEntries(this.parents),
      participants: Object.fromEntries(
        [...this.participants].filter(([id]) => !this.expired(id)).map(([id, set]) => [id, [...set]]),
      ),
      participantsSeenAt: Object.fromEntries([...this.seenAt].filter(([id]) => !this.expired(id))),
      routes: Object.fromEntries(this.routes),
      sinkThreads: [...this.sinkThreads],
      systemMessages: [...this.systemMessages].slice(-SYSTEM_MESSAGES_KEPT),
      observed: Object.fromEntries(this.observed),
    };
  }

  /** Restores what a previous run persisted (before the collaboration records add theirs). */
  load(data: Partial<ThreadStateData> | null | undefined): void {
    if (data == null) return;
    for (const [id, channel] of Object.entries(data.parents ?? {})) this.parents.set(id, channel);
    for (const [id, agents] of Object.entries(data.participants ?? {}))
      this.participants.set(id, new Set(agents));
    for (const [id, at] of Object.entries(data.participantsSeenAt ?? {})) this.seenAt.set(id, at);
    for (const [key, route] of Object.entries(data.routes ?? {})) this.routes.set(key, route);
    for (const id of data.sinkThreads ?? []) this.sinkThreads.add(id);
    for (const id of data.systemMessages ?? []) this.systemMessages.add(id);
    for (const [channel, records] of Object.entries(data.observed ?? {})) this.observed.set(channel, records);
  }

  participantsOf(threadId: string): string[] {
    return this.expired(threadId) ? [] : [...(this.participants.get(threadId) ?? [])];
  }

  private expired(threadId: string): boolean {
    const seen = this.seenAt.get(threadId);
    return seen !== undefined && this.now() - seen > this.limits.participantTTL;
  }

  isKnownThread(channelId: string): boolean {
    return this.parents.has(channelId) || this.participants.has(channelId);
  }

  useRoute(p: { fromAgentId: string; targetAgentId: string; topicId?: string } & ThreadRoute): void {
    const key = threadRouteKey(p.fromAgentId, p.targetAgentId, p.topicId);
    const known = this.routes.get(key);
    const same =
      known !== undefined &&
      known.threadId === p.threadId &&
      known.channelId === p.channelId &&
      known.lastUsedAt === p.lastUsedAt;
    // A route seen again as it is (every start re-reads them from the records) changes nothing to save.
    if (!same && (known === undefined || known.lastUsedAt <= p.lastUsedAt)) {
      this.routes.set(key, { threadId: p.threadId, channelId: p.channelId, lastUsedAt: p.lastUsedAt });
      this.onChange();
    }
    this.setParent(p.threadId, p.channelId);
  }

  /** The pair's thread, if it was used within `threadReuseTTL` (design 002 §4). */
  reusableRoute(fromAgentId: string, targetAgentId: string, topicId: string | undefined, now: number) {
    const route = this.routes.get(threadRouteKey(fromAgentId, targetAgentId, topicId));
    return route !== undefined && now - route.lastUsedAt < this.limits.threadReuseTTL ? route : undefined;
  }

  markSystemMessage(messageId: string): void {
    this.systemMessages.add(messageId);
    this.onChange();
  }

  isSystemMessage(messageId: string): boolean {
    return this.systemMessages.has(messageId);
  }

  /** `agentId` is now answering `senderAgentId` in `threadId` (for the reply_in_thread rule). */
  noteHandling(agentId: string, senderAgentId: string, threadId: string, at: number): void {
    this.handling.set(agentId, { senderAgentId, threadId, at });
  }

  handlingOf(agentId: string, now: number, maxAgeMs: number) {
    const h = this.handling.get(agentId);
    return h !== undefined && now - h.at <= maxAgeMs ? h : undefined;
  }

  /** Keeps at most `observerHistoryLimit` compact records per channel, none older than the TTL. */
  observe(record: ObserverRecord, now: number): void {
    const list = (this.observed.get(record.channelId) ?? []).filter(
      (r) => now - r.ts < this.limits.observerHistoryTTL,
    );
    list.push(record);
    if (list.length > this.limits.observerHistoryLimit)
      list.splice(0, list.length - this.limits.observerHistoryLimit);
    this.observed.set(record.channelId, list);
    this.onChange();
  }

  observerHistory(channelId: string, now: number): ObserverRecord[] {
    return (this.observed.get(channelId) ?? []).filter((r) => now - r.ts < this.limits.observerHistoryTTL);
  }
}
