import { GLOBAL_TIMERS, type RuntimeTimers } from "../durable/timers.js";
import type { GatewayPort } from "../runtime/index.js";

/** What `agentWait` answers: `ok`, or how the run failed (`error` is the gateway's text, e.g. "429 rate limit, retry after 30s"). */
export type WaitOutcome = Awaited<ReturnType<GatewayPort["agentWait"]>>;

/**
 * One run of a scripted agent: its reply, the `agentWait` outcomes before `ok`, an error `agent()` throws
 * (the turn used up: a resend takes the next), or `hangs`: after its `waits`, `agentWait` never answers.
 */
export interface ScriptedTurn {
  reply?: string;
  waits?: WaitOutcome[];
  throws?: unknown;
  hangs?: true;
}

/** A call of `agent()` as the scripted gateway saw it, at the time of its clock, with the run it got. */
export interface GatewayCall {
  sessionKey: string;
  message: string;
  extraSystemPrompt?: string;
  idempotencyKey: string;
  runId: string;
  at: number;
}

/** How a {@link ScriptedGateway} keeps time; every field is optional. */
export interface ScriptedGatewayOptions {
  /** The clock calls are recorded with. Default: `Date.now` (`createTestRuntime` sets its virtual clock). */
  now?: () => number;
  /**
   * How long each `agentWait` takes (at most its `timeoutMs`); default 0. Needs a running clock under
   * createTestRuntime, whose `advance` waits for gateway calls to settle.
   */
  thinkMs?: number;
  /** The timers `thinkMs` is waited on. Default: the global ones. */
  timers?: RuntimeTimers;
}

/**
 * A {@link GatewayPort} answering from a script: each run in a session takes its next turn (none left:
 * no reply). A known idempotency key is the same run, so a resend takes no turn. Calls are recorded.
 */
export class ScriptedGateway implements GatewayPort {
  readonly calls: GatewayCall[] = [];
  /** `agentWait` calls, in order, with the time each was made. */
  readonly waits: Array<{ runId: string; timeoutMs: number; at: number }> = [];
  private readonly turns = new Map<string, ScriptedTurn[]>();
  private readonly runs = new Map<string, { sessionKey: string; turn: ScriptedTurn; waits: WaitOutcome[] }>();
  private readonly byKey = new Map<string, string>();
  private readonly latest = new Map<string, string>();
  private now: () => number;
  private readonly thinkMs: number;
  private readonly timers: RuntimeTimers;

  constructor(scripts: Record<string, Array<string | ScriptedTurn>> = {}, o: ScriptedGatewayOptions = {}) {
    this.now = o.now ?? Date.now;
    this.thinkMs = o.thinkMs ?? 0;
    if (!(Number.isFinite(this.thinkMs) && this.thinkMs >= 0)) {
      throw new RangeError(
        `ScriptedGateway: thinkMs must be a number of milliseconds ≥ 0, got ${String(o.thinkMs)}`,
      );
    }
    this.timers = o.timers ?? GLOBAL_TIMERS;
    for (const [sessionKey, turns] of Object.entries(scripts)) this.script(sessionKey, ...turns);
  }

  /** Appends turns to a session's script. */
  script(sessionKey: string, ...turns: Array<string | ScriptedTurn>): this {
    const list = this.turns.get(sessionKey) ?? [];
    for (const turn of turns) list.push(typeof turn === "string" ? { reply: turn } : { ...turn });
    this.turns.set(sessionKey, list);
    return this;
  }

  /** Records calls with this clock from now on. */
  useClock(now: () => number): void {
    this.now = now;
  }

  /** The runs started in a session, in order. */
  callsOf(sessionKey: string): GatewayCall[] {
    return this.calls.filter((c) => c.sessionKey === sessionKey);
  }

  async agent(p: {
    sessionKey: string;
    message: string;
    extraSystemPrompt?: string;
    idempotencyKey: string;
  }): Promise<{ runId: string }> {
    let runId = this.byKey.get(p.idempotencyKey);
    if (runId === undefined) {
      const turn = this.turns.get(p.sessionKey)?.shift() ?? {};
      if (turn.throws !== undefined) throw turn.throws;
      runId = `run-${this.runs.size + 1}`;
      this.runs.set(runId, { sessionKey: p.sessionKey, turn, waits: [...(turn.waits ?? [])] });
      this.byKey.set(p.idempotencyKey, runId);
    }
    this.calls.push({
      sessionKey: p.sessionKey,
      message: p.message,
      ...(p.extraSystemPrompt === undefined ? {} : { extraSystemPrompt: p.extraSystemPrompt }),
      idempotencyKey: p.idempotencyKey,
      runId,
      at: this.now(),
    });
    return { runId };
  }

  async agentWait(p: { runId: string; timeoutMs: number }): Promise<WaitOutcome> {
    this.waits.push({ runId: p.runId, timeoutMs: p.timeoutMs, at: this.now() });
    const run = this.runs.get(p.runId);
    if (run === undefined) return { status: "not_found", error: `no run ${p.runId}` };
    const thinking = Math.min(this.thinkMs, p.timeoutMs);
    if (thinking > 0) await new Promise<void>((resolve) => this.timers.setTimeout(resolve, thinking));
    const outcome = run.waits.shift();
    if (outcome !== undefined) return outcome;
    if (run.turn.hangs === true) return new Promise<WaitOutcome>(() => {});
    if (run.turn.reply !== undefined) this.latest.set(run.sessionKey, run.turn.reply);
    return { status: "ok" };
  }

  async readLatestAssistantReply(p: { sessionKey: string }): Promise<string | undefined> {
    return this.latest.get(p.sessionKey);
  }
}
