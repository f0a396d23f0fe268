import type { A2AFlowInput } from "../machines/index.js";
import { type A2AConfig, resolveAgentA2ASettings } from "../policies/index.js";

/** The part of a flow's input that the config decides, for the target agent (its overrides first). */
export function flowSettings(
  config: A2AConfig,
  toAgent: string,
): Pick<
  A2AFlowInput,
  "configuredMaxTurns" | "autoTerminate" | "retry" | "maxWaitMs" | "chunkMs" | "allowedChannels" | "language"
> {
  const settings = resolveAgentA2ASettings(config, toAgent);
  const a2a = config.session.agentToAgent;
  return {
    configuredMaxTurns: settings.maxPingPongTurns,
    autoTerminate: a2a.autoTerminate,
    retry: {
      enabled: a2a.retry.enabled,
      maxAttempts: a2a.retry.maxAttempts,
      baseBackoffMs: a2a.retry.baseBackoffMs,
      maxBackoffMs: a2a.retry.maxBackoffMs,
    },
    maxWaitMs: settings.maxWaitMs,
    chunkMs: settings.chunkMs,
    // Announcements are posted only in the collaboration allowlist's channels.
    allowedChannels: [...config.discord.collaboration.allowedChannels],
    // Kept in the flow's snapshot only when it is not the default (Korean, no overrides).
    ...(config.locale === "ko" && Object.keys(config.messages).length === 0
      ? {}
      : { language: { locale: config.locale, messages: { ...config.messages } } }),
  };
}
