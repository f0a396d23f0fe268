// The package root: what a gateway embeds. The runtime and its ports, the machines, the events, the
// config, and the errors a caller can meet. Nothing here starts a server or needs discord.js: the
// Discord adapter is `a2a-statecharts/discord`, the emulator `a2a-statecharts/testing`, the inspector
// `a2a-statecharts/inspector`, the durable host for any machine `a2a-statecharts/durable`, the pure
// policies the machines are made of `a2a-statecharts/policies`.

// The runtime and its ports
export { createA2ARuntime } from "./runtime/createA2ARuntime.js";
export type {
  A2AFlowResult,
  A2ARuntime,
  A2ARuntimeOptions,
  DiscordPort,
  DiscordSendParams,
  DiscordSendResult,
  GatewayPort,
  InspectOption,
  MentionSummary,
  PreflightResult,
  SessionsSendParams,
} from "./runtime/ports.js";
export type { A2ALogger, LogFields, LogLevel } from "./runtime/logger.js";
// A blocked flow's `error` (`A2AFlowResult.error`); `a2a-statecharts/policies` has the enum and the classifier
export type { A2AErrorInfo } from "./policies/replyWait/A2AErrorInfo.js";
export type { InboundDiscordMessage } from "./policies/collaboration/InboundDiscordMessage.js";
export type { SnapshotStore } from "./persistence/SnapshotStorePort.js";
export type { RuntimeTimers } from "./durable/timers.js";

// Config
export { parseConfig, A2AConfigError, type ConfigProblem } from "./policies/config/parseConfig.js";
export { A2AConfigSchema, type A2AConfig, type A2AConfigInput } from "./policies/config/A2AConfigSchema.js";
// The texts for people and agents (`config.locale`, `config.messages`; a runtime's are `runtime.messages`)
export type { Locale, MessageOverrides } from "./policies/messages/messageCatalog.js";
export type { MessageCatalog, MessageKey } from "./policies/messages/messageKeys.js";

// Events
export { A2AEventSchema, type A2AEvent, type A2AEventType } from "./policies/events/A2AEventSchema.js";

// The machines, and the inputs and outputs of each
export { replyWaitMachine, type ReplyWaitInput, type ReplyWaitOutput } from "./machines/replyWaitMachine.js";
export { pingPongMachine } from "./machines/pingPongMachine.js";
export type { PingPongInput, PingPongOutput } from "./machines/pingPongContext.js";
export { a2aFlowMachine } from "./machines/a2aFlowMachine.js";
export type { A2AFlowInput, A2AFlowOutput } from "./machines/a2aFlowContext.js";
export { mentionMachine, type MentionInput, type MentionOutput } from "./machines/mentionMachine.js";
export { collaborateMachine } from "./machines/collaborateMachine.js";
export type { CollaborateInput, CollaborateOutput } from "./machines/collaborateContext.js";
// What each side-effect actor of the machines takes and returns, for `machine.provide({ actors })`
export type {
  AgentStepInput,
  AgentStepOutput,
  AgentWaitInput,
  AgentWaitOutput,
  PostAnnouncementInput,
  PostAnnouncementOutput,
  ReadReplyInput,
  ReadReplyOutput,
  SendMessageInput,
  SendMessageOutput,
} from "./machines/gatewayActors.js";
export type {
  CreateThreadInput,
  CreateThreadOutput,
  PostMessageInput,
  PostMessageOutput,
} from "./machines/discordActors.js";

// Errors a caller can meet: each extends A2AError and has its own `code` and `name`
export { A2AError } from "./errors/A2AError.js";
export { InvalidInputError } from "./policies/InvalidInputError.js";
export { MachineInputError } from "./machines/MachineInputError.js";
export { MissingPortError } from "./runtime/MissingPortError.js";
export { StateDirLockedError, StateDirNotWritableError } from "./persistence/StateDirLock.js";
export { StateFileReadError } from "./persistence/DurableJsonFile.js";
export { CorruptSnapshotError } from "./persistence/recordLine.js";
export { SnapshotStoreInUseError } from "./persistence/SnapshotStorePort.js";
export { SnapshotStoreWriteError } from "./persistence/snapshotStoreOptions.js";
export { ActorStoppedError } from "./durable/index.js";
