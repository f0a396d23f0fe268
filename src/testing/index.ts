// The entry point `a2a-statecharts/testing`, so a gateway's own tests run without Discord or waiting: a
// Discord emulator that the real discord.js client talks to (REST and gateway on 127.0.0.1, with
// injectable faults), and a runtime on a virtual clock with ready fakes of its ports.
export {
  type DiscordEmulator,
  type DiscordEmulatorOptions,
  type EmulatedMessage,
  startDiscordEmulator,
} from "./emulator/DiscordEmulator.js";
export { DiscordError } from "./emulator/errors.js";
export type { RestExchange } from "./emulator/restServer.js";
export type { EmulatorFault, FaultMatch } from "./emulator/faults.js";
export type { BucketLimit, EmulatorRateLimits } from "./emulator/rateLimits.js";
export { emulatorToken, userIdFromToken } from "./emulator/tokens.js";
export { createTestRuntime, type TestRuntime, type TestRuntimeOptions } from "./createTestRuntime.js";
export {
  discordRateLimit,
  type RecordedPost,
  type RecordedThread,
  RecordingDiscord,
} from "./RecordingDiscord.js";
export {
  type GatewayCall,
  ScriptedGateway,
  type ScriptedGatewayOptions,
  type ScriptedTurn,
  type WaitOutcome,
} from "./ScriptedGateway.js";
export { type ClockPace, type RealTime, VirtualClock } from "./VirtualClock.js";
