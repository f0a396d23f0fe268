export {
  type BridgeDiscordJsOptions,
  bridgeDiscordJs,
  type HandleDecision,
  toInboundDiscordMessage,
} from "./bridgeDiscordJs.js";
export { createDiscordJsPort } from "./createDiscordJsPort.js";
export * from "./discordSendTool.js";
export * from "./emulator/index.js";
