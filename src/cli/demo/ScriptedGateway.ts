import type { GatewayPort } from "../../runtime/index.js";
import type { AcceleratedClock } from "./AcceleratedClock.js";

type WaitResult = Awaited<ReturnType<GatewayPort["agentWait"]>>;

/** What one session's scripted agent does: its replies in order, and how its runs end before "ok". */
export interface SessionScript {
  replies: string[];
  /** agentWait results returned, in order, before runs end "ok" (a rate limit, a permanent error). */
  failures?: WaitResult[];
}

/**
 * The gateway with deterministic agents instead of LLMs: each run of a session produces that
 * session's next scripted reply after `thinkMs` of demo time. It counts the runs (the LLM calls).
 */
export class ScriptedGateway implements GatewayPort {
  private readonly scripts = new Map<string, SessionScript>();
  private readonly latest = new Map<string, string>();
  private readonly runs = new Map<string, { sessionKey: string; reply: string | undefined }>();
  private readonly calls = new Map<string, number>();
  private nextRun = 0;

  constructor(
    private readonly clock: AcceleratedClock,
    private readonly thinkMs = 4_000,
  ) {}

  script(sessionKey: string, script: SessionScript): void {
    this.scripts.set(sessionKey, { replies: [...script.replies], failures: [...(script.failures ?? [])] });
  }

  /** Agent runs (LLM calls) started for the session so far. */
  callsOf(sessionKey: string): number {
    return this.calls.get(sessionKey) ?? 0;
  }

  /** Agent runs (LLM calls) started for every session. */
  totalCalls(): number {
    return [...this.calls.values()].reduce((sum, n) => sum + n, 0);
  }

  async agent(p: {
    sessionKey: string;
    message: string;
    idempotencyKey: string;
  }): Promise<{ runId: string }> {
    this.calls.set(p.sessionKey, this.callsOf(p.sessionKey) + 1);
    const runId = `run-${++this.nextRun}`;
    this.runs.set(runId, {
      sessionKey: p.sessionKey,
      reply: this.scripts.get(p.sessionKey)?.replies.shift(),
    });
    return { runId };
  }

  async agentWait(p: { runId: string; timeoutMs: number }): Promise<WaitResult> {
    const run = this.runs.get(p.runId);
    if (run === undefined) return { status: "not_found", error: `no run ${p.runId}` };
    await this.clock.sleep(Math.min(this.thinkMs, p.timeoutMs));
    const failure = this.scripts.get(run.sessionKey)?.failures?.shift();
    if (failure !== undefined) return failure;
    if (run.reply !== undefined) this.latest.set(run.sessionKey, run.reply);
    this.runs.delete(p.runId);
    return { status: "ok" };
  }

  async readLatestAssistantReply(p: { sessionKey: string }): Promise<string | undefined> {
    return this.latest.get(p.sessionKey);
  }
}
