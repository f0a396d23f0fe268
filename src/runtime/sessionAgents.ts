/** The agent id in a session key `agent:{id}:…` (the key itself when it has none). */
export function agentOfSession(sessionKey: string): string {
  return /^agent:([^:]+):/.exec(sessionKey)?.[1] ?? sessionKey;
}
