import {
  type AnyActorRef,
  type AnyStateMachine,
  createActor,
  type EventObject,
  type InspectionEvent,
} from "xstate";
import {
  type ActorRecord,
  type ActorRecordRules,
  type ActorStatus,
  isPlainObject,
} from "../persistence/actorRecord.js";
import { ownSnapshot, snapshotOutline } from "../persistence/recordLine.js";
import { ActorFailedError, ActorStoppedError } from "./actorErrors.js";
import { type DelayTracker, trackDelays } from "./durableDelays.js";
import { treeInspector } from "./inspection.js";
import type { DurableActor, DurableActorInfo, MachineRegistration } from "./durableHostTypes.js";
import { clearLongTimeout, type RuntimeTimers, setLongTimeout, setSoon } from "./timers.js";

/** An actor the durable host runs. */
export interface Entry {
  id: string;
  kind: string;
  actor: AnyActorRef;
  delays: DelayTracker;
  /** Resolves once the actor's latest snapshot is durable; rejects if the store refuses it. */
  lastWrite: Promise<void>;
  /** Whether a record of it is known to be durable: it was restored from one, or a write of it landed. */
  stored: boolean;
  /** Called after every change of the actor is queued for the store: callers waiting for a state. */
  watchers: Set<() => void>;
  /** Callers still waiting, told when the host stops before what they wait for is durable. */
  abandoned: Set<(error: Error) => void>;
  /** As it goes dormant: its inspector hears nothing more of this XState actor. */
  silence(): void;
}

/** The actor's record as it is now: snapshot, pending delays, and the embedding layer's `meta`. */
export function recordOf(
  entry: Entry,
  version: number,
  now: number,
  meta?: Record<string, unknown>,
): ActorRecord {
  const snapshot = entry.actor.getSnapshot() as { status: string };
  const status: ActorStatus =
    snapshot.status === "done" ? "done" : snapshot.status === "error" ? "error" : "active";
  const delayed = status === "active" ? entry.delays.pending() : [];
  return {
    id: entry.id,
    machineId: entry.kind,
    machineVersion: version,
    snapshot: entry.actor.getPersistedSnapshot(),
    ...(delayed.length === 0 ? {} : { delayed }),
    status,
    updatedAt: now,
    ...(meta === undefined ? {} : { meta }),
  };
}

/** A hosted actor, not started yet: its tree's changes, emitted events, delays and failure followed. */
export function hostEntry(o: {
  kind: string;
  id: string;
  machine: AnyStateMachine;
  start: { input: unknown } | { snapshot: unknown };
  timers: RuntimeTimers;
  now: () => number;
  restoring: () => boolean;
  onEmitted: (event: { type: string }) => void;
  user: ((event: InspectionEvent) => void) | undefined;
  changed: () => void;
  failed: (error: unknown) => void;
}): Entry {
  const user = o.user;
  let silenced = false;
  const inspect = treeInspector({
    onEmitted: o.onEmitted,
    onTreeChanged: o.changed,
    ...(user === undefined
      ? {}
      : {
          user: (event) => {
            if (!silenced) user(event);
          },
        }),
  });
  // XState's clock on the host's timers, for any length of delay. A delay restored overdue is due now:
  // delivered before any timer, so idle() sees it.
  const clock = {
    setTimeout: (fn: () => void, ms: number) =>
      ms <= 0 && o.restoring() ? setSoon(fn) : setLongTimeout(o.timers, fn, ms),
    clearTimeout: (timeout: unknown) => clearLongTimeout(o.timers, timeout),
  };
  const actor = createActor(o.machine, {
    id: o.id,
    clock,
    inspect,
    ...("snapshot" in o.start
      ? { snapshot: o.start.snapshot as ReturnType<AnyStateMachine["getInitialSnapshot"]> }
      : { input: o.start.input }),
  });
  // Else a failure reaches XState's unhandled-error path, which ends the process; inspection misses it.
  actor.subscribe({ error: o.failed });
  const delays = trackDelays(actor, { now: o.now });
  delays.onChange = o.changed;
  return {
    id: o.id,
    kind: o.kind,
    actor,
    delays,
    lastWrite: Promise.resolve(),
    stored: "snapshot" in o.start,
    watchers: new Set(),
    abandoned: new Set(),
    silence: () => (silenced = true),
  };
}

/** The handle a layer on the host gets for a hosted actor; `flush` queues every changed actor's record. */
export function durableActor(entry: Entry, flush: () => void): DurableActor {
  return {
    id: entry.id,
    kind: entry.kind,
    actor: entry.actor,
    when: (pick, onError) => {
      // A change not queued yet has no write to wait for: lastWrite must be the one that holds it.
      flush();
      return when(entry, pick, onError);
    },
  };
}

/** See {@link DurableActor.when}; the actor's latest change is queued already. */
function when<T>(entry: Entry, pick: () => T | undefined, onError?: (error: unknown) => T): Promise<T> {
  return new Promise((resolveValue, rejectValue) => {
    const check = () => {
      const s = entry.actor.getSnapshot() as { status: string; error?: unknown };
      const failed = s.status === "error";
      if (failed && onError === undefined) {
        entry.watchers.delete(check);
        entry.abandoned.delete(rejectValue);
        return rejectValue(s.error);
      }
      const value = failed ? onError?.(s.error) : pick();
      if (value === undefined) return;
      entry.watchers.delete(check);
      // A failure is the answer whether or not the store takes the failed state (it may refuse it).
      entry.lastWrite
        .then(() => resolveValue(value), failed ? () => resolveValue(value) : rejectValue)
        .finally(() => entry.abandoned.delete(rejectValue));
    };
    entry.abandoned.add(rejectValue);
    entry.watchers.add(check);
    check();
  });
}

/**
 * What the host tells of a hosted actor (from its snapshot now, with `metaOf`) or of a stored one, whose
 * context is a copy: a dormant actor's record may be the store's own.
 */
export function info(
  of: Entry | Readonly<ActorRecord>,
  metaOf?: (entry: Entry) => Record<string, unknown> | undefined,
): DurableActorInfo {
  const snapshot = "actor" in of ? of.actor.getSnapshot() : ownSnapshot(of);
  return { ...summary(of, metaOf), context: (snapshot as { context?: unknown } | undefined)?.context };
}

/**
 * As info(), without the context: a stored actor's is told from its outline, its snapshot left unparsed,
 * and its value, output and meta copied: they are the store's (an outline is shared by every record in
 * its state).
 */
export function summary(
  of: Entry | Readonly<ActorRecord>,
  metaOf?: (entry: Entry) => Record<string, unknown> | undefined,
): Omit<DurableActorInfo, "context"> {
  const hosted = "actor" in of;
  const [kind, snapshot, meta] = hosted
    ? [of.kind, of.actor.getSnapshot(), metaOf?.(of)]
    : [of.machineId, snapshotOutline(of), of.meta];
  const s = (snapshot ?? {}) as { status?: unknown; value?: unknown; output?: unknown };
  const own = (value: unknown) => (hosted || typeof value !== "object" ? value : structuredClone(value));
  return {
    id: of.id,
    kind,
    status: typeof s.status === "string" ? s.status : "unknown",
    value: own(s.value),
    ...(s.status === "done" ? { output: own(s.output) } : {}),
    ...(meta === undefined ? {} : { meta: own(meta) as Record<string, unknown> }),
  };
}

type Relay = (source: AnyActorRef | undefined, target: AnyActorRef, event: EventObject) => void;

/**
 * Starts a restored actor, dropping the `xstate.snapshot.<id>` its restored children announce again as
 * they start: their parent heard it before it was stored, and hears each snapshot once.
 */
export function startRestored(actor: AnyActorRef): void {
  // XState relays every event between actors through `system._relay`, looked up at each call.
  const system = actor.system as { _relay?: Relay };
  const relay = system._relay;
  if (typeof relay !== "function") {
    actor.start();
    return;
  }
  system._relay = (source, target, event) => {
    if (source !== undefined && event.type === `xstate.snapshot.${source.id}`) return;
    relay(source, target, event);
  };
  try {
    actor.start();
  } finally {
    system._relay = relay;
  }
}

/** Stops a hosted actor; callers still waiting on it hear `why` it will not get there. */
export function stopEntry(entry: Entry, why: string): void {
  entry.actor.stop();
  const error = new ActorStoppedError(entry.id, why);
  for (const abandon of entry.abandoned) abandon(error);
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

/** An actor that failed (its input, an action, a guard threw) is stored as `error`: its caller is told. */
export function throwIfFailed(method: string, entry: Entry): void {
  const snapshot = entry.actor.getSnapshot() as { status: string; error?: unknown };
  if (snapshot.status !== "error") return;
  throw new ActorFailedError(entry.id, entry.kind, method, snapshot.error);
}

/** The machine registered as `kind`; an Error naming `caller`, the kind and those registered when there is none. */
export function registeredMachine(
  machines: Readonly<Record<string, AnyStateMachine>>,
  kind: string,
  caller: string,
): AnyStateMachine {
  const machine = Object.hasOwn(machines, kind) ? machines[kind] : undefined;
  if (machine !== undefined) return machine;
  const registered = Object.keys(machines).join(", ");
  throw new Error(`${caller}: no machine of kind ${JSON.stringify(kind)} (registered: ${registered})`);
}

/** State values remembered per host: a machine has few; a damaged store may have any number. */
const MAX_RESOLVED = 1_000;

const STATUSES: ReadonlySet<unknown> = new Set(["active", "done", "error", "stopped"]);

/**
 * How the store checks stored records: each kind's version and migration, and a restorable snapshot.
 * XState accepts a snapshot naming a state its machine lacks, and fails later: such a record is quarantined.
 */
export function recordRules(
  registrations: Readonly<Record<string, MachineRegistration>>,
  machines: Readonly<Record<string, AnyStateMachine>>,
): ActorRecordRules {
  const kinds = Object.entries(registrations);
  // Thousands of records share a few state values: each value of each machine is resolved once.
  const resolved = new Map<string, string | undefined>();
  // Whether a value names states of the machine does not depend on the context.
  const resolve = (machine: AnyStateMachine, value: unknown): string | undefined => {
    try {
      machine.resolveState({ value, context: {} } as Parameters<AnyStateMachine["resolveState"]>[0]);
    } catch (error) {
      return `its state value ${JSON.stringify(value)} is not one of machine ${JSON.stringify(machine.id)}: ${error instanceof Error ? error.message : String(error)}`;
    }
    return undefined;
  };
  return {
    machineVersions: Object.fromEntries(kinds.map(([kind, r]) => [kind, r.version])),
    migrations: Object.fromEntries(
      kinds.flatMap(([kind, r]) => (r.migrate === undefined ? [] : [[kind, r.migrate]])),
    ),
    validateSnapshot: (machineId, snapshot) => {
      const machine = Object.hasOwn(machines, machineId) ? machines[machineId] : undefined;
      if (machine === undefined) return `there is no machine ${JSON.stringify(machineId)} to restore it`;
      if (!isPlainObject(snapshot)) return "it is not an object";
      const { value, status } = snapshot;
      if (!STATUSES.has(status)) return `its status ${JSON.stringify(status)} is not one XState knows`;
      // XState reads a number or a boolean as the initial state: only names (or objects of them) are real.
      if (typeof value !== "string" && !isPlainObject(value))
        return `its state value ${JSON.stringify(value)} is not a state name or an object of them`;
      const key = `${machineId}\u0000${JSON.stringify(value)}`;
      if (resolved.has(key)) return resolved.get(key);
      const problem = resolve(machine, value);
      if (resolved.size < MAX_RESOLVED) resolved.set(key, problem);
      return problem;
    },
  };
}
