import type { A2AConfig } from "./A2AConfigSchema.js";

export interface AgentA2ASettings {
  maxPingPongTurns: number;
  maxWaitMs: number;
  chunkMs: number;
}

/** The ping-pong limit and wait timeouts for one target agent: its overrides over the global values. */
export function resolveAgentA2ASettings(config: A2AConfig, agentId: string | undefined): AgentA2ASettings {
  const global = config.session.agentToAgent;
  // Own keys only: an agent id such as "constructor" must not find Object.prototype's members.
  const override =
    agentId !== undefined && global.agents !== undefined && Object.hasOwn(global.agents, agentId)
      ? global.agents[agentId]
      : undefined;
  return {
    maxPingPongTurns: override?.maxPingPongTurns ?? global.maxPingPongTurns,
    maxWaitMs: override?.timeout?.maxWaitMs ?? global.timeout.maxWaitMs,
    chunkMs: override?.timeout?.chunkMs ?? global.timeout.chunkMs,
  };
}
