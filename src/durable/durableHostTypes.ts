import type { AnyStateMachine, EventObject } from "xstate";
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
  /** Every live actor (finished ones are archived); with a shared store, every process's. */
  list(): Promise<Array<Omit<DurableActorInfo, "context">>>;
}
