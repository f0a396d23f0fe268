// The entry point `a2a-statecharts/durable`: durable XState actors for any machine.
export { createDurableHost } from "./DurableHost.js";
export type {
  DurableActor,
  DurableActorInfo,
  DurableHost,
  DurableHostCounts,
  DurableHostOptions,
  Logger,
  MachineRegistration,
} from "./durableHostTypes.js";
export type { RuntimeTimers } from "./timers.js";
export { createLowdbStore, createMemoryStore } from "../persistence/index.js";
export type { SnapshotStore, SnapshotStoreOpenOptions } from "../persistence/SnapshotStorePort.js";
export type { ActorRecord, DelayedEventRecord } from "../persistence/actorRecord.js";

// Errors the host and its stores reject with: each extends A2AError and has its own `code` and `name`
export { A2AError } from "../errors/A2AError.js";
export { ActorExistsError, ActorFailedError, ActorNotFoundError, ActorStoppedError } from "./actorErrors.js";
export { InvalidActorRecordError } from "../persistence/actorRecord.js";
export { CorruptSnapshotError } from "../persistence/recordLine.js";
export { StateFileReadError } from "../persistence/DurableJsonFile.js";
export { StateDirLockedError, StateDirNotWritableError } from "../persistence/StateDirLock.js";
export { SnapshotStoreInUseError, SnapshotStoreNotOpenError } from "../persistence/SnapshotStorePort.js";
export { SnapshotStoreWriteError } from "../persistence/snapshotStoreOptions.js";
