import { A2AError } from "../errors/A2AError.js";
import type { ActorRecord, ActorRecordRules } from "./actorRecord.js";
import type { SnapshotStoreOpenReport } from "./snapshotStoreOptions.js";

/** What a store needs at open: the clock, how stored records are checked and migrated, where warnings go. */
export interface SnapshotStoreOpenOptions {
  now: () => number;
  /** Each machine's current version, its migrations, and a check that a snapshot can be restored. */
  rules: ActorRecordRules;
  onWarning: (message: string) => void;
  /** What a store shared by several processes tells its host while open; other stores ignore it. */
  shared?: SharedStoreEvents;
  /**
   * A name only this process holds on its host (the runtime: its locked state directory): a shared
   * store gives an earlier process of this name and host's actors back at once, not once its lease lapses.
   */
  instance?: string;
}

/** An event for an actor, sent through a store shared by several processes. */
export interface StoredDelivery {
  id: string;
  event: { type: string; [key: string]: unknown };
}

/** Which live records `listEveryLive` lists. */
export interface LiveRecordFilter {
  machineId?: string;
  meta?: Readonly<Record<string, string>>;
}

/** What a store shared by several processes tells the host that opened it. */
export interface SharedStoreEvents {
  /** Live records this process now owns (their process stopped, or its lease lapsed): host them. */
  claimed(records: ReadonlyArray<Readonly<ActorRecord>>): void;
  /** Events sent to this process's actors: resolves, for each, whether it was applied durably (else it stays stored). */
  delivered(deliveries: readonly StoredDelivery[]): Promise<readonly boolean[]>;
  /** Actors another process has taken over (while this one's lease had lapsed): dropped here, unwritten. */
  lost(ids: readonly string[]): void;
}

/**
 * A store that several processes open at once (PostgreSQL): each live actor is owned by one of them,
 * `list("live")` lists this process's own, and a put of an actor another process owns is refused with
 * ActorTakenOverError.
 */
export interface SharedSnapshotStore extends SnapshotStore {
  readonly shared: true;
  /** Every process's live records; only `machineId`'s, and only those whose `meta` holds each of `meta`'s values. */
  listEveryLive(filter?: LiveRecordFilter): Promise<Array<Readonly<ActorRecord>>>;
  /** Sends an event to a live actor whichever process owns it; resolves once the event is durable. */
  sendTo(delivery: StoredDelivery): Promise<void>;
}

/** Whether a store is shared by several processes. */
export function isSharedStore(store: SnapshotStore): store is SharedSnapshotStore {
  return (store as Partial<SharedSnapshotStore>).shared === true;
}

/**
 * Where a durable host keeps its actors; small, so that a database can implement it: one holder at a
 * time, a put acknowledged once durable, finished actors archived and pruned by age.
 */
export interface SnapshotStore {
  /**
   * Takes the store (a second holder is refused with an error naming it), loads it, and checks every
   * record by `rules`: an older version is migrated, an unusable one set aside and reported.
   */
  open(options: SnapshotStoreOpenOptions): Promise<SnapshotStoreOpenReport>;
  /** A live or archived record, by actor id: a copy, the caller's to change. */
  get(id: string): Promise<ActorRecord | undefined>;
  /**
   * Writes the records as one batch; resolves once every one of them is durable (rejects if any is
   * not). A record whose status is `done` or `error` is archived: it leaves the live records.
   */
  put(records: readonly ActorRecord[]): Promise<void>;
  /**
   * The live records (what a start resumes), or the archived ones. For speed they may be the store's
   * own objects: never change them (the memory store hands out frozen copies, so tests catch it).
   */
  list(which: "live" | "archive"): Promise<Array<Readonly<ActorRecord>>>;
  /**
   * The live record with this id as last put, when the store keeps it in memory (all its records, or
   * those being written): a host keeps it for an actor gone dormant, not a second copy. The store's own
   * object: never change it.
   */
  kept?(id: string): Readonly<ActorRecord> | undefined;
  /** Drops archived records last updated before `olderThan` (ms since the epoch); resolves how many. */
  prune(olderThan: number): Promise<number>;
  /** Lands what is pending and releases the store; does nothing when not open. Other methods then reject (SnapshotStoreNotOpenError). */
  close(): Promise<void>;
}

/** A store method was called while the store is not open: before open(), or after close(). */
export class SnapshotStoreNotOpenError extends A2AError {
  override readonly code = "SNAPSHOT_STORE_NOT_OPEN";
  override readonly name = "SnapshotStoreNotOpenError";

  constructor(
    /** Which store, e.g. `lowdb store in /var/lib/a2a`. */
    readonly store: string,
    readonly method: string,
  ) {
    super(`${store}: ${method}() refused: the store is not open (open() it first, and again after close())`);
  }
}

/** open() of a store that is already open: one holder at a time. */
export class SnapshotStoreInUseError extends A2AError {
  override readonly code = "SNAPSHOT_STORE_IN_USE";
  override readonly name = "SnapshotStoreInUseError";

  constructor(readonly store: string) {
    super(`${store}: open() refused: it is already open (held by another host); close() it first`);
  }
}

/** The argument checks every store makes, so that each refuses bad input with the same words. */
export function checkListKind(store: string, which: unknown): asserts which is "live" | "archive" {
  if (which !== "live" && which !== "archive") {
    throw new TypeError(`${store}: list() takes "live" or "archive", got ${JSON.stringify(which)}`);
  }
}

export function checkCutoff(store: string, olderThan: unknown): asserts olderThan is number {
  if (typeof olderThan !== "number" || !Number.isFinite(olderThan)) {
    throw new TypeError(`${store}: prune() takes a time in ms since the epoch, got ${String(olderThan)}`);
  }
}
