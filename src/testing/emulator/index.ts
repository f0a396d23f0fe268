export {
  type DiscordEmulator,
  type DiscordEmulatorOptions,
  type EmulatedMessage,
  startDiscordEmulator,
} from "./DiscordEmulator.js";
export type { RestExchange } from "./restServer.js";
export type { EmulatorFault, FaultMatch } from "./faults.js";
export type { BucketLimit, EmulatorRateLimits } from "./rateLimits.js";
export { isSnowflake, SnowflakeGenerator, snowflakeTimestamp } from "./snowflake.js";
export { emulatorToken, userIdFromToken } from "./tokens.js";
