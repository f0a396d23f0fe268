// The package root: what a gateway embeds. The runtime and its ports, the machines, the events, the
// config, the pure policies the machines are made of, and the errors a caller can meet. Nothing here
// starts a server or needs discord.js: the Discord adapter is `a2a-statecharts/discord`, the emulator
// `a2a-statecharts/testing`, the inspector `a2a-statecharts/inspector`, the durable host for any
// machine `a2a-statecharts/durable`.

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

// Reply wait: error classification, retry-after, backoff, the no-reply outcome
export { A2AErrorCategory, type A2AErrorInfo } from "./policies/replyWait/A2AErrorInfo.js";
export { classifyA2AError } from "./policies/replyWait/classifyA2AError.js";
export { extractRetryAfterMs } from "./policies/replyWait/extractRetryAfterMs.js";
export { calculateBackoffMs } from "./policies/replyWait/calculateBackoffMs.js";
export { buildNoReplyOutcomeMessage } from "./policies/replyWait/buildNoReplyOutcomeMessage.js";

// Ping-pong: intent, turns, early termination, announce, the agents' extra system prompts
export { A2AMessageIntent } from "./policies/pingPong/A2AMessageIntent.js";
export { classifyMessageIntent } from "./policies/pingPong/classifyMessageIntent.js";
export { resolveEffectivePingPongTurns } from "./policies/pingPong/resolveEffectivePingPongTurns.js";
export { calculateSimilarity } from "./policies/pingPong/calculateSimilarity.js";
export {
  ANNOUNCE_SKIP_TOKEN,
  isAnnounceSkip,
  isReplySkip,
  REPLY_SKIP_TOKEN,
} from "./policies/pingPong/skipTokens.js";
export { shouldTerminatePingPong } from "./policies/pingPong/shouldTerminatePingPong.js";
export { decideAnnounce, shouldRunAnnounce } from "./policies/pingPong/decideAnnounce.js";
export {
  buildAgentToAgentAnnounceContext,
  buildAgentToAgentReplyContext,
} from "./policies/pingPong/prompts.js";

// Collaboration in Discord threads: names, routes, observers, failures, session keys
export {
  buildCollaborationThreadName,
  buildReportThreadName,
  isReportThreadName,
} from "./policies/collaboration/threadNames.js";
export { threadRouteKey } from "./policies/collaboration/threadRouteKey.js";
export {
  extractObserverTokens,
  type ObserverRecord,
  toObserverRecord,
} from "./policies/collaboration/observerRecords.js";
export {
  classifyDiscordFailure,
  type DiscordFailure,
} from "./policies/collaboration/classifyDiscordFailure.js";
export {
  filterBootstrapFiles,
  isA2ASessionKey,
  resolveThreadSessionKey,
} from "./policies/collaboration/sessionKeys.js";

// Errors a caller can meet (each also has a distinct `name`)
export { InvalidInputError } from "./policies/InvalidInputError.js";
export { StateDirLockedError } from "./persistence/StateDirLock.js";
export type { MachineInputError } from "./machines/MachineInputError.js";
export type { MissingPortError } from "./runtime/MissingPortError.js";
