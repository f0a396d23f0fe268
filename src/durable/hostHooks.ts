import type { ActorRecord } from "../persistence/actorRecord.js";
import type { SnapshotStore } from "../persistence/SnapshotStorePort.js";
import type { Entry } from "./hostedActors.js";

/**
 * What a layer built on the host (the A2A runtime) adds to it. Not public: a user of
 * createDurableHost gets the defaults.
 */
export interface HostHooks {
  /** How errors name the host (default `DurableHost`). */
  name?: string;
  /** The host's instance name for the store (see SnapshotStoreOpenOptions.instance): the runtime's locked state directory. */
  instance?: string;
  /** Every event an actor, or any actor of its tree, emits. */
  onEmitted?: (event: { type: string }) => void;
  /** What is kept beside an actor's snapshot in its record. */
  metaOf?: (entry: Entry) => Record<string, unknown> | undefined;
  /** Told after each record is queued for the store (the actor's lastWrite is then its write). */
  onQueued?: (entry: Entry, record: ActorRecord) => void;
  /**
   * Starts a side effect. `restoredFrom`: the save time of the record its actor was restored from, when
   * the effect is one the restore re-runs (it may have run before the restart).
   */
  startEffect?: (start: () => void, restoredFrom: number | undefined) => void;
  /**
   * Side-effect actors (by their name in `setup({ actors })`) that change nothing outside, such as a
   * wait or a read: they start at once rather than after the write of the snapshot that started them.
   */
  ungatedEffects?: ReadonlySet<string>;
  /** A live record a shared store handed over while running (its process stopped or died), before it is hosted. */
  adopted?: (record: Readonly<ActorRecord>) => void;
  /** After the store opened and the archive was pruned, before any actor resumes. */
  opened?: (store: SnapshotStore) => Promise<void> | void;
}
