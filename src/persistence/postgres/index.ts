// Entry point `a2a-statecharts/postgres`: the snapshot store on PostgreSQL, shared by several processes.
import type { SharedSnapshotStore } from "../SnapshotStorePort.js";
import { PostgresSnapshotStore } from "./PostgresSnapshotStore.js";
import { type PostgresStoreOptions, resolvePostgresStoreOptions } from "./postgresStoreOptions.js";

export type { PostgresStoreOptions } from "./postgresStoreOptions.js";
// Errors the store rejects with: each extends A2AError (from the root or `a2a-statecharts/durable`)
export { PostgresStoreError } from "./postgresErrors.js";
export { ActorTakenOverError, InvalidActorRecordError } from "../actorRecord.js";
export { SnapshotStoreInUseError, SnapshotStoreNotOpenError } from "../SnapshotStorePort.js";
export type { LiveRecordFilter, SharedSnapshotStore } from "../SnapshotStorePort.js";

/**
 * A snapshot store on PostgreSQL, for a runtime or a durable host. Processes on the same schema share
 * it: each live actor is owned by one process at a time (a renewed lease); when one stops or dies, the
 * others take its actors over at their next poll (within `leaseMs` when it hangs), soonest due
 * first. Every write is committed before the caller hears of it. The tables in `schema` (default
 * `a2a`) are created and migrated at open; open() fails with a PostgresStoreError saying what is wrong.
 */
export function createPostgresStore(options: PostgresStoreOptions): SharedSnapshotStore {
  return new PostgresSnapshotStore(resolvePostgresStoreOptions(options));
}
