import type { A2AEvent, A2AEventOf } from "../policies/index.js";

// The figures of `stats`, computed from the control plane's events alone. Every figure is a count or a
// number of milliseconds; docs/stats.md describes each one.

/** The figures for one group of events (everything, one agent, one pair): the `totals` of `stats --json`. */
export type StatsFigures = ReturnType<typeof computeFigures>;
type TurnFigures = ReturnType<typeof emptyTurns>;
type Complete = A2AEventOf<"a2a.complete">;
type Outcome = "ok" | "blocked" | "timeout";
type EventsOf = <T extends A2AEvent["type"]>(type: T) => Array<A2AEventOf<T>>;

/** Upper bounds of the latency histogram's buckets; the last bucket is open. */
const LATENCY_BUCKETS_MS = [30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];

/** Announce skip reasons that come after the announce step ran (an LLM call was made). */
const ANNOUNCE_STEP_RAN = new Set(["announce_skip", "announce_failed", "post_failed"]);

/** The figures of a list of events (already filtered by time and group). */
export function computeFigures(events: readonly A2AEvent[]) {
  const of: EventsOf = (type) => events.filter((e): e is A2AEventOf<typeof type> => e.type === type);
  const completes = of("a2a.complete");
  const sends = of("a2a.send");
  const flows = flowFigures(completes, sends, of("a2a.response"));
  const discordSend = of("a2a.collaborate.requested").length;
  const sessionsSend = new Set(sends.map((e, i) => e.conversationId ?? e.runId ?? `#${i}`)).size;
  return {
    retries: retryFigures(of("a2a.retry"), completes, flows.outcomeOf),
    flows: flows.figures,
    mentions: mentionFigures(events, of),
    channels: { discordSend, sessionsSend, discordShare: ratio(discordSend, discordSend + sessionsSend) },
  };
}

function flowFigures(
  completes: readonly Complete[],
  sends: ReadonlyArray<A2AEventOf<"a2a.send">>,
  responses: ReadonlyArray<A2AEventOf<"a2a.response">>,
) {
  const firstResponse = new Map<string, A2AEventOf<"a2a.response">>();
  for (const r of responses) {
    if (r.data.turn === 0 && r.conversationId !== undefined) firstResponse.set(r.conversationId, r);
  }
  const sentAt = new Map<string, number>();
  for (const s of sends) {
    if (s.conversationId !== undefined && !sentAt.has(s.conversationId)) sentAt.set(s.conversationId, s.ts);
  }
  const outcomeOf = (e: Complete): Outcome => {
    const first = e.conversationId === undefined ? undefined : firstResponse.get(e.conversationId);
    // Without the first response (before --since), an error with no turn run means the reply never came.
    const blocked =
      first === undefined
        ? e.data.errorCode !== undefined && e.data.actualTurns === 0
        : first.data.outcome === "blocked";
    if (!blocked) return "ok";
    return e.data.errorCode === "wait_timeout" ? "timeout" : "blocked";
  };

  const turns = emptyTurns();
  const outcomes: Record<Outcome, number> = { ok: 0, blocked: 0, timeout: 0 };
  const llmCalls = { actual: 0, baseline: 0 };
  let announced = 0;
  const byIntent: Record<string, TurnFigures> = {};
  const perTurn: number[] = [];
  for (const e of completes) {
    const d = e.data;
    const outcome = outcomeOf(e);
    outcomes[outcome] += 1;
    addTurns(turns, d, outcome);
    addTurns((byIntent[d.messageIntent] ??= emptyTurns()), d, outcome);
    const stepRan = d.announced || ANNOUNCE_STEP_RAN.has(d.announceSkipReason ?? "");
    if (stepRan) announced += 1;
    if (outcome === "ok") {
      llmCalls.actual += 1 + d.actualTurns + (stepRan ? 1 : 0);
      llmCalls.baseline += 1 + d.configuredMaxTurns + 1;
    }
    const start = e.conversationId === undefined ? undefined : sentAt.get(e.conversationId);
    if (start !== undefined && d.actualTurns > 0) perTurn.push((e.ts - start) / d.actualTurns);
  }
  const n = completes.length;
  const early = completes.filter((e) => e.data.earlyTermination);
  const skipped = completes.filter((e) => e.data.announceSkipped);
  const figures = {
    ...turns,
    outcomes,
    meanActualTurns: n === 0 ? null : turns.actual / n,
    earlyTerminations: {
      total: early.length,
      rate: ratio(early.length, n),
      byReason: countBy(early, (e) => e.data.terminationReason ?? "unknown"),
    },
    // LLM calls (one per agent run) of the flows that ended ok, against a fixed maxPingPongTurns that
    // always announces: the target's reply, the turns, the announce step.
    llmCalls: { ...llmCalls, saved: llmCalls.baseline - llmCalls.actual },
    announce: {
      run: announced,
      skipped: skipped.length,
      skipRate: ratio(skipped.length, n),
      // A flow that got no reply skips its announcement without naming a reason.
      skippedByReason: countBy(
        skipped,
        (e) => e.data.announceSkipReason ?? (outcomeOf(e) === "ok" ? "unspecified" : "blocked"),
      ),
    },
    meanMsPerTurn: perTurn.length === 0 ? null : Math.round(sum(perTurn) / perTurn.length),
    byIntent,
  };
  return { figures, outcomeOf };
}

/** Sums over flows: the configured maxPingPongTurns, the turns the intent allowed, the turns run, and configured − actual over the flows that ended ok. */
function emptyTurns() {
  return { flows: 0, configured: 0, effective: 0, actual: 0, saved: 0 };
}

function addTurns(into: TurnFigures, d: Complete["data"], outcome: Outcome): void {
  into.flows += 1;
  into.configured += d.configuredMaxTurns;
  into.effective += d.effectiveTurns;
  into.actual += d.actualTurns;
  // A flow that got no reply ran no ping-pong with or without the optimisation: nothing saved.
  if (outcome === "ok") into.saved += Math.max(0, d.configuredMaxTurns - d.actualTurns);
}

function retryFigures(
  retries: ReadonlyArray<A2AEventOf<"a2a.retry">>,
  completes: readonly Complete[],
  outcomeOf: (e: Complete) => Outcome,
) {
  const byCode: Record<string, { category: string; count: number }> = {};
  for (const r of retries)
    (byCode[r.data.errorCode] ??= { category: r.data.errorCategory, count: 0 }).count += 1;
  const retried = completes.filter((e) => e.data.retryAttempts > 0);
  const ok = retried.filter((e) => outcomeOf(e) === "ok").length;
  return {
    total: retries.length,
    byCode,
    byCategory: countBy(retries, (r) => r.data.errorCategory),
    flowsRetried: retried.length,
    flowsRetriedOk: ok,
    successRate: ratio(ok, retried.length),
  };
}

function mentionFigures(events: readonly A2AEvent[], of: EventsOf) {
  // From each mention's post to its answer, both seen.
  const postedAt = new Map<string, number>();
  const latencies: number[] = [];
  for (const e of events) {
    if (e.type !== "a2a.collaborate.sent" && e.type !== "a2a.collaborate.responded") continue;
    const id = e.data.mentionId ?? e.data.collaborationId;
    if (id === undefined) continue;
    const posted = postedAt.get(id);
    if (e.type === "a2a.collaborate.sent") postedAt.set(id, e.ts);
    else if (posted !== undefined) latencies.push(e.ts - posted);
  }
  const reminded = of("a2a.mention.reminded");
  const failed = of("a2a.collaborate.failed");
  return {
    requested: of("a2a.collaborate.requested").length,
    sent: of("a2a.collaborate.sent").length,
    responded: of("a2a.collaborate.responded").length,
    reminders: reminded.length,
    remindedMentions: new Set(reminded.map((e) => e.data.mentionId)).size,
    escalated: of("a2a.mention.escalated").length,
    failed: { total: failed.length, byCode: countBy(failed, (e) => e.data.errorCode ?? "unknown") },
    latencyMs: latencyFigures(latencies),
  };
}

function latencyFigures(latencies: number[]) {
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
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? null;
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** How many of `items` have each key, keys in the order first seen. */
function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[keyOf(item)] = (counts[keyOf(item)] ?? 0) + 1;
  return counts;
}
