import type { AnyStateMachine, EventObject } from "xstate";
import { createLowdbStore } from "../persistence/index.js";
import { displayText } from "../services/index.js";
import { type ActorRecord, ActorTakenOverError } from "../persistence/actorRecord.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";
import { onlyWaits, WAKE_EVENT, wakeTimers } from "./dormancy.js";
import { trackDelays } from "./durableDelays.js";
import { type EffectGate, withDurableEffects } from "./durableEffects.js";
import type { DurableActorInfo, DurableHost, DurableHostOptions } from "./durableHostTypes.js";
import type { HostHooks } from "./hostHooks.js";
import { toInspectFn, treeInspector } from "./inspection.js";
import { Maintenance, maintenancePeriodMs } from "./maintenance.js";
import { type HostSharedStoreEvents, sharedStoreEvents } from "./sharedStoreEvents.js";
import { SnapshotWriter } from "./SnapshotWriter.js";
import {
  createHostedActor,
  delayClock,
  type Entry,
  info,
  recordOf,
  recordRules,
  settled,
  throwIfFailed,
} from "./hostedActors.js";
import { TimerQueue } from "./TimerQueue.js";
import { GLOBAL_TIMERS, type RuntimeTimers } from "./timers.js";

const DAY_MS = 86_400_000;

/** A durable host for XState machines: see {@link DurableHost}. */
export function createDurableHost(options: DurableHostOptions): DurableHost {
  return new Host(options);
}

/** The durable host, with what the A2A runtime uses beyond the public {@link DurableHost}. */
export class Host implements DurableHost {
  /** Housekeeping while running: pruning the archive; a layer on top may add its own tasks. */
  readonly maintenance: Maintenance;
  private readonly now: () => number;
  private readonly timers: RuntimeTimers;
  private readonly name: string;
  private readonly machines: Record<string, AnyStateMachine> = {};
  private readonly hosted = new Map<string, Entry>();
  /** Live actors that only wait, kept as their records until their first event or due time. */
  private readonly dormant = new Map<string, Readonly<ActorRecord>>();
  /** Finished actors whose last record is queued but not yet durable (the store archives it then). */
  private readonly finishing = new Map<string, ActorRecord>();
  private readonly resuming = new Set<string>();
  /** The save time of the record whose actor is starting now, if it is being restored. */
  private restoringFrom: number | undefined;
  /** Side effects under way (promise actors): idle() waits for them. */
  private readonly effects = new Set<Promise<unknown>>();
  private readonly due: TimerQueue;
  private readonly writer: SnapshotWriter;
  private readonly userInspect: ReturnType<typeof toInspectFn>;
  private readonly maxAgeMs: number;
  private shared: HostSharedStoreEvents;
  private store: SnapshotStore | undefined;
  private state: "stopped" | "starting" | "running" | "stopping" = "stopped";

  constructor(
    private readonly o: DurableHostOptions,
    private readonly hooks: HostHooks = {},
  ) {
    this.now = o.now ?? Date.now;
    this.timers = o.timers ?? GLOBAL_TIMERS;
    this.name = hooks.name ?? "DurableHost";
    this.userInspect = toInspectFn(o.inspect);
    this.shared = sharedStoreEvents(this, hooks);
    for (const [kind, registration] of Object.entries(o.machines)) {
      this.machines[kind] = withDurableEffects(registration.machine, this.gate, hooks.ungatedEffects);
    }
    this.due = new TimerQueue(
      this.now,
      (timer) => {
        const entry = this.hostedOrWoken(timer.actorId);
        // A wake-up's work is done by waking: the restored delays fire by themselves.
        if (timer.event !== WAKE_EVENT) entry?.actor.send({ type: timer.event, at: this.now() });
      },
      this.timers,
    );
    this.writer = new SnapshotWriter({
      store: () => this.store,
      stopped: () => this.state === "stopping" || this.state === "stopped",
      hosted: (entry) => this.hosted.get(entry.id) === entry,
      recordOf: (entry) =>
        recordOf(entry, this.o.machines[entry.kind]?.version ?? 0, this.now(), this.hooks.metaOf?.(entry)),
      onQueued: (entry, record) => this.queued(entry, record),
      onRefused: (entry, error) => this.refuse(entry, error),
      timers: this.timers,
      warn: (message) => this.warn(message),
    });
    this.maxAgeMs = o.cleanupMaxAgeMs ?? DAY_MS;
    this.maintenance = new Maintenance({
      periodMs: maintenancePeriodMs(this.maxAgeMs),
      now: this.now,
      timers: this.timers,
      onError: (task, error) => this.warn(`${task} failed (${displayText(error)}); tried again next period`),
    });
    this.maintenance.add("pruning the archive", (at) => this.store?.prune(at - this.maxAgeMs));
  }

  async start(): Promise<void> {
    if (this.state !== "stopped") throw new Error(`${this.name}.start: the host is already ${this.state}`);
    this.state = "starting";
    this.shared = sharedStoreEvents(this, this.hooks);
    const store = this.o.store ?? createLowdbStore({ stateDir: this.o.stateDir ?? ".a2a-state" });
    let live: ReadonlyArray<Readonly<ActorRecord>>;
    try {
      await store.open({
        now: this.now,
        rules: recordRules(this.o.machines, this.machines),
        onWarning: (message) => this.warn(message),
        shared: this.shared,
      });
      await store.prune(this.now() - this.maxAgeMs);
      await this.hooks.opened?.(store);
      live = await store.list("live");
    } catch (error) {
      // Whatever failed, the store is let go: a later start (this host's or another's) can take it.
      await store.close().catch(() => undefined);
      this.state = "stopped";
      throw error;
    }
    this.store = store;
    for (const record of live) this.adopt(record);
    this.due.start();
    this.maintenance.start();
    this.state = "running";
    this.shared.started();
  }

  async stop(): Promise<void> {
    if (this.state !== "running") return;
    this.writer.flush();
    this.state = "stopping";
    // A write being retried fails now: its waiters hear that the host stopped, and the actors stop.
    this.writer.stopRetrying();
    this.due.stop();
    for (const entry of this.hosted.values()) {
      entry.actor.stop();
      const error = new Error(
        `${this.name} stopped before actor ${entry.id} reached what its caller waits for`,
      );
      for (const abandon of entry.abandoned) abandon(error);
    }
    this.hosted.clear();
    this.dormant.clear();
    this.finishing.clear();
    try {
      await this.writer.settled();
      await this.maintenance.stop();
      await this.store?.close();
    } finally {
      this.store = undefined;
      this.state = "stopped";
    }
  }

  async idle(): Promise<void> {
    for (;;) {
      // A timer already due is work in flight too: under fake timers its setTimeout waits for an advance.
      if (this.state === "running") this.due.fireDue();
      this.writer.flush();
      if (!this.writer.busy && this.effects.size === 0) {
        // A settled write may have started an effect or a transition a microtask later: look once more.
        await Promise.resolve();
        await Promise.resolve();
        if (!this.writer.busy && this.effects.size === 0) return;
      }
      await Promise.allSettled([this.writer.settled(), ...this.effects]);
    }
  }

  async spawn(kind: string, id: string, input?: unknown): Promise<void> {
    const store = this.openStore("spawn");
    if (!Object.hasOwn(this.machines, kind)) {
      throw new Error(
        `${this.name}.spawn: no machine of kind ${JSON.stringify(kind)} (registered: ${Object.keys(this.machines).join(", ")})`,
      );
    }
    if (typeof id !== "string" || id === "")
      throw new Error(`${this.name}.spawn: id must be a non-empty string`);
    if (this.hosted.has(id) || this.dormant.has(id) || (await store.get(id)) !== undefined) {
      throw new Error(`${this.name}.spawn: an actor ${JSON.stringify(id)} already exists`);
    }
    const entry = this.create(kind, id, input);
    this.writer.flush();
    await entry.lastWrite;
    throwIfFailed(`${this.name}.spawn`, entry);
  }

  async send(id: string, event: EventObject): Promise<void> {
    const store = this.openStore("send");
    const entry = this.hostedOrWoken(id);
    if (entry === undefined) {
      const record = await store.get(id);
      throw new Error(
        record === undefined
          ? `${this.name}.send: no actor ${JSON.stringify(id)}`
          : `${this.name}.send: actor ${JSON.stringify(id)} has finished (${record.status})`,
      );
    }
    entry.actor.send(event);
    this.writer.flush();
    await entry.lastWrite;
    throwIfFailed(`${this.name}.send`, entry);
  }

  async get(id: string): Promise<DurableActorInfo | undefined> {
    const store = this.openStore("get");
    const entry = this.hosted.get(id);
    if (entry !== undefined) return info(id, entry.kind, entry.actor.getSnapshot());
    const record = this.dormant.get(id) ?? this.finishing.get(id) ?? (await store.get(id));
    return record === undefined ? undefined : info(id, record.machineId, record.snapshot);
  }

  async list(): Promise<Array<Omit<DurableActorInfo, "context">>> {
    this.openStore("list");
    const hosted = [...this.hosted.values()].map((entry) =>
      info(entry.id, entry.kind, entry.actor.getSnapshot()),
    );
    const dormant = [...this.dormant.values()].map((record) =>
      info(record.id, record.machineId, record.snapshot),
    );
    return [...hosted, ...dormant].map(({ context: _context, ...rest }) => rest);
  }

  /** Creates and starts an actor of a registered kind; its first snapshot is written with the next batch. */
  create(kind: string, id: string, input: unknown): Entry {
    const machine = this.machines[kind];
    if (machine === undefined) throw new Error(`${this.name}: no machine of kind ${JSON.stringify(kind)}`);
    const entry = this.host(kind, id, machine, { input });
    entry.actor.start();
    this.markDirty(id);
    return entry;
  }

  /** A stored live actor: restored now, or kept dormant (as its record) when it only waits. */
  adopt(record: Readonly<ActorRecord>): void {
    if (this.hosted.has(record.id) || this.dormant.has(record.id)) return;
    if (!onlyWaits(record) || this.hooks.mayStayDormant?.(record) === false) {
      this.resume(record);
      return;
    }
    this.dormant.set(record.id, record);
    this.due.set(record.id, wakeTimers(record));
  }

  /** Lets go of an actor without writing it (another process owns it now). */
  drop(id: string): void {
    const entry = this.hosted.get(id);
    this.hosted.delete(id);
    this.dormant.delete(id);
    this.due.forget(id);
    if (entry === undefined) return;
    entry.actor.stop();
    const error = new Error(
      `actor ${id} was taken over by another process before it reached what its caller waits for`,
    );
    for (const abandon of entry.abandoned) abandon(error);
  }

  /** The ids of every actor this host runs, hosted or dormant. */
  ids(): string[] {
    return [...this.hosted.keys(), ...this.dormant.keys()];
  }

  /** Whether the host is running (a shared store's events before that wait for it). */
  get running(): boolean {
    return this.state === "running";
  }

  /** The hosted actor with this id; a dormant one is restored first. */
  hostedOrWoken(id: string): Entry | undefined {
    const entry = this.hosted.get(id);
    if (entry !== undefined) return entry;
    const record = this.dormant.get(id);
    if (record === undefined) return undefined;
    this.dormant.delete(id);
    // Its timers stay as they are: the queue knows which one it is delivering now, and the restore's
    // set() leaves that one out (forgetting them first would deliver it twice).
    this.resume(record);
    return this.hosted.get(id);
  }

  /** The hosted actors (read only). */
  hostedEntries(): IterableIterator<Entry> {
    return this.hosted.values();
  }

  /** The records of finished actors whose last write is still in flight. */
  finishingRecords(): IterableIterator<ActorRecord> {
    return this.finishing.values();
  }

  /** The dormant actors' records: the store's own, read only. */
  dormantRecords(): IterableIterator<Readonly<ActorRecord>> {
    return this.dormant.values();
  }

  /** Whether a snapshot write is queued or not yet durable. */
  get writing(): boolean {
    return this.writer.busy;
  }

  /** How many actors are hosted, how many dormant, and how many durable timers wait: for metrics. */
  counts(): { live: number; dormant: number; timersPending: number } {
    // The hosted actors' XState delays, and the host's own timers (stored due times, dormant wake-ups).
    let delays = 0;
    for (const entry of this.hosted.values()) {
      if (entry.actor.getSnapshot().status !== "active") continue;
      try {
        delays += entry.delays.pending().length;
      } catch {
        // A delay that cannot be stored is reported by the write; here it is simply not counted.
      }
    }
    return { live: this.hosted.size, dormant: this.dormant.size, timersPending: delays + this.due.size };
  }

  /** Resolves once every change made so far is durable (or failed for good). */
  async persisted(): Promise<void> {
    await this.writer.settled();
  }

  /** The open store; throws naming `method` while the host is not running. */
  openStore(method: string): SnapshotStore {
    if (this.state !== "running" || this.store === undefined) {
      throw new Error(`${this.name}.${method}: the host is not running; call start() first`);
    }
    return this.store;
  }

  /** Effects start once every write queued so far has landed (the one that started them among them). */
  private readonly gate: EffectGate = (start, self, settles) => {
    // Captured now: a restored actor restarts its effects inside start(), synchronously.
    const restoredFrom = this.restoringFrom;
    const run = (async () => {
      await Promise.resolve();
      await this.writer.settled();
      if (this.state !== "running" && this.state !== "starting") return;
      if (this.hooks.startEffect === undefined) start();
      else this.hooks.startEffect(start, restoredFrom);
      if (settles) await settled(self);
    })();
    this.effects.add(run);
    const done = () => this.effects.delete(run);
    run.then(done, done);
  };

  private host(
    kind: string,
    id: string,
    machine: AnyStateMachine,
    start: { input: unknown } | { snapshot: unknown },
  ): Entry {
    const inspect = treeInspector({
      onEmitted: this.hooks.onEmitted ?? (() => {}),
      onTreeChanged: () => this.markDirty(id),
      ...(this.userInspect === undefined ? {} : { user: this.userInspect }),
    });
    // A delay restored overdue is due now: delivered before any timer, so idle() sees it.
    const clock = delayClock(this.timers, () => this.resuming.has(id));
    const actor = createHostedActor(machine, id, start, { clock, inspect });
    // An actor that fails would otherwise reach XState's unhandled-error path, which ends the process.
    // XState reports a failure to observers, not to inspection: the failed snapshot is written from here.
    actor.subscribe({
      error: (error) => {
        this.warn(`actor ${id} (${kind}) failed: ${displayText(error)}`);
        this.markDirty(id);
      },
    });
    const delays = trackDelays(actor, { now: this.now });
    delays.onChange = () => this.markDirty(id);
    const entry: Entry = {
      id,
      kind,
      actor,
      delays,
      lastWrite: Promise.resolve(),
      watchers: new Set(),
      abandoned: new Set(),
    };
    this.hosted.set(id, entry);
    return entry;
  }

  /** A stored live actor, restored with its delays and due timers; nothing to write until it changes. */
  private resume(record: Readonly<ActorRecord>): void {
    const machine = this.machines[record.machineId];
    if (machine === undefined) return;
    this.resuming.add(record.id);
    this.restoringFrom = record.updatedAt;
    try {
      // The store may hand out its own record: the actor gets a copy to restore from.
      const entry = this.host(record.machineId, record.id, machine, {
        snapshot: structuredClone(record.snapshot),
      });
      entry.actor.start();
      const { skipped } = entry.delays.restore(record.delayed ?? []);
      for (const lost of skipped) {
        this.warn(`actor ${record.id}: delayed ${lost.event.type} has no actor to go to any more; dropped`);
      }
      this.due.set(record.id, record.timers);
    } catch (error) {
      this.hosted.delete(record.id);
      this.warn(
        `could not resume actor ${record.id} (${record.machineId}); it stays stored: ${displayText(error)}`,
      );
    } finally {
      this.resuming.delete(record.id);
      this.restoringFrom = undefined;
    }
  }

  private markDirty(id: string): void {
    if (this.resuming.has(id)) return;
    const entry = this.hosted.get(id);
    if (entry !== undefined) this.writer.mark(entry);
  }

  private queued(entry: Entry, record: ActorRecord): void {
    this.due.set(entry.id, record.timers);
    if (record.status !== "active") {
      // Finished: archived by the store once the write lands; nothing of it stays hosted.
      this.hosted.delete(entry.id);
      this.due.forget(entry.id);
      this.finishing.set(entry.id, record);
      const landed = () => {
        if (this.finishing.get(entry.id) === record) this.finishing.delete(entry.id);
      };
      entry.lastWrite.then(landed, landed);
    }
    this.hooks.onQueued?.(entry, record);
    for (const watcher of [...entry.watchers]) watcher();
  }

  /** An actor whose state the store refuses: stopped, its last stored state (if any) kept for a restart. */
  private refuse(entry: Entry, error: unknown): void {
    if (this.hosted.get(entry.id) !== entry) return;
    if (error instanceof ActorTakenOverError) {
      this.warn(`actor ${entry.id} (${entry.kind}) was taken over by another process; dropped here`);
      this.drop(entry.id);
      return;
    }
    this.hosted.delete(entry.id);
    this.due.forget(entry.id);
    this.warn(
      `actor ${entry.id} (${entry.kind}) cannot be stored (${displayText(error)}); stopped it, its last stored state stays`,
    );
    entry.actor.stop();
  }

  private warn(message: string): void {
    if (this.o.logger !== undefined) this.o.logger.warn(message);
    else console.warn(`a2a-statecharts durable host: ${message}`);
  }
}
