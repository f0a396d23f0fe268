import type { AnyActorRef, AnyStateMachine, EventObject } from "xstate";
import type { ActorRecord } from "../persistence/actorRecord.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";
import type { RuntimeTimers } from "./timers.js";

/** A machine the host can create actors of, under a kind name. */
export interface MachineRegistration {
  machine: AnyStateMachine;
  /** Bump it when a snapshot of the previous version cannot be restored as it is. */
  version: number;
  /** Turns a stored snapshot of `fromVersion` into one of `version`; undefined: it cannot (the record is set aside). */
  migrate?: (snapshot: unknown, fromVersion: number) => unknown;
}

/** Where the host reports what it does not throw: a stale lock taken over, a record set aside, a failed write. */
export interface Logger {
  warn(message: string): void;
}

/** What `createDurableHost` takes: the machines it may run, where it keeps them, its clock and timers. */
export interface DurableHostOptions {
  /** Where actors are kept; default: the lowdb store in `stateDir`. */
  store?: SnapshotStore;
  /** The directory of the default store (default `.durable-state`). */
  stateDir?: string;
  machines: Record<string, MachineRegistration>;
  /** Wall-clock time (default `Date.now`): due times are kept in it. */
  now?: () => number;
  /** The timers delays are scheduled with (default: the global ones, so vitest fake timers drive the host). */
  timers?: RuntimeTimers;
  /** XState's inspection observer or function, or an @statelyai/inspect inspector: sees every actor. */
  inspect?: unknown;
  logger?: Logger;
  /** How long finished actors stay archived before they are pruned (default one day). */
  cleanupMaxAgeMs?: number;
  /** JSON kept beside each snapshot (`ActorRecord.meta`), found by `listEveryLive({ meta })`. */
  meta?: (actor: AnyActorRef, kind: string) => Record<string, unknown> | undefined;
  /** Told of every event an actor, or any actor of its tree, emits (XState's `emit`). */
  onEmitted?: (event: { type: string }) => void;
  /**
   * This host's identity across restarts (e.g. a state directory only it holds): a shared store gives it
   * back its earlier process's actors at once, not after their lease lapses. One live process per identity.
   */
  instance?: string;
  /**
   * How long an actor that only waits (no side effect runs in its tree, no `when()` caller) stays an
   * XState actor once its latest change is durable (default 100 ms): then it is kept as its record,
   * and hosted again at its next event or due time. Its `DurableActor.actor` is then stopped: take the
   * actor again with `actor(id)` for each use. An actor `spawn()` made that only waits is its record
   * from the moment its first record is queued, on a store that keeps records in memory (`kept`): it
   * has handled no event yet. `Infinity` keeps every actor hosted.
   */
  dormantAfterMs?: number;
  /** How errors and warnings name the host (default `DurableHost`). */
  name?: string;
  /** Told of every record queued for the store, with whether it became durable (never rejects). */
  onRecord?: (record: Readonly<ActorRecord>, durable: Promise<boolean>) => void;
  /** Told of each stored live actor taken on (at start, or handed over by a shared store) before it runs. */
  onAdopt?: (record: Readonly<ActorRecord>) => void;
  /** Called once the store is open (and its archive pruned), before any actor resumes. */
  onOpen?: (store: SnapshotStore) => Promise<void> | void;
  /** Side-effect actors (`setup({ actors })` names) that change nothing outside: not gated on the write. */
  ungatedEffects?: readonly string[];
  /**
   * Starts each side effect once the snapshot that started it is durable (default: at once then).
   * `restoredFrom`: the save time of the restored record when a restart re-runs the effect (it may have run).
   */
  startEffect?: (start: () => void, restoredFrom: number | undefined) => void;
  /**
   * Called by `stop()` with the actors whose `when()` callers it rejected before any write of theirs
   * landed: a lost reply may have stored them all the same; remember them to withdraw them in `onOpen`.
   */
  onAbandoned?: (ids: string[]) => Promise<void> | void;
  /** Your periodic housekeeping, after the archive is pruned (every `cleanupMaxAgeMs`/4, 1 min to 1 h). */
  housekeeping?: (now: number) => unknown;
}

/** One actor as the host keeps it. */
export interface DurableActorInfo {
  id: string;
  kind: string;
  /** XState's: active, done, error (or stopped). */
  status: string;
  /** The state value. */
  value: unknown;
  context: unknown;
  /** A done actor's output (the final state's `output`); absent while it runs. */
  output?: unknown;
  /** What `meta` keeps beside the actor (see {@link DurableHostOptions.meta}), if anything. */
  meta?: Record<string, unknown>;
}

/** An actor this host runs, for a layer built on the host: its XState actor, and a wait for a durable state. */
export interface DurableActor {
  readonly id: string;
  readonly kind: string;
  /** The running XState actor. A change it makes is written with the next batch of writes. */
  readonly actor: AnyActorRef;
  /**
   * Resolves with `pick()`'s value once it returns one and that snapshot is durable (checked after each
   * change). A failed actor: `onError(error)` once written or refused, else rejects with the error.
   * `stop()` rejects it with an `ActorStoppedError`.
   */
  when<T>(pick: () => T | undefined, onError?: (error: unknown) => T): Promise<T>;
}

/** How many actors a host runs, and what it has in flight: for metrics and for waiting until idle. */
export interface DurableHostCounts {
  /** Actors running as XState actors. */
  live: number;
  /** Live actors kept as their records until their next event or due time. */
  dormant: number;
  /** The live actors' pending delays and the dormant ones' wake-ups. */
  timersPending: number;
  /** Records queued for the store or being written (a failed write stays until it lands). */
  writesPending: number;
}

/** Durable XState actors: persisted after every change, their `after` delays kept across crashes. */
export interface DurableHost {
  /** Opens the store (taking it for this process) and resumes every live actor with its delays. */
  start(): Promise<void>;
  /** Lets pending writes land, stops the actors and releases the store. Their delays stay due. */
  stop(): Promise<void>;
  /** Resolves once no write, side effect (a promise actor) or due delay is in flight. */
  idle(): Promise<void>;
  /** Creates and starts an actor; resolves once its first snapshot is durable. */
  spawn(kind: string, id: string, input?: unknown): Promise<void>;
  /**
   * Sends an event to a live actor; resolves once its change is durable. An actor another process runs
   * (a shared store) gets it through the store: it resolves once the event is stored.
   */
  send(id: string, event: EventObject): Promise<void>;
  /** A live or archived actor, or undefined. */
  get(id: string): Promise<DurableActorInfo | undefined>;
  /** Every live actor (a finished one until its last write lands); with a shared store, every process's. */
  list(): Promise<Array<Omit<DurableActorInfo, "context">>>;

  // For a layer built on the host, which reaches its actors directly rather than through events.

  /**
   * `spawn()` without waiting, to watch the actor from its first state with `when()`. Throws if the kind is
   * unknown, the host is not running, or it runs that id (`ActorExistsError`); the store is not asked,
   * so the id must be new (a UUID).
   */
  create(kind: string, id: string, input?: unknown): DurableActor;
  /** The actor with this id if this host runs it (a dormant one is restored first), else undefined. */
  actor(id: string): DurableActor | undefined;
  counts(): DurableHostCounts;
}
