// The entry point `a2a-statecharts/testing`: a Discord emulator for the real discord.js client, and a
// runtime on a virtual clock with fakes of its ports, so a gateway's tests need neither Discord nor waiting.
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
