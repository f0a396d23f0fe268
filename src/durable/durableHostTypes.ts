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
  /**
   * What to keep beside an actor's snapshot in its record (`ActorRecord.meta`), computed at each write:
   * read without restoring the actor, and how a store shared by several processes finds records
   * (`listEveryLive({ meta: { threadId } })`). JSON data only.
   */
  meta?: (actor: AnyActorRef, kind: string) => Record<string, unknown> | undefined;
  /** Told of every event an actor, or any actor of its tree, emits (XState's `emit`). */
  onEmitted?: (event: { type: string }) => void;
  /**
   * This host's identity across restarts (e.g. the path of a state directory only it holds): a store
   * shared by several processes gives it back the actors an earlier process of that identity owned at
   * once, rather than after their lease lapses. Only one live process may use an identity.
   */
  instance?: string;
  /** How errors and warnings name the host (default `DurableHost`). */
  name?: string;
  /**
   * Told of every record the host queues for the store, with a promise of whether it became durable
   * (false: the store refused it; it never rejects): an index kept beside the store follows the records.
   */
  onRecord?: (record: Readonly<ActorRecord>, durable: Promise<boolean>) => void;
  /**
   * Told of each stored live actor the host takes on without writing it, before it runs or stays
   * dormant: at start, and when a shared store hands over one whose process stopped or died.
   */
  onAdopt?: (record: Readonly<ActorRecord>) => void;
  /** Called once the store is open (and its archive pruned), before any actor resumes. */
  onOpen?: (store: SnapshotStore) => Promise<void> | void;
  /**
   * Side-effect actors (by their name in `setup({ actors })`) that change nothing outside, such as a
   * wait or a read: they start at once rather than after the write of the snapshot that started them.
   */
  ungatedEffects?: readonly string[];
  /**
   * Starts each side effect once the snapshot that started it is durable (default: at once then).
   * `restoredFrom` is the save time of the record its actor was restored from when a restart runs the
   * effect again (it may have run before the crash): the place to look for what it did before.
   */
  startEffect?: (start: () => void, restoredFrom: number | undefined) => void;
  /**
   * Called by `stop()` with the actors whose `when()` callers it rejected while no write of theirs had
   * landed (the store out of reach): each may be stored all the same, by a write whose reply was lost,
   * and would run at the next start. The place to remember them, to withdraw them in `onOpen`.
   */
  onAbandoned?: (ids: string[]) => Promise<void> | void;
  /**
   * Periodic housekeeping of your own, run after the host prunes its archive (every quarter of
   * `cleanupMaxAgeMs`, between one minute and one hour) while the host runs; a failure is logged and it
   * runs again next period.
   */
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

/**
 * An actor this host runs, for a layer built on the host: its XState actor to send events to and read,
 * and a way to wait for a state of it that a crash cannot take back.
 */
export interface DurableActor {
  readonly id: string;
  readonly kind: string;
  /** The running XState actor. A change it makes is written with the next batch of writes. */
  readonly actor: AnyActorRef;
  /**
   * Resolves with `pick()`'s value once it returns one and the snapshot showing it is durable; checked
   * again after every change. If the actor fails, it resolves with `onError(error)` once the failed state
   * is written or refused, or rejects with the error without `onError`. `stop()` rejects it with an
   * `ActorStoppedError`.
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

/**
 * Durable XState actors: each one persisted after every change, its `after` delays kept across
 * restarts and crashes, resumed by `start()`.
 */
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
   * Sends an event to a live actor; resolves once the change it made is durable. With a store shared by
   * several processes, an actor another process runs gets it through the store: it resolves once the
   * event is stored, and that process applies it.
   */
  send(id: string, event: EventObject): Promise<void>;
  /** A live or archived actor, or undefined. */
  get(id: string): Promise<DurableActorInfo | undefined>;
  /**
   * Every live actor (finished ones are archived, and listed until their last write lands); with a
   * shared store, every process's.
   */
  list(): Promise<Array<Omit<DurableActorInfo, "context">>>;

  // For a layer built on the host, which reaches its actors directly rather than through events.

  /**
   * Creates and starts an actor at once and queues its first snapshot: `spawn()` without waiting, for a
   * caller that watches it from its first state (with `when()`). Throws if the kind is unknown, the host
   * is not running, or it runs an actor of that id (`ActorExistsError`); the store is not asked, so an id
   * must be new (a UUID), not one of an archived actor.
   */
  create(kind: string, id: string, input?: unknown): DurableActor;
  /** The actor with this id if this host runs it (a dormant one is restored first), else undefined. */
  actor(id: string): DurableActor | undefined;
  counts(): DurableHostCounts;
}
