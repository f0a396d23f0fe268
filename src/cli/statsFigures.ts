import type { A2AEvent, A2AEventOf } from "../policies/index.js";

// The figures of `stats`, computed from the control plane's events alone. Every figure is a count or a
// number of milliseconds; docs/stats.md describes each one.

/** Retries of a reply wait (a2a.retry), and whether the flows that needed them ended ok. */
export interface RetryFigures {
  total: number;
  /** Retries by error code, with the code's category. */
  byCode: Record<string, { category: string; count: number }>;
  byCategory: Record<string, number>;
  /** Flows that completed after at least one retry, and how many of those ended ok. */
  flowsRetried: number;
  flowsRetriedOk: number;
  /** flowsRetriedOk / flowsRetried; null when no flow retried. */
  successRate: number | null;
}

/** A group of sessions_send flows' turn figures. */
export interface TurnFigures {
  flows: number;
  /** Sums over the flows: the configured maxPingPongTurns, the turns the intent allowed, the turns run. */
  configured: number;
  effective: number;
  actual: number;
  /** configured − actual, over the flows that ended ok. */
  saved: number;
}

/** sessions_send flows, from their a2a.complete events. */
export interface FlowFigures extends TurnFigures {
  outcomes: { ok: number; blocked: number; timeout: number };
  /** mean(actualTurns); null without flows. */
  meanActualTurns: number | null;
  earlyTerminations: { total: number; rate: number | null; byReason: Record<string, number> };
  /**
   * LLM calls (one per agent run) over the flows that ended ok: the target's reply, the ping-pong
   * turns and the announce step when it ran, against a fixed maxPingPongTurns that always announces
   * (configured + 2 each).
   */
  llmCalls: { actual: number; baseline: number; saved: number };
  announce: {
    run: number;
    skipped: number;
    skipRate: number | null;
    skippedByReason: Record<string, number>;
  };
  /** (complete.ts − send.ts) / actualTurns averaged over the flows with turns whose send was seen; null if none. */
  meanMsPerTurn: number | null;
  byIntent: Record<string, TurnFigures>;
}

export interface LatencyFigures {
  /** Mentions whose answer was seen after their post was seen. */
  count: number;
  p50: number | null;
  p90: number | null;
  max: number | null;
  histogram: Array<{ fromMs: number; toMs: number | null; count: number }>;
}

/** discord_send collaborations and their mentions. */
export interface MentionFigures {
  /** discord_send calls (a2a.collaborate.requested). */
  requested: number;
  /** Mentions posted (a2a.collaborate.sent). */
  sent: number;
  responded: number;
  /** Reminders posted, and the mentions that needed at least one. */
  reminders: number;
  remindedMentions: number;
  escalated: number;
  failed: { total: number; byCode: Record<string, number> };
  /** From the mention's post to its answer. */
  latencyMs: LatencyFigures;
}

/** Figures for one group of events: everything, one agent, or one pair. */
export interface StatsFigures {
  retries: RetryFigures;
  flows: FlowFigures;
  mentions: MentionFigures;
  /** discord_send calls vs sessions_send flows started; discordShare = discord / (discord + sessions). */
  channels: { discordSend: number; sessionsSend: number; discordShare: number | null };
}

/** Upper bounds of the latency histogram's buckets; the last bucket is open. */
export const LATENCY_BUCKETS_MS = [30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];

/** Announce skip reasons that come after the announce step ran (an LLM call was made). */
const ANNOUNCE_STEP_RAN = new Set(["announce_skip", "announce_failed", "post_failed"]);

/** The figures of a list of events (already filtered by time and group). */
export function computeFigures(events: readonly A2AEvent[]): StatsFigures {
  const of = <T extends A2AEvent["type"]>(type: T) =>
    events.filter((e): e is A2AEventOf<T> => e.type === type);
  const completes = of("a2a.complete");
  const sends = of("a2a.send");
  const flows = flowFigures(completes, sends, of("a2a.response"));
  const discordSend = of("a2a.collaborate.requested").length;
  const sessionsSend = new Set(sends.map((e, i) => e.conversationId ?? e.runId ?? `#${i}`)).size;
  return {
    retries: retryFigures(of("a2a.retry"), completes, flows.outcomeOf),
    flows: flows.figures,
    mentions: mentionFigures(events),
    channels: { discordSend, sessionsSend, discordShare: ratio(discordSend, discordSend + sessionsSend) },
  };
}

type Outcome = keyof FlowFigures["outcomes"];

function flowFigures(
  completes: ReadonlyArray<A2AEventOf<"a2a.complete">>,
  sends: ReadonlyArray<A2AEventOf<"a2a.send">>,
  responses: ReadonlyArray<A2AEventOf<"a2a.response">>,
): { figures: FlowFigures; outcomeOf: (e: A2AEventOf<"a2a.complete">) => Outcome } {
  const firstResponse = new Map<string, A2AEventOf<"a2a.response">>();
  for (const r of responses) {
    if (r.data.turn === 0 && r.conversationId !== undefined) firstResponse.set(r.conversationId, r);
  }
  const sentAt = new Map<string, number>();
  for (const s of sends) {
    if (s.conversationId !== undefined && !sentAt.has(s.conversationId)) sentAt.set(s.conversationId, s.ts);
  }
  const outcomeOf = (e: A2AEventOf<"a2a.complete">): Outcome => {
    const first = e.conversationId === undefined ? undefined : firstResponse.get(e.conversationId);
    // Without the first response (before --since), an error with no turn run means the reply never came.
    const blocked =
      first === undefined
        ? e.data.errorCode !== undefined && e.data.actualTurns === 0
        : first.data.outcome === "blocked";
    if (!blocked) return "ok";
    return e.data.errorCode === "wait_timeout" ? "timeout" : "blocked";
  };

  const figures: FlowFigures = {
    ...emptyTurns(),
    outcomes: { ok: 0, blocked: 0, timeout: 0 },
    meanActualTurns: null,
    earlyTerminations: { total: 0, rate: null, byReason: {} },
    llmCalls: { actual: 0, baseline: 0, saved: 0 },
    announce: { run: 0, skipped: 0, skipRate: null, skippedByReason: {} },
    meanMsPerTurn: null,
    byIntent: {},
  };
  const perTurn: number[] = [];
  for (const e of completes) {
    const d = e.data;
    const outcome = outcomeOf(e);
    figures.outcomes[outcome] += 1;
    addTurns(figures, d, outcome);
    addTurns((figures.byIntent[d.messageIntent] ??= emptyTurns()), d, outcome);
    if (d.earlyTermination) {
      figures.earlyTerminations.total += 1;
      const reason = d.terminationReason ?? "unknown";
      bump(figures.earlyTerminations.byReason, reason);
    }
    const stepRan = d.announced || ANNOUNCE_STEP_RAN.has(d.announceSkipReason ?? "");
    if (stepRan) figures.announce.run += 1;
    if (d.announceSkipped) {
      figures.announce.skipped += 1;
      // A flow that got no reply skips its announcement without naming a reason.
      bump(
        figures.announce.skippedByReason,
        d.announceSkipReason ?? (outcome === "ok" ? "unspecified" : "blocked"),
      );
    }
    if (outcome === "ok") {
      figures.llmCalls.actual += 1 + d.actualTurns + (stepRan ? 1 : 0);
      figures.llmCalls.baseline += 1 + d.configuredMaxTurns + 1;
    }
    const start = e.conversationId === undefined ? undefined : sentAt.get(e.conversationId);
    if (start !== undefined && d.actualTurns > 0) perTurn.push((e.ts - start) / d.actualTurns);
  }
  const n = completes.length;
  figures.llmCalls.saved = figures.llmCalls.baseline - figures.llmCalls.actual;
  figures.meanActualTurns = n === 0 ? null : figures.actual / n;
  figures.earlyTerminations.rate = ratio(figures.earlyTerminations.total, n);
  figures.announce.skipRate = ratio(figures.announce.skipped, n);
  figures.meanMsPerTurn = perTurn.length === 0 ? null : Math.round(sum(perTurn) / perTurn.length);
  return { figures, outcomeOf };
}

function emptyTurns(): TurnFigures {
  return { flows: 0, configured: 0, effective: 0, actual: 0, saved: 0 };
}

function addTurns(into: TurnFigures, d: A2AEventOf<"a2a.complete">["data"], outcome: Outcome): void {
  into.flows += 1;
  into.configured += d.configuredMaxTurns;
  into.effective += d.effectiveTurns;
  into.actual += d.actualTurns;
  // A flow that got no reply ran no ping-pong with or without the optimisation: nothing saved.
  if (outcome === "ok") into.saved += Math.max(0, d.configuredMaxTurns - d.actualTurns);
}

function retryFigures(
  retries: ReadonlyArray<A2AEventOf<"a2a.retry">>,
  completes: ReadonlyArray<A2AEventOf<"a2a.complete">>,
  outcomeOf: (e: A2AEventOf<"a2a.complete">) => Outcome,
): RetryFigures {
  const byCode: RetryFigures["byCode"] = {};
  const byCategory: Record<string, number> = {};
  for (const r of retries) {
    const entry = (byCode[r.data.errorCode] ??= { category: r.data.errorCategory, count: 0 });
    entry.count += 1;
    bump(byCategory, r.data.errorCategory);
  }
  const retried = completes.filter((e) => e.data.retryAttempts > 0);
  const ok = retried.filter((e) => outcomeOf(e) === "ok").length;
  return {
    total: retries.length,
    byCode,
    byCategory,
    flowsRetried: retried.length,
    flowsRetriedOk: ok,
    successRate: ratio(ok, retried.length),
  };
}

function mentionFigures(events: readonly A2AEvent[]): MentionFigures {
  const figures: MentionFigures = {
    requested: 0,
    sent: 0,
    responded: 0,
    reminders: 0,
    remindedMentions: 0,
    escalated: 0,
    failed: { total: 0, byCode: {} },
    latencyMs: { count: 0, p50: null, p90: null, max: null, histogram: [] },
  };
  const postedAt = new Map<string, number>();
  const reminded = new Set<string>();
  const latencies: number[] = [];
  for (const e of events) {
    switch (e.type) {
      case "a2a.collaborate.requested":
        figures.requested += 1;
        break;
      case "a2a.collaborate.sent": {
        figures.sent += 1;
        const id = e.data.mentionId ?? e.data.collaborationId;
        if (id !== undefined) postedAt.set(id, e.ts);
        break;
      }
      case "a2a.collaborate.responded": {
        figures.responded += 1;
        const id = e.data.mentionId ?? e.data.collaborationId;
        const posted = id === undefined ? undefined : postedAt.get(id);
        if (posted !== undefined) latencies.push(e.ts - posted);
        break;
      }
      case "a2a.collaborate.failed":
        figures.failed.total += 1;
        bump(figures.failed.byCode, e.data.errorCode ?? "unknown");
        break;
      case "a2a.mention.reminded":
        figures.reminders += 1;
        reminded.add(e.data.mentionId);
        break;
      case "a2a.mention.escalated":
        figures.escalated += 1;
        break;
      default:
        break;
    }
  }
  figures.remindedMentions = reminded.size;
  figures.latencyMs = latencyFigures(latencies);
  return figures;
}

function latencyFigures(latencies: number[]): LatencyFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const bounds = [0, ...LATENCY_BUCKETS_MS];
  const histogram = bounds.map((fromMs, i) => {
    const toMs = bounds[i + 1] ?? null;
    return {
      fromMs,
      toMs,
      count: sorted.filter((ms) => ms >= fromMs && (toMs === null || ms < toMs)).length,
    };
  });
  return {
    count: sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    max: sorted.at(-1) ?? null,
    histogram,
  };
}

/** Nearest-rank percentile of sorted values: the smallest value with at least p of them at or below it. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? null;
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}
