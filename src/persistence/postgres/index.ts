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
 * A snapshot store on PostgreSQL, for a runtime (`createA2ARuntime({ store })`) or a durable host.
 * Several processes opened on the same database and schema share one control plane: each live actor
 * is owned by one process at a time (a lease the process renews while it lives); when a process stops
 * or dies, the others take its actors over within `leaseMs`, soonest due first, and fire what fell due
 * (once: the snapshot that starts a side effect is committed before the effect runs). Every write is
 * committed before the caller hears of it.
 *
 * The tables live in `schema` (default `a2a`), created and migrated by the store at open. A server that
 * cannot be reached, refused credentials or missing permissions fail open() (the runtime's start())
 * with a PostgresStoreError saying which.
 */
export function createPostgresStore(options: PostgresStoreOptions): SharedSnapshotStore {
  return new PostgresSnapshotStore(resolvePostgresStoreOptions(options));
}
