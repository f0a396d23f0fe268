/**
 * The "LLM" of the example gateway: deterministic agents instead of model calls, so the example runs
 * the same way every time without an API key. An agent's answer depends on its session and on the
 * message it is given, as a real model's would; everything else in the example is what a real gateway
 * does around its model.
 */
import type { GatewayPort } from "a2a-statecharts";

/** The agent a session belongs to: session keys start with `agent:<agentId>:`. */
export function agentOfSession(sessionKey: string): string {
  const agentId = sessionKey.split(":")[1];
  if (!sessionKey.startsWith("agent:") || agentId === undefined || agentId === "") {
    throw new Error(`not an agent session key: ${JSON.stringify(sessionKey)}`);
  }
  return agentId;
}

// Each reply says something new (no repetition), is long, asks back and mentions whoever spoke last:
// two such agents in a thread would answer each other forever.
const ARGUMENTS = [
  "tabs let every reader pick an indentation width, so why force mine on you?",
  "spaces look identical in every diff viewer and code review tool, don't they?",
  "our formatter rewrites indentation on save anyway, so does the choice even matter?",
  "mixed indentation broke the YAML deploy last spring; shall we ban tabs only there?",
  "screen readers announce tabs more compactly than runs of spaces, any objection?",
  "the style guide we copied says spaces, but did anyone read its reasoning?",
];

export class ScriptedLlm {
  private readonly turns = new Map<string, number>();
  private readonly latest = new Map<string, string>();
  private readonly runs = new Map<string, string>();
  private nextRun = 0;
  private argued = 0;

  /**
   * One agent run: the reply of the agent of `sessionKey` to `message`. `fromUserId` is the Discord user
   * who wrote the message, if it came from Discord (an agent answering in a thread addresses them).
   */
  reply(sessionKey: string, message: string, fromUserId?: string): string {
    const agentId = agentOfSession(sessionKey);
    const turn = (this.turns.get(sessionKey) ?? 0) + 1;
    this.turns.set(sessionKey, turn);

    if (/tabs or spaces/i.test(message)) {
      // One list for both agents, so neither repeats what the other just said.
      const argument = ARGUMENTS[this.argued++ % ARGUMENTS.length] as string;
      const to = fromUserId === undefined ? "" : `<@${fromUserId}> `;
      return `${to}${agentId}, round ${turn} on tabs or spaces: ${argument}`;
    }
    // The sessions_send conversation: a review that ends with an acknowledgement.
    if (/review the login flow/i.test(message)) {
      return "Looks good overall. Should access tokens expire after 15 minutes?";
    }
    if (/expire after 15 minutes\?/i.test(message)) {
      return "Yes: 15 minutes, and refresh tokens after 7 days. Anything else to change?";
    }
    if (/anything else to change\?/i.test(message)) return "Thanks, got it: 15 minutes and 7 days it is.";
    if (/staging logs/i.test(message)) return "No errors in the staging logs since yesterday's deploy.";
    if (/release/i.test(message)) return "Release 2.3 is on track for Friday; the changelog is ready.";
    return `${agentId} here: noted, I will look into it.`;
  }

  /** The port the runtime drives for sessions_send: start a run, wait for it, read its reply. */
  gatewayPort(): GatewayPort {
    return {
      agent: async ({ sessionKey, message }) => {
        const runId = `run-${++this.nextRun}`;
        this.runs.set(runId, sessionKey);
        this.latest.set(sessionKey, this.reply(sessionKey, message));
        return { runId };
      },
      // Scripted runs finish at once; a real gateway waits up to timeoutMs for the model.
      agentWait: async ({ runId }) =>
        this.runs.delete(runId) ? { status: "ok" } : { status: "not_found", error: `no run ${runId}` },
      readLatestAssistantReply: async ({ sessionKey }) => this.latest.get(sessionKey),
    };
  }
}
