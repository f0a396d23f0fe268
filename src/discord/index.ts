// The entry point `a2a-statecharts/discord`: the runtime on discord.js. A port that sends as each agent's
// bot, a bridge that forwards their messages to the runtime, and the `discord_send` tool for the agents.
export {
  type BridgeDiscordJsOptions,
  bridgeDiscordJs,
  type DiscordJsEventClient,
  type DiscordJsMessage,
  type HandleDecision,
  toInboundDiscordMessage,
} from "./bridgeDiscordJs.js";
export { createDiscordJsPort, type DiscordJsRestClient } from "./createDiscordJsPort.js";
export * from "./discordSendTool.js";
