// The entry point `a2a-statecharts/durable`: durable XState actors for any machine.
export { createDurableHost } from "./DurableHost.js";
export type {
  DurableActorInfo,
  DurableHost,
  DurableHostOptions,
  Logger,
  MachineRegistration,
} from "./durableHostTypes.js";
export type { RuntimeTimers } from "./timers.js";
export { createLowdbStore, createMemoryStore } from "../persistence/index.js";
export type { SnapshotStore, SnapshotStoreOpenOptions } from "../persistence/SnapshotStorePort.js";
export type { ActorRecord, DelayedEventRecord } from "../persistence/actorRecord.js";
