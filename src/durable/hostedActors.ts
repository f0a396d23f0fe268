import { type AnyActorRef, type AnyStateMachine, createActor, type InspectionEvent } from "xstate";
import { type ActorRecord, type ActorStatus, InvalidActorRecordError } from "../persistence/actorRecord.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";
import { collectDue } from "./dueTimers.js";
import type { DelayTracker } from "./durableDelays.js";
import { displayText } from "../services/index.js";
import type { DurableActorInfo } from "./durableHostTypes.js";
import { clearLongTimeout, type RuntimeTimers, setLongTimeout, setSoon } from "./timers.js";

/** An actor the durable host runs. */
export interface Entry {
  id: string;
  kind: string;
  actor: AnyActorRef;
  delays: DelayTracker;
  /** Resolves once the actor's latest snapshot is durable; rejects if the store refuses it. */
  lastWrite: Promise<void>;
}

const MAX_RETRY_MS = 30_000;

/** The record of an actor as it is now: its snapshot, context.due timers and pending XState delays. */
export function recordOf(entry: Entry, version: number, now: number): ActorRecord {
  const snapshot = entry.actor.getSnapshot() as { status: string };
  const status: ActorStatus =
    snapshot.status === "done" ? "done" : snapshot.status === "error" ? "error" : "active";
  const timers = status === "active" ? collectDue(entry.actor) : [];
  const delayed = status === "active" ? entry.delays.pending() : [];
  return {
    id: entry.id,
    machineId: entry.kind,
    machineVersion: version,
    snapshot: entry.actor.getPersistedSnapshot(),
    timers,
    ...(delayed.length === 0 ? {} : { delayed }),
    status,
    updatedAt: now,
  };
}

/**
 * A put retried with backoff until it lands: an answer or an effect waits for it, never skips it. A
 * record the store refuses (InvalidActorRecordError) would be refused again: that rejects at once.
 */
export async function putUntilDurable(
  store: SnapshotStore,
  records: ActorRecord[],
  retry: { timers: () => RuntimeTimers; warn: (message: string) => void; stopped: () => boolean },
): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await store.put(records);
      return;
    } catch (error) {
      if (retry.stopped() || error instanceof InvalidActorRecordError) throw error;
      const waitMs = Math.min(MAX_RETRY_MS, 500 * 2 ** attempt);
      retry.warn(
        `could not save ${records.length} actor(s) (${displayText(error)}); trying again in ${waitMs} ms`,
      );
      await new Promise<void>((resolve) => retry.timers().setTimeout(resolve, waitMs));
    }
  }
}

/**
 * XState's `clock` on a host's timers: any length of delay (a test's clock moves them). While
 * `deliverNow()` holds (an actor being restored), a delay that is already due runs before any timer.
 */
export function delayClock(timers: RuntimeTimers, deliverNow: () => boolean = () => false) {
  return {
    setTimeout: (fn: () => void, ms: number) =>
      ms <= 0 && deliverNow() ? setSoon(fn) : setLongTimeout(timers, fn, ms),
    clearTimeout: (timeout: unknown) => clearLongTimeout(timers, timeout),
  };
}

/** An actor of `machine`, new from its input or restored from a persisted snapshot (not started). */
export function createHostedActor(
  machine: AnyStateMachine,
  id: string,
  start: { input: unknown } | { snapshot: unknown },
  options: { clock: ReturnType<typeof delayClock>; inspect: (event: InspectionEvent) => void },
): AnyActorRef {
  return "snapshot" in start
    ? createActor(machine, {
        id,
        snapshot: start.snapshot as ReturnType<AnyStateMachine["getInitialSnapshot"]>,
        ...options,
      })
    : createActor(machine, { id, input: start.input, ...options });
}

/** What the host tells of an actor, from its snapshot (live) or its stored one. */
export function info(id: string, kind: string, snapshot: unknown): DurableActorInfo {
  const s = (snapshot ?? {}) as { status?: unknown; value?: unknown; context?: unknown };
  return {
    id,
    kind,
    status: typeof s.status === "string" ? s.status : "unknown",
    value: s.value,
    context: s.context,
  };
}

/** Resolves once an actor is no longer active (a promise actor has settled, or it was stopped). */
export function settled(actor: AnyActorRef): Promise<void> {
  return new Promise((resolve) => {
    if ((actor.getSnapshot() as { status: string }).status !== "active") return resolve();
    const subscription = actor.subscribe({
      complete: () => {
        subscription.unsubscribe();
        resolve();
      },
      error: () => resolve(),
    });
  });
}
