import { runtimeConfig } from "../runtimeFakes.js";
import type { LifecycleSettings } from "./mentionModel.js";

/** Midnight UTC: times in failure messages are shown as seconds since. */
export const T0 = Date.UTC(2026, 10, 24);

/** Short timeouts, so a few commands walk a mention through its whole life. */
export const LIFECYCLE: LifecycleSettings = {
  responseTimeoutMs: 60_000,
  urgentResponseTimeoutMs: 20_000,
  maxAttempts: 3,
};

/** The runtime's config: the agents of runtimeFakes, the lifecycle above, guards too wide to refuse a model step. */
export const MODEL_CONFIG = {
  ...runtimeConfig,
  discord: {
    a2aRetry: { ...runtimeConfig.discord.a2aRetry, ...LIFECYCLE },
    collaboration: {
      ...runtimeConfig.discord.collaboration,
      loopGuard: { maxCollaboratePerPair: 1_000, maxMessagesPerThread: 1_000 },
      rateLimit: { threadCreationPerMinute: 1_000, messagePerChannelPerSecond: 1_000 },
    },
  },
};

export const AGENTS = ["ruda", "eden", "seum"] as const;
export type AgentId = (typeof AGENTS)[number];

/** Seconds since T0, for messages. */
export function at(time: number): string {
  return `+${(time - T0) / 1000}s`;
}
