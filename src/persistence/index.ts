// Persistence layer: lowdb stores with durable writes, the state-directory lock and quarantine.
export * from "./actorRecord.js";
export * from "./DurableJsonFile.js";
export * from "./journal/segmentFormat.js";
export * from "./stateDirFiles.js";
export * from "./quarantine.js";
export { CorruptSnapshotError } from "./recordLine.js";
export * from "./readStateDir.js";
export * from "./LowdbSnapshotStore.js";
export * from "./SnapshotStorePort.js";
export * from "./snapshotStoreOptions.js";
export * from "./StateDirLock.js";
export * from "./createLowdbStore.js";
export * from "./createMemoryStore.js";
