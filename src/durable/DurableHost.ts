import type { AnyStateMachine, EventObject } from "xstate";
import { createLowdbStore } from "../persistence/index.js";
import { displayText } from "../services/index.js";
import { type ActorRecord, InvalidActorRecordError } from "../persistence/actorRecord.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";
import { onlyWaits, WAKE_EVENT, wakeTimers } from "./dormancy.js";
import { trackDelays } from "./durableDelays.js";
import { type EffectGate, withDurableEffects } from "./durableEffects.js";
import type { DurableActorInfo, DurableHost, DurableHostOptions } from "./durableHostTypes.js";
import { toInspectFn, treeInspector } from "./inspection.js";
import { snapshotValidity } from "./snapshotValidity.js";
import {
  createHostedActor,
  delayClock,
  type Entry,
  info,
  putUntilDurable,
  recordOf,
  settled,
} from "./hostedActors.js";
import { TimerQueue } from "./TimerQueue.js";
import { GLOBAL_TIMERS, type RuntimeTimers } from "./timers.js";

const DAY_MS = 86_400_000;

/** A durable host for XState machines: see {@link DurableHost}. */
export function createDurableHost(options: DurableHostOptions): DurableHost {
  return new Host(options);
}

class Host implements DurableHost {
  private readonly now: () => number;
  private readonly timers: RuntimeTimers;
  private readonly machines: Record<string, AnyStateMachine> = {};
  private readonly hosted = new Map<string, Entry>();
  /** Live actors that only wait, kept as their records until their first event or due time. */
  private readonly dormant = new Map<string, ActorRecord>();
  private readonly dirty = new Set<string>();
  private readonly resuming = new Set<string>();
  /** Writes and side effects under way: idle() waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly due: TimerQueue;
  private readonly userInspect: ReturnType<typeof toInspectFn>;
  private store: SnapshotStore | undefined;
  private state: "stopped" | "starting" | "running" | "stopping" = "stopped";
  private flushScheduled = false;
  private pruneHandle: unknown;

  constructor(private readonly o: DurableHostOptions) {
    this.now = o.now ?? Date.now;
    this.timers = o.timers ?? GLOBAL_TIMERS;
    this.userInspect = toInspectFn(o.inspect);
    for (const [kind, registration] of Object.entries(o.machines)) {
      this.machines[kind] = withDurableEffects(registration.machine, this.gate);
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
  }

  async start(): Promise<void> {
    if (this.state !== "stopped") throw new Error(`DurableHost.start: the host is already ${this.state}`);
    this.state = "starting";
    const store = this.o.store ?? createLowdbStore({ stateDir: this.o.stateDir ?? ".a2a-state" });
    try {
      await store.open({
        now: this.now,
        rules: {
          machineVersions: Object.fromEntries(
            Object.entries(this.o.machines).map(([k, r]) => [k, r.version]),
          ),
          migrations: Object.fromEntries(
            Object.entries(this.o.machines).flatMap(([k, r]) =>
              r.migrate === undefined ? [] : [[k, r.migrate]],
            ),
          ),
          validateSnapshot: snapshotValidity(this.machines),
        },
        onWarning: (message) => this.warn(message),
      });
    } catch (error) {
      this.state = "stopped";
      throw error;
    }
    this.store = store;
    for (const record of await store.list("live")) {
      if (!onlyWaits(record)) {
        this.resume(record);
        continue;
      }
      this.dormant.set(record.id, record);
      this.due.set(record.id, wakeTimers(record));
    }
    this.due.start();
    this.schedulePrune();
    this.state = "running";
  }

  async stop(): Promise<void> {
    if (this.state !== "running") return;
    await this.settleWrites();
    this.state = "stopping";
    this.timers.clearTimeout(this.pruneHandle);
    this.due.stop();
    for (const entry of this.hosted.values()) entry.actor.stop();
    this.hosted.clear();
    this.dormant.clear();
    this.dirty.clear();
    try {
      await this.store?.close();
    } finally {
      this.store = undefined;
      this.state = "stopped";
    }
  }

  async idle(): Promise<void> {
    for (;;) {
      this.persistDirty();
      if (this.inFlight.size === 0) {
        // A settled write may have started an effect or a transition a microtask later: look once more.
        await Promise.resolve();
        await Promise.resolve();
        if (this.inFlight.size === 0 && this.dirty.size === 0) return;
      }
      await Promise.allSettled([...this.inFlight]);
    }
  }

  async spawn(kind: string, id: string, input?: unknown): Promise<void> {
    const store = this.requireRunning("spawn");
    const machine = Object.hasOwn(this.machines, kind) ? this.machines[kind] : undefined;
    if (machine === undefined) {
      throw new Error(
        `DurableHost.spawn: no machine of kind ${JSON.stringify(kind)} (registered: ${Object.keys(this.machines).join(", ")})`,
      );
    }
    if (typeof id !== "string" || id === "")
      throw new Error("DurableHost.spawn: id must be a non-empty string");
    if (this.hosted.has(id) || this.dormant.has(id) || (await store.get(id)) !== undefined) {
      throw new Error(`DurableHost.spawn: an actor ${JSON.stringify(id)} already exists`);
    }
    const entry = this.host(kind, id, machine, { input });
    entry.actor.start();
    this.markDirty(id);
    this.persistDirty();
    await entry.lastWrite;
    throwIfFailed("spawn", entry);
  }

  async send(id: string, event: EventObject): Promise<void> {
    const store = this.requireRunning("send");
    const entry = this.hostedOrWoken(id);
    if (entry === undefined) {
      const record = await store.get(id);
      throw new Error(
        record === undefined
          ? `DurableHost.send: no actor ${JSON.stringify(id)}`
          : `DurableHost.send: actor ${JSON.stringify(id)} has finished (${record.status})`,
      );
    }
    entry.actor.send(event);
    this.persistDirty();
    await entry.lastWrite;
    throwIfFailed("send", entry);
  }

  async get(id: string): Promise<DurableActorInfo | undefined> {
    const store = this.requireRunning("get");
    const entry = this.hosted.get(id);
    if (entry !== undefined) return info(id, entry.kind, entry.actor.getSnapshot());
    const record = this.dormant.get(id) ?? (await store.get(id));
    return record === undefined ? undefined : info(id, record.machineId, record.snapshot);
  }

  async list(): Promise<Array<Omit<DurableActorInfo, "context">>> {
    this.requireRunning("list");
    const hosted = [...this.hosted.values()].map((entry) =>
      info(entry.id, entry.kind, entry.actor.getSnapshot()),
    );
    const dormant = [...this.dormant.values()].map((record) =>
      info(record.id, record.machineId, record.snapshot),
    );
    return [...hosted, ...dormant].map(({ context: _context, ...rest }) => rest);
  }

  /** Effects start once every write queued so far has landed (the one that started them among them). */
  private readonly gate: EffectGate = (start, self, settles) => {
    const run = (async () => {
      await Promise.resolve();
      this.persistDirty();
      await this.settleWrites();
      if (this.state !== "running" && this.state !== "starting") return;
      start();
      if (settles) await settled(self);
    })();
    this.track(run);
  };

  private host(
    kind: string,
    id: string,
    machine: AnyStateMachine,
    start: { input: unknown } | { snapshot: unknown },
  ): Entry {
    const inspect = treeInspector({
      onEmitted: () => {},
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
    const entry: Entry = { id, kind, actor, delays, lastWrite: Promise.resolve() };
    this.hosted.set(id, entry);
    return entry;
  }

  /** The hosted actor with this id; a dormant one is restored first. */
  private hostedOrWoken(id: string): Entry | undefined {
    const entry = this.hosted.get(id);
    if (entry !== undefined) return entry;
    const record = this.dormant.get(id);
    if (record === undefined) return undefined;
    this.dormant.delete(id);
    this.resume(record);
    return this.hosted.get(id);
  }

  /** A stored live actor, restored with its delays and due timers; nothing to write until it changes. */
  private resume(record: ActorRecord): void {
    const machine = this.machines[record.machineId];
    if (machine === undefined) return;
    this.resuming.add(record.id);
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
    }
  }

  private markDirty(id: string): void {
    if (this.state === "stopping" || this.resuming.has(id) || !this.hosted.has(id)) return;
    this.dirty.add(id);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // One snapshot per actor per burst of transitions.
    queueMicrotask(() => this.persistDirty());
  }

  /** Writes every changed actor's record now, as one batch. */
  private persistDirty(): void {
    this.flushScheduled = false;
    const store = this.store;
    if (store === undefined || this.state === "stopping" || this.dirty.size === 0) return;
    const entries = [...this.dirty].flatMap((id) => this.hosted.get(id) ?? []);
    this.dirty.clear();
    const batch: Array<{ entry: Entry; record: ActorRecord }> = [];
    for (const entry of entries) {
      try {
        const record = recordOf(entry, this.o.machines[entry.kind]?.version ?? 0, this.now());
        this.due.set(entry.id, record.timers);
        batch.push({ entry, record });
      } catch (error) {
        // Its snapshot or a delayed event is not JSON: it cannot be kept, so it is not kept running.
        entry.lastWrite = Promise.reject(error);
        this.track(entry.lastWrite);
        this.refuse(entry, error);
      }
    }
    if (batch.length === 0) return;
    const records = batch.map(({ record }) => record);
    const write = putUntilDurable(store, records, this.retry);
    for (const { entry, record } of batch) {
      // One record the store refuses must not hold the others back: each is then put on its own.
      const own =
        records.length === 1
          ? write
          : write.catch((error: unknown) =>
              error instanceof InvalidActorRecordError
                ? putUntilDurable(store, [record], this.retry)
                : Promise.reject(error),
            );
      entry.lastWrite = own.catch((error: unknown) => {
        this.refuse(entry, error);
        throw error;
      });
      this.track(entry.lastWrite);
      if (record.status !== "active") {
        // Finished: archived by the store; nothing of it stays hosted.
        this.hosted.delete(entry.id);
        this.due.forget(entry.id);
      }
    }
  }

  /** An actor whose state the store refuses: stopped, its last stored state (if any) kept for a restart. */
  private refuse(entry: Entry, error: unknown): void {
    if (this.hosted.get(entry.id) !== entry) return;
    this.hosted.delete(entry.id);
    this.due.forget(entry.id);
    this.warn(
      `actor ${entry.id} (${entry.kind}) cannot be stored (${displayText(error)}); stopped it, its last stored state stays`,
    );
    entry.actor.stop();
  }

  /** How a refused write is retried: on the host's timers, until it lands or the host has stopped. */
  private readonly retry = {
    timers: () => this.timers,
    warn: (message: string) => this.warn(message),
    stopped: () => this.state === "stopped",
  };

  private async settleWrites(): Promise<void> {
    this.persistDirty();
    const writes = [...this.hosted.values()].map((entry) => entry.lastWrite);
    await Promise.allSettled(writes);
  }

  private track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    work.then(
      () => this.inFlight.delete(work),
      () => this.inFlight.delete(work),
    );
  }

  private schedulePrune(): void {
    const maxAge = this.o.cleanupMaxAgeMs ?? DAY_MS;
    // Often enough that the archive stays near its age limit, rarely enough to cost nothing.
    const every = Math.min(3_600_000, Math.max(60_000, Math.floor(maxAge / 4)));
    this.pruneHandle = this.timers.setTimeout(() => {
      const store = this.store;
      if (store === undefined || this.state !== "running") return;
      const pruning = store.prune(this.now() - maxAge).catch((error: unknown) => {
        this.warn(`pruning the archive failed (${displayText(error)}); tried again next period`);
      });
      this.track(pruning);
      this.schedulePrune();
    }, every);
  }

  private requireRunning(method: string): SnapshotStore {
    if (this.state !== "running" || this.store === undefined) {
      throw new Error(`DurableHost.${method}: the host is not running; call start() first`);
    }
    return this.store;
  }

  private warn(message: string): void {
    if (this.o.logger !== undefined) this.o.logger.warn(message);
    else console.warn(`a2a-statecharts durable host: ${message}`);
  }
}

/** An actor that failed (its input, an action, a guard threw): stored as `error`, and its caller told. */
function throwIfFailed(method: string, entry: Entry): void {
  const snapshot = entry.actor.getSnapshot() as { status: string; error?: unknown };
  if (snapshot.status !== "error") return;
  throw new Error(
    `DurableHost.${method}: actor ${JSON.stringify(entry.id)} (${entry.kind}) failed: ${displayText(snapshot.error)}`,
    {
      cause: snapshot.error,
    },
  );
}
