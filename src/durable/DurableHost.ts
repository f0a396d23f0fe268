import type { AnyStateMachine, EventObject } from "xstate";
import { createLowdbStore } from "../persistence/index.js";
import { displayText } from "../errors/displayText.js";
import { type ActorRecord, ActorTakenOverError } from "../persistence/actorRecord.js";
import { isSharedStore, type SnapshotStore, type StoredDelivery } from "../persistence/SnapshotStorePort.js";
import { ownSnapshot } from "../persistence/recordLine.js";
import { ActorExistsError, ActorNotFoundError } from "./actorErrors.js";
import { EffectRuns, withDurableEffects } from "./durableEffects.js";
import type {
  DurableActor,
  DurableActorInfo,
  DurableHost,
  DurableHostCounts,
  DurableHostOptions,
} from "./durableHostTypes.js";
import { toInspectFn } from "./inspection.js";
import { Maintenance, maintenancePeriodMs } from "./maintenance.js";
import { landedOrRelayed, listedElsewhere, sharedStoreEvents } from "./sharedStoreEvents.js";
import { SnapshotWriter } from "./SnapshotWriter.js";
import {
  durableActor,
  type Entry,
  hostEntry,
  info,
  recordOf,
  recordRules,
  registeredMachine,
  startRestored,
  stopEntry,
  throwIfFailed,
} from "./hostedActors.js";
import { ActorTable } from "./ActorTable.js";
import { DormantActors, dormantAfterMs } from "./DormantActors.js";
import { GLOBAL_TIMERS, type RuntimeTimers } from "./timers.js";

/** A durable host for XState machines: see {@link DurableHost}. */
export function createDurableHost(options: DurableHostOptions): DurableHost {
  return new Host(options);
}

/** The durable host; its public methods beyond {@link DurableHost} serve a shared store's events. */
export class Host implements DurableHost {
  private readonly maintenance: Maintenance;
  private readonly now: () => number;
  private readonly timers: RuntimeTimers;
  private readonly name: string;
  private readonly machines: Record<string, AnyStateMachine> = {};
  private readonly actors = new ActorTable();
  private readonly resuming = new Set<string>();
  /** The save time of the record whose actor is starting now, if it is being restored. */
  private restoringFrom: number | undefined;
  private readonly effects: EffectRuns;
  private readonly dormant: DormantActors;
  private readonly writer: SnapshotWriter;
  private readonly userInspect: ReturnType<typeof toInspectFn>;
  private readonly maxAgeMs: number;
  private store: SnapshotStore | undefined;
  private state: "stopped" | "starting" | "running" | "stopping" = "stopped";

  constructor(private readonly o: DurableHostOptions) {
    this.now = o.now ?? Date.now;
    this.timers = o.timers ?? GLOBAL_TIMERS;
    this.name = o.name ?? "DurableHost";
    this.userInspect = toInspectFn(o.inspect, `create${this.name}`);
    this.effects = new EffectRuns({
      ready: () => this.writer.settled(),
      open: () => this.state === "running" || this.state === "starting",
      restoredFrom: () => this.restoringFrom,
      start: o.startEffect,
    });
    const ungated = new Set(o.ungatedEffects);
    for (const [kind, { machine }] of Object.entries(o.machines))
      this.machines[kind] = withDurableEffects(machine, this.effects.gate, ungated);
    this.writer = new SnapshotWriter({
      store: () => this.store,
      stopped: () => this.state === "stopping" || this.state === "stopped",
      hosted: (entry) => this.actors.hosted.get(entry.id) === entry,
      current: (entry) => this.hostedOrWoken(entry.id),
      recordOf: (entry) => this.recordOf(entry),
      onQueued: (entry, record) => this.queued(entry, record),
      onRefused: (entry, error) => this.refuse(entry, error),
      timers: this.timers,
      warn: (message) => this.warn(message),
    });
    this.dormant = new DormantActors({
      actors: this.actors,
      now: this.now,
      timers: this.timers,
      afterMs: dormantAfterMs(o.dormantAfterMs, `create${this.name}`),
      resume: (record, owned) => this.resume(record, owned),
      recordOf: (entry) => this.recordOf(entry),
      backlogTurnDone: () => this.writer.settled(),
      stored: (id) => this.store?.kept?.(id),
    });
    this.maxAgeMs = o.cleanupMaxAgeMs ?? 86_400_000; // a day
    this.maintenance = new Maintenance({
      periodMs: maintenancePeriodMs(this.maxAgeMs),
      now: this.now,
      timers: this.timers,
      onError: (task, error) => this.warn(`${task} failed (${displayText(error)}); tried again next period`),
      tasks: {
        "pruning the archive": (at) => this.store?.prune(at - this.maxAgeMs),
        ...(o.housekeeping && { housekeeping: o.housekeeping }),
      },
    });
  }

  async start(): Promise<void> {
    if (this.state !== "stopped") throw new Error(`${this.name}.start: the host is already ${this.state}`);
    this.state = "starting";
    const shared = sharedStoreEvents(this);
    const store = this.o.store ?? createLowdbStore({ stateDir: this.o.stateDir ?? ".durable-state" });
    let live: ReadonlyArray<Readonly<ActorRecord>>;
    try {
      await store.open({
        now: this.now,
        rules: recordRules(this.o.machines, this.machines),
        onWarning: (message) => this.warn(message),
        shared,
        ...(this.o.instance === undefined ? {} : { instance: this.o.instance }),
      });
      await this.o.onOpen?.(store);
      live = await store.list("live");
    } catch (error) {
      // Whatever failed, the store is let go: a later start (this host's or another's) can take it.
      await store.close().catch(() => undefined);
      this.state = "stopped";
      throw error;
    }
    this.store = store;
    for (const record of live) this.adopt(record);
    this.dormant.start();
    this.maintenance.start();
    this.state = "running";
    shared.started();
  }

  async stop(): Promise<void> {
    if (this.state !== "running") return;
    this.writer.flush();
    this.state = "stopping";
    // A write being retried fails now: its waiters hear that the host stopped, and the actors stop.
    this.writer.stopRetrying();
    this.dormant.stop();
    const abandoned: string[] = [];
    for (const entry of this.actors.hosted.values()) {
      // Never known stored: its caller is rejected, and the record a lost reply may have left must not run.
      if (!entry.stored && entry.abandoned.size > 0) abandoned.push(entry.id);
      stopEntry(entry, `${this.name} stopped`);
    }
    this.actors.clear();
    try {
      await this.writer.settled();
      await this.maintenance.stop();
      await this.store?.close();
    } finally {
      this.store = undefined;
      this.state = "stopped";
      // Told even when closing failed: the store may well hold them.
      if (abandoned.length > 0) await this.o.onAbandoned?.(abandoned);
    }
  }

  async idle(): Promise<void> {
    for (;;) {
      // A timer already due is work in flight too: under fake timers its setTimeout waits for an advance.
      if (this.state === "running") this.dormant.fireDue();
      this.writer.flush();
      if (this.writer.pending === 0 && this.effects.running.size === 0) {
        // A settled write may have started an effect or a transition a microtask later: look once more.
        await Promise.resolve();
        await Promise.resolve();
        if (this.writer.pending === 0 && this.effects.running.size === 0) return;
      }
      await Promise.allSettled([this.writer.settled(), ...this.effects.running]);
    }
  }

  async spawn(kind: string, id: string, input?: unknown): Promise<void> {
    const store = this.openStore("spawn");
    const machine = this.machineOf("spawn", kind);
    if (typeof id !== "string" || id === "")
      throw new Error(`${this.name}.spawn: id must be a non-empty string`);
    if (this.actors.has(id) || (await store.get(id)) !== undefined) {
      throw new ActorExistsError(id, this.name);
    }
    const entry = this.createEntry(kind, id, machine, input);
    this.writer.flush();
    this.dormant.spawned(entry);
    await entry.lastWrite;
    throwIfFailed(`${this.name}.spawn`, entry);
  }

  async send(id: string, event: EventObject): Promise<void> {
    const store = this.openStore("send");
    const entry = this.hostedOrWoken(id);
    if (entry === undefined) {
      const record = await store.get(id);
      // Another process runs it (a shared store): the event goes to it through the store.
      if (record?.status === "active" && isSharedStore(store)) {
        await store.sendTo({ id, event: event as StoredDelivery["event"] });
        return;
      }
      throw new ActorNotFoundError(id, this.name, record?.status);
    }
    entry.actor.send(event);
    this.writer.flush();
    await landedOrRelayed(store, entry, event);
    throwIfFailed(`${this.name}.send`, entry);
  }

  async get(id: string): Promise<DurableActorInfo | undefined> {
    const store = this.openStore("get");
    const known = this.actors.info(id, this.metaOf);
    if (known !== undefined) return known;
    const record = await store.get(id);
    return record === undefined ? undefined : info(record);
  }

  async list(): Promise<Array<Omit<DurableActorInfo, "context">>> {
    const store = this.openStore("list");
    const here = this.actors.list(this.metaOf);
    return [...here, ...(await listedElsewhere(store, here))];
  }

  create(kind: string, id: string, input?: unknown): DurableActor {
    this.openStore("create");
    const machine = this.machineOf("create", kind);
    if (this.actors.has(id)) throw new ActorExistsError(id, this.name, "create");
    return durableActor(this.createEntry(kind, id, machine, input), () => this.flush());
  }

  actor(id: string): DurableActor | undefined {
    const entry = this.hostedOrWoken(id);
    return entry === undefined ? undefined : durableActor(entry, () => this.flush());
  }

  counts(): DurableHostCounts {
    const { live, dormant, delays } = this.actors.counts();
    return {
      live,
      dormant,
      timersPending: delays + this.dormant.pending,
      writesPending: this.writer.pending,
    };
  }

  private machineOf(method: string, kind: string): AnyStateMachine {
    return registeredMachine(this.machines, kind, `${this.name}.${method}`);
  }

  /** Creates and starts an actor; its first snapshot is written with the next batch. */
  private createEntry(kind: string, id: string, machine: AnyStateMachine, input: unknown): Entry {
    const entry = this.host(kind, id, machine, { input });
    entry.actor.start();
    this.markDirty(id);
    return entry;
  }

  /** A stored live actor, kept as its record until it wakes (at once when a side effect must run again). */
  adopt(record: Readonly<ActorRecord>): void {
    if (this.actors.has(record.id)) return;
    this.o.onAdopt?.(record);
    this.dormant.keep(record);
  }

  /** Lets go of an actor without writing it (another process owns it now). */
  drop(id: string): void {
    const entry = this.actors.hosted.get(id);
    this.actors.hosted.delete(id);
    this.actors.dormant.delete(id);
    this.dormant.forget(id);
    if (entry !== undefined) stopEntry(entry, "another process took it over");
  }

  /** Whether the host is running (a shared store's events before that wait for it). */
  get running(): boolean {
    return this.state === "running";
  }

  /** The hosted actor with this id; a dormant one is restored first. */
  hostedOrWoken(id: string): Entry | undefined {
    return this.dormant.wake(id);
  }

  /** Queues every changed actor's record now: each actor's lastWrite is then the write of its latest change. */
  flush(): void {
    this.writer.flush();
  }

  private openStore(method: string): SnapshotStore {
    if (this.state !== "running" || this.store === undefined) {
      throw new Error(`${this.name}.${method}: the host is not running; call start() first`);
    }
    return this.store;
  }

  private recordOf(entry: Entry): ActorRecord {
    return recordOf(entry, this.o.machines[entry.kind]?.version ?? 0, this.now(), this.metaOf(entry));
  }

  private readonly metaOf = (entry: Entry): Record<string, unknown> | undefined =>
    this.o.meta?.(entry.actor, entry.kind);

  private host(
    kind: string,
    id: string,
    machine: AnyStateMachine,
    start: { input: unknown } | { snapshot: unknown },
  ): Entry {
    const entry = hostEntry({
      kind,
      id,
      machine,
      start,
      timers: this.timers,
      now: this.now,
      restoring: () => this.resuming.has(id),
      onEmitted: this.o.onEmitted ?? (() => {}),
      user: this.userInspect,
      changed: () => this.markDirty(id),
      failed: (error) => {
        this.warn(`actor ${id} (${kind}) failed: ${displayText(error)}`);
        this.markDirty(id);
      },
    });
    this.actors.hosted.set(id, entry);
    return entry;
  }

  /** A stored live actor, restored with its delays; nothing to write until it changes. */
  private resume(record: Readonly<ActorRecord>, owned = false): void {
    const machine = this.machines[record.machineId];
    if (machine === undefined) return;
    this.resuming.add(record.id);
    this.restoringFrom = record.updatedAt;
    try {
      // The store may hand out its own record (XState changes the snapshot it restores from): a copy,
      // unless the record is the host's own.
      const entry = this.host(record.machineId, record.id, machine, {
        snapshot: owned ? record.snapshot : ownSnapshot(record),
      });
      startRestored(entry.actor);
      this.dormant.idle(record.id);
      const { skipped } = entry.delays.restore(record.delayed ?? []);
      for (const lost of skipped) {
        this.warn(`actor ${record.id}: delayed ${lost.event.type} has no actor to go to any more; dropped`);
      }
    } catch (error) {
      this.actors.hosted.delete(record.id);
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
    const entry = this.actors.hosted.get(id);
    if (entry === undefined) return;
    this.writer.mark(entry);
    this.dormant.busy(id);
  }

  private queued(entry: Entry, record: ActorRecord): void {
    // Finished: archived by the store once the write lands; nothing of it stays hosted.
    if (record.status !== "active") this.actors.finish(entry, record);
    else this.dormant.written(entry);
    this.o.onRecord?.(
      record,
      entry.lastWrite.then(
        () => true,
        () => false,
      ),
    );
    for (const watcher of [...entry.watchers]) watcher();
  }

  /** An actor whose state the store refuses: stopped, its last stored state (if any) kept for a restart. */
  private refuse(entry: Entry, error: unknown): void {
    if (error instanceof ActorTakenOverError) {
      // Hosted, or its record since (a spawned actor is while its first write is in flight): it goes.
      if (!this.actors.has(entry.id)) return;
      this.warn(`actor ${entry.id} (${entry.kind}) was taken over by another process; dropped here`);
      this.drop(entry.id);
      return;
    }
    if (this.actors.hosted.get(entry.id) !== entry) return;
    this.actors.hosted.delete(entry.id);
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
