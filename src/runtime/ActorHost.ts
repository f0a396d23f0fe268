import type { AnyActorRef, AnyStateMachine, InspectionEvent } from "xstate";
import { displayText } from "../services/index.js";
import type { ActorRecord, ActorStatus, LowdbSnapshotStore } from "../persistence/index.js";
import { type CollaborationMeta, collaborationMeta } from "./collaborationMeta.js";
import { earliestDelayDue, WAKE_EVENT } from "../durable/dormancy.js";
import { collectDue } from "../durable/dueTimers.js";
import { type DelayTracker, trackDelays } from "../durable/durableDelays.js";
import { createHostedActor, delayClock } from "../durable/hostedActors.js";
import type { EarlierPosts } from "./EarlierPosts.js";
import type { ActorKind, Hosted } from "./hostedActor.js";
import { treeInspector } from "../durable/inspection.js";
import { TimerQueue } from "../durable/TimerQueue.js";
import type { RuntimeTimers } from "./ports.js";

export interface ActorHostOptions {
  machines: Record<ActorKind, AnyStateMachine>;
  machineVersions: Record<ActorKind, number>;
  now: () => number;
  scheduler: RuntimeTimers;
  warn: (message: string) => void;
  /** Every event an actor emits (the runtime's event bus). */
  onEmitted: (event: { type: string }) => void;
  /** The user's inspector, if any. */
  inspect?: ((event: InspectionEvent) => void) | undefined;
  earlierPosts: EarlierPosts;
  /** The open store; undefined while the runtime is not running. */
  store: () => LowdbSnapshotStore | undefined;
  stopping: () => boolean;
  /** Resolves once a write (a put or flush) or a retry of it is on disk. */
  landed: (write: Promise<void>) => Promise<void>;
  /** Told after each snapshot is queued for disk, so the runtime's indexes follow the actor. */
  onPersisted: (entry: Hosted, status: ActorStatus, meta: CollaborationMeta | undefined) => void;
}

type RestoredFrom = Pick<ActorRecord, "snapshot" | "timers" | "updatedAt" | "delayed">;

/**
 * Hosts the runtime's actors: creates or restores each one, persists its snapshot (with its durable
 * timers and its pending XState delays) after every burst of transitions, delivers its timers when
 * due, and wakes a dormant one (a stored collaboration that only waits) on its first event or when
 * its earliest stored delay is due.
 */
export class ActorHost {
  readonly hosted = new Map<string, Hosted>();
  /**
   * Live collaborations not hosted yet, by id: the store's own records, read only
   * (LowdbSnapshotStore.forEachRecord); one leaves this map when it is hosted.
   */
  readonly dormant: Map<string, Readonly<ActorRecord>>;
  readonly timers: TimerQueue;
  /**
   * One entry per dormant record with stored XState delays, at the earliest one's due time: hosting the
   * record restores its delays, which XState then fires itself (an overdue one at once).
   */
  private readonly wakeUps: TimerQueue;
  private readonly delays = new Map<string, DelayTracker>();
  private readonly dirty = new Set<string>();
  private readonly resuming = new Set<string>();
  private flushScheduled = false;

  constructor(private readonly options: ActorHostOptions) {
    this.timers = new TimerQueue(
      options.now,
      (timer) => this.hostedOrWoken(timer.actorId)?.actor.send({ type: timer.event, at: options.now() }),
      options.scheduler,
    );
    this.wakeUps = new TimerQueue(options.now, (wake) => this.hostedOrWoken(wake.actorId), options.scheduler);
    // Always running: it holds entries only while records are dormant.
    this.wakeUps.start();
    this.dormant = new DormantRecords(this.wakeUps);
  }

  /** A new actor from its input, or one restored from its stored record. */
  host(kind: ActorKind, id: string, start: { input: unknown } | RestoredFrom): Hosted {
    const { warn, scheduler } = this.options;
    const entry: Hosted = {
      id,
      kind,
      actor: undefined as unknown as AnyActorRef,
      watchers: new Set(),
      abandoned: new Set(),
      lastWrite: Promise.resolve(),
    };
    const inspect = treeInspector({
      onEmitted: this.options.onEmitted,
      onTreeChanged: () => this.markDirty(id),
      user: this.options.inspect,
    });
    const machine = this.options.machines[kind];
    // XState's delays run on the host's timers (a test's clock moves them), any length of delay; one
    // restored overdue is delivered before any timer, as a context.due timer was.
    const clock = delayClock(scheduler, () => this.resuming.has(id));
    entry.actor = createHostedActor(machine, id, start, { clock, inspect });
    const delays = trackDelays(entry.actor, { now: this.options.now });
    delays.onChange = () => this.markDirty(id);
    this.delays.set(id, delays);
    // An actor that fails (bad input at creation, a throwing action) would otherwise reach XState's
    // unhandled-error path, which rethrows on a timer and ends the process. Its callers hear of it
    // through until().
    // XState tells a failure to observers, not to inspection: the failed snapshot is written from here,
    // so the actor is archived as `error` (not resumed to fail again) and its callers hear of it.
    entry.actor.subscribe({
      error: (error) => {
        warn(`actor ${id} (${kind}) failed: ${displayText(error)}`);
        this.markDirty(id);
      },
    });
    if ("snapshot" in start) {
      // Resumed as stored: nothing to write until it changes; its timers come from its record.
      this.resuming.add(id);
      this.hosted.set(id, entry);
      // A post it re-runs may have been made before the crash: EarlierPosts checks it past the nonce window.
      try {
        this.options.earlierPosts.restoring(start.updatedAt, () => entry.actor.start());
        // Each stored delay is due at its original time again; XState fires and cancels it as its own.
        const { skipped } = delays.restore(start.delayed ?? []);
        for (const lost of skipped) {
          warn(`actor ${id} (${kind}): delayed ${lost.event.type} has no actor to go to any more; dropped`);
        }
      } finally {
        this.resuming.delete(id);
      }
      this.timers.set(id, start.timers);
      return entry;
    }
    this.hosted.set(id, entry);
    entry.actor.start();
    this.markDirty(id);
    return entry;
  }

  /** The hosted actor with this id; a dormant one is hosted first (restored from its record). */
  hostedOrWoken(id: string): Hosted | undefined {
    const entry = this.hosted.get(id);
    if (entry !== undefined) return entry;
    const record = this.dormant.get(id);
    if (record === undefined) return undefined;
    this.dormant.delete(id);
    try {
      // The store's record is read-only: the actor gets its own copy of the snapshot.
      return this.host("collaborate", id, { ...record, snapshot: structuredClone(record.snapshot) });
    } catch (error) {
      this.hosted.delete(id);
      this.delays.delete(id);
      this.timers.forget(id);
      this.options.warn(
        `could not resume actor ${id} (${record.machineId}); it stays stored: ${displayText(error)}`,
      );
      return undefined;
    }
  }

  /** Queues every changed actor's snapshot now (normally a microtask after its transitions). */
  persistDirty(): void {
    this.flushScheduled = false;
    for (const id of [...this.dirty]) {
      this.dirty.delete(id);
      const entry = this.hosted.get(id);
      const store = this.options.store();
      if (entry !== undefined && store !== undefined && !this.options.stopping()) this.persist(entry, store);
    }
  }

  /** Stops every hosted actor and tells its waiting callers; lets the dormant records go (they are on disk). */
  stopAll(): void {
    this.timers.stop();
    for (const entry of this.hosted.values()) {
      entry.actor.stop();
      const error = new Error(
        `A2ARuntime stopped before actor ${entry.id} reached what its caller waits for`,
      );
      for (const abandon of entry.abandoned) abandon(error);
    }
    this.hosted.clear();
    this.delays.clear();
    this.dormant.clear();
  }

  // Persistence is batched per microtask: one snapshot per actor per burst of transitions.
  private markDirty(id: string): void {
    if (this.options.stopping() || this.resuming.has(id) || !this.hosted.has(id)) return;
    this.dirty.add(id);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.persistDirty());
  }

  private persist(entry: Hosted, store: LowdbSnapshotStore): void {
    const snapshot = entry.actor.getSnapshot() as { status: string };
    const status = snapshot.status === "done" ? "done" : snapshot.status === "error" ? "error" : "active";
    const due = status === "active" ? collectDue(entry.actor) : [];
    this.timers.set(entry.id, due);
    const delayed = status === "active" ? (this.delays.get(entry.id)?.pending() ?? []) : [];
    const meta = entry.kind === "collaborate" ? collaborationMeta(entry.actor) : undefined;
    this.options.onPersisted(entry, status, meta);
    entry.lastWrite = this.options.landed(
      store.put({
        id: entry.id,
        machineId: entry.kind,
        machineVersion: this.options.machineVersions[entry.kind],
        snapshot: entry.actor.getPersistedSnapshot(),
        timers: due.map((t) => ({ event: t.event, dueAt: t.dueAt })),
        ...(delayed.length === 0 ? {} : { delayed }),
        status,
        updatedAt: this.options.now(),
        ...(meta === undefined ? {} : { meta: { ...meta } }),
      }),
    );
    // Answers and side effects wait on lastWrite; an actor nobody waits on must not leave a rejection behind.
    entry.lastWrite.catch(() => undefined);
    if (status !== "active") {
      this.hosted.delete(entry.id);
      this.delays.delete(entry.id);
      this.timers.forget(entry.id);
    }
    for (const watcher of [...entry.watchers]) watcher();
  }
}

/**
 * The dormant records by id. A record with stored XState delays gets a wake-up at the earliest one's due
 * time (its `timers` are armed by whoever adds it, as for any record); leaving the map drops the wake-up.
 */
class DormantRecords extends Map<string, Readonly<ActorRecord>> {
  constructor(private readonly wakeUps: TimerQueue) {
    super();
  }

  override set(id: string, record: Readonly<ActorRecord>): this {
    super.set(id, record);
    const dueAt = earliestDelayDue(record);
    // The wake-up's event is never sent: hosting the record is the work, its delays then fire themselves.
    this.wakeUps.set(id, dueAt === undefined ? [] : [{ event: WAKE_EVENT, dueAt }]);
    return this;
  }

  override delete(id: string): boolean {
    this.wakeUps.forget(id);
    return super.delete(id);
  }

  override clear(): void {
    for (const id of this.keys()) this.wakeUps.forget(id);
    super.clear();
  }
}
