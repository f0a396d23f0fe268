import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runStats, type StatsReport } from "../../src/cli/stats.js";
import { acquireStateDirLock } from "../../src/persistence/index.js";
import { EventLog } from "../../src/runtime/EventLog.js";
import type { A2AEvent } from "../../src/policies/index.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tempDir.js";

// A hand-made event log whose figures are worked out by hand below: four sessions_send flows (ok after
// two retries, blocked, timed out, ended early) and five discord_send collaborations (answered,
// answered after two reminders, escalated, failed, answered).

const T0 = Date.UTC(2026, 4, 1, 9, 0, 0);
const S = 1_000;
const M = 60_000;

type Pair = [from: string, to: string];

function flow(
  conversationId: string,
  [from, to]: Pair,
  messageIntent: "question" | "collaboration",
  at: number,
): { send: A2AEvent; env: Pick<A2AEvent, "conversationId" | "fromAgent" | "toAgent"> } {
  const env = { conversationId, fromAgent: from, toAgent: to };
  return {
    env,
    send: {
      type: "a2a.send",
      ts: at,
      ...env,
      data: { targetSessionKey: `agent:${to}:main`, message: "hi", messageIntent },
    },
  };
}

function retry(env: object, ts: number, errorCode: string, attempt: number): A2AEvent {
  const e = env as { conversationId: string; fromAgent: string; toAgent: string };
  return {
    type: "a2a.retry",
    ts,
    ...e,
    data: {
      errorCode,
      errorCategory: "transient",
      errorMessage: errorCode,
      attempt,
      maxAttempts: 3,
      backoffMs: 2_000,
      conversationId: e.conversationId,
      fromAgent: e.fromAgent,
      toAgent: e.toAgent,
    },
  };
}

function firstResponse(
  env: object,
  ts: number,
  outcome: "ok" | "blocked",
  intent: string,
  effective: number,
) {
  return {
    type: "a2a.response",
    ts,
    ...env,
    data: { turn: 0, outcome, messageIntent: intent, effectiveTurns: effective },
  } as A2AEvent;
}

function complete(env: object, ts: number, data: Record<string, unknown>): A2AEvent {
  return {
    type: "a2a.complete",
    ts,
    ...env,
    data: {
      retryAttempts: 0,
      configuredMaxTurns: 5,
      earlyTermination: false,
      announced: false,
      announceSkipped: true,
      ...data,
    },
  } as A2AEvent;
}

function collab(type: string, ts: number, [from, to]: Pair, id: string, extra: object = {}): A2AEvent {
  return {
    type,
    ts,
    fromAgent: from,
    toAgent: to,
    data: { collaborationId: id, fromAgentId: from, toAgentId: to, ...extra },
  } as A2AEvent;
}

function mention(
  type: "a2a.mention.reminded" | "a2a.mention.escalated",
  ts: number,
  pair: Pair,
  id: string,
  n: number,
) {
  return {
    type,
    ts,
    fromAgent: pair[0],
    toAgent: pair[1],
    data: {
      mentionId: id,
      threadId: `t-${id}`,
      targetAgentId: pair[1],
      attempts: n,
      maxAttempts: 3,
      elapsedMinutes: n * 5,
      ...(type === "a2a.mention.escalated" ? { notified: true } : {}),
    },
  } as A2AEvent;
}

/** The rotated file: flow 1 and two lines that are not events. */
function rotatedEvents(): A2AEvent[] {
  const f1 = flow("c1", ["ruda", "eden"], "question", T0);
  return [
    f1.send,
    retry(f1.env, T0 + 5 * S, "rate_limit", 1),
    retry(f1.env, T0 + 10 * S, "rate_limit", 2),
    firstResponse(f1.env, T0 + 20 * S, "ok", "question", 1),
    complete(f1.env, T0 + 40 * S, {
      retryAttempts: 2,
      messageIntent: "question",
      effectiveTurns: 1,
      actualTurns: 1,
      terminationReason: "max_turns",
      announced: true,
      announceSkipped: false,
    }),
  ];
}

function liveEvents(): A2AEvent[] {
  const f2 = flow("c2", ["ruda", "seum"], "collaboration", T0 + M);
  const f3 = flow("c3", ["ruda", "seum"], "question", T0 + 2 * M);
  const f4 = flow("c4", ["eden", "ruda"], "collaboration", T0 + 3 * M);
  const rs: Pair = ["ruda", "seum"];
  const re: Pair = ["ruda", "eden"];
  const es: Pair = ["eden", "seum"];
  const sent = (ts: number, pair: Pair, id: string) =>
    collab("a2a.collaborate.sent", ts, pair, id, { mentionId: id });
  const answered = (ts: number, pair: Pair, id: string) =>
    collab("a2a.collaborate.responded", ts, pair, id, { mentionId: id });
  return [
    f2.send,
    firstResponse(f2.env, T0 + M + 5 * S, "blocked", "collaboration", 5),
    complete(f2.env, T0 + M + 10 * S, {
      errorCode: "context_exceeded",
      errorCategory: "permanent",
      errorMessage: "too long",
      messageIntent: "collaboration",
      effectiveTurns: 5,
      actualTurns: 0,
    }),
    f3.send,
    retry(f3.env, T0 + 2 * M + 30 * S, "wait_timeout", 1),
    f4.send,
    firstResponse(f4.env, T0 + 3 * M + 10 * S, "ok", "collaboration", 5),
    complete(f4.env, T0 + 4 * M, {
      messageIntent: "collaboration",
      effectiveTurns: 5,
      actualTurns: 3,
      earlyTermination: true,
      terminationReason: "conclusion_detected",
      announceSkipReason: "announce_skip",
    }),
    collab("a2a.collaborate.requested", T0 + 5 * M, rs, "m1"),
    sent(T0 + 5 * M + 2 * S, rs, "m1"),
    answered(T0 + 5 * M + 92 * S, rs, "m1"),
    collab("a2a.collaborate.requested", T0 + 6 * M - S, re, "m2"),
    sent(T0 + 6 * M, re, "m2"),
    collab("a2a.collaborate.requested", T0 + 7 * M - S, rs, "m3"),
    sent(T0 + 7 * M, rs, "m3"),
    collab("a2a.collaborate.requested", T0 + 8 * M, re, "m4"),
    collab("a2a.collaborate.failed", T0 + 8 * M + S, re, "m4", { errorCode: "forbidden" }),
    collab("a2a.collaborate.requested", T0 + 9 * M - S, es, "m5"),
    sent(T0 + 9 * M, es, "m5"),
    answered(T0 + 9 * M + 30 * S, es, "m5"),
    mention("a2a.mention.reminded", T0 + 11 * M, re, "m2", 1),
    firstResponse(f3.env, T0 + 12 * M, "blocked", "question", 1),
    complete(f3.env, T0 + 12 * M, {
      retryAttempts: 1,
      errorCode: "wait_timeout",
      errorCategory: "transient",
      errorMessage: "no reply",
      messageIntent: "question",
      effectiveTurns: 1,
      actualTurns: 0,
    }),
    mention("a2a.mention.reminded", T0 + 12 * M, rs, "m3", 1),
    mention("a2a.mention.reminded", T0 + 16 * M, re, "m2", 2),
    mention("a2a.mention.reminded", T0 + 17 * M, rs, "m3", 2),
    answered(T0 + 18 * M, re, "m2"),
    mention("a2a.mention.escalated", T0 + 22 * M, rs, "m3", 3),
  ];
}

const lines = (events: A2AEvent[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

/** A state dir with a rotated file (two bad lines in it) and a live file ending in a torn line. */
function stateDir(): string {
  const dir = join(tempDir("a2a-stats-"), "state");
  mkdirSync(dir);
  const rotated = lines(rotatedEvents()).split("\n");
  rotated.splice(2, 0, "{not json", JSON.stringify({ type: "a2a.unknown", ts: T0, data: {} }));
  writeFileSync(join(dir, "coordination-events.ndjson.1"), rotated.join("\n"));
  writeFileSync(join(dir, "coordination-events.ndjson"), `${lines(liveEvents())}{"type":"a2a.send","ts":`);
  return dir;
}

async function report(...args: string[]): Promise<{ report: StatsReport; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runStats(
    ["--json", ...args],
    { out: (l) => out.push(l), err: (l) => err.push(l) },
    () => T0 + 30 * M,
  );
  expect(code, err.join("\n")).toBe(0);
  return { report: JSON.parse(out.join("\n")) as StatsReport, err: err.join("\n") };
}

describe("a2a-statecharts stats", () => {
  it("computes the dashboards' figures from the rotated and live logs, counting bad lines", async () => {
    const dir = stateDir();
    const { report: r, err } = await report("--state-dir", dir);
    expect(r.log).toMatchObject({
      events: 33,
      eventsTotal: 33,
      corrupt: 2,
      partial: 1,
      firstTs: T0,
      lastTs: T0 + 22 * M,
    });
    expect(r.log.files.map((f) => f.slice(dir.length + 1))).toEqual([
      "coordination-events.ndjson.1",
      "coordination-events.ndjson",
    ]);
    expect(r.log.problems.map((p) => [p.line, p.problem.split(" ")[0]])).toEqual([
      [3, "not"],
      [4, "not"],
      [29, "no"],
    ]);
    expect(err).toMatch(/skipped 2 corrupt lines and 1 partial one/);

    const t = r.totals;
    expect(t.retries).toEqual({
      total: 3,
      byCode: {
        rate_limit: { category: "transient", count: 2 },
        wait_timeout: { category: "transient", count: 1 },
      },
      byCategory: { transient: 3 },
      flowsRetried: 2,
      flowsRetriedOk: 1,
      successRate: 0.5,
    });
    expect(t.flows).toEqual({
      flows: 4,
      configured: 20,
      effective: 12,
      actual: 4,
      saved: 6,
      outcomes: { ok: 2, blocked: 1, timeout: 1 },
      meanActualTurns: 1,
      earlyTerminations: { total: 1, rate: 0.25, byReason: { conclusion_detected: 1 } },
      llmCalls: { actual: 8, baseline: 14, saved: 6 },
      announce: { run: 2, skipped: 3, skipRate: 0.75, skippedByReason: { blocked: 2, announce_skip: 1 } },
      meanMsPerTurn: 30_000,
      byIntent: {
        question: { flows: 2, configured: 10, effective: 2, actual: 1, saved: 4 },
        collaboration: { flows: 2, configured: 10, effective: 10, actual: 3, saved: 2 },
      },
    });
    expect(t.mentions).toMatchObject({
      requested: 5,
      sent: 4,
      responded: 3,
      reminders: 4,
      remindedMentions: 2,
      escalated: 1,
      failed: { total: 1, byCode: { forbidden: 1 } },
      latencyMs: { count: 3, p50: 90_000, p90: 720_000, max: 720_000 },
    });
    const histogram = t.mentions.latencyMs.histogram.filter((b) => b.count > 0);
    expect(histogram).toEqual([
      { fromMs: 30_000, toMs: 60_000, count: 1 },
      { fromMs: 60_000, toMs: 120_000, count: 1 },
      { fromMs: 600_000, toMs: 900_000, count: 1 },
    ]);
    expect(t.channels).toEqual({ discordSend: 5, sessionsSend: 4, discordShare: 5 / 9 });
  });

  it("splits the figures by the agent asked and by pair", async () => {
    const { report: r } = await report("--state-dir", stateDir());
    expect(Object.keys(r.byAgent)).toEqual(["eden", "ruda", "seum"]);
    expect(Object.keys(r.byPair)).toEqual(["eden→ruda", "eden→seum", "ruda→eden", "ruda→seum"]);
    const seum = r.byAgent.seum;
    expect(seum?.flows.outcomes).toEqual({ ok: 0, blocked: 1, timeout: 1 });
    expect(seum?.mentions).toMatchObject({ sent: 3, responded: 2, reminders: 2, escalated: 1 });
    expect(seum?.mentions.latencyMs).toMatchObject({ p50: 30_000, max: 90_000 });
    expect(r.byAgent.eden?.retries.total).toBe(2);
    expect(r.byAgent.eden?.mentions.failed).toEqual({ total: 1, byCode: { forbidden: 1 } });
    expect(r.byPair["ruda→seum"]?.channels).toEqual({ discordSend: 2, sessionsSend: 2, discordShare: 0.5 });
    expect(r.byPair["eden→ruda"]?.flows).toMatchObject({
      flows: 1,
      saved: 2,
      earlyTerminations: { total: 1 },
    });
  });

  it("draws mention outcomes over time in minute buckets", async () => {
    const { report: r } = await report("--state-dir", stateDir());
    expect(r.timeline.bucketMs).toBe(M);
    expect(r.timeline.buckets).toHaveLength(23);
    const at = (minute: number) => r.timeline.buckets[minute];
    expect(at(5)).toMatchObject({ start: T0 + 5 * M, sent: 1, responded: 0 });
    expect(at(6)).toMatchObject({ sent: 1, responded: 1 });
    expect(at(8)).toMatchObject({ failed: 1 });
    expect(at(22)).toMatchObject({ escalated: 1 });
    const sum = (key: "sent" | "responded" | "reminded" | "escalated" | "failed") =>
      r.timeline.buckets.reduce((n, b) => n + b[key], 0);
    expect([sum("sent"), sum("responded"), sum("reminded"), sum("escalated"), sum("failed")]).toEqual([
      4, 3, 4, 1, 1,
    ]);
  });

  it("--since takes an ISO time or a duration back from now, and keeps a flow whose start it cut off", async () => {
    const dir = stateDir();
    const iso = await report("--state-dir", dir, "--since", "2026-05-01T09:05:00Z");
    const duration = await report("--state-dir", dir, "--since", "25m");
    for (const { report: r } of [iso, duration]) {
      expect(r.since).toBe(T0 + 5 * M);
      expect(r.log).toMatchObject({ events: 20, eventsTotal: 33, firstTs: T0 + 5 * M });
      // Flow 3's send and retry are before the window, its end in it: one timeout, no retry counted.
      expect(r.totals.flows.outcomes).toEqual({ ok: 0, blocked: 0, timeout: 1 });
      expect(r.totals.retries).toMatchObject({ total: 0, flowsRetried: 1, flowsRetriedOk: 0 });
      expect(r.totals.channels).toEqual({ discordSend: 5, sessionsSend: 0, discordShare: 1 });
    }
  });

  it("prints the figures as text, with the log's problems on stderr", async () => {
    const { code, out, err } = await runCli("stats", "--state-dir", stateDir());
    expect(code).toBe(0);
    expect(out).toMatch(/^33 events, 2026-05-01T09:00:00Z to 2026-05-01T09:22:00Z \(22m\)/);
    expect(out).toContain("sessions_send flows: 4 (ok 2, blocked 1, timeout 1)");
    expect(out).toContain("LLM calls: 8 of 14 at a fixed maxPingPongTurns (saved 6)");
    expect(out).toMatch(/retries: 3 \(transient 3\); flows retried 2, ended ok 1 \(success rate 50%\)/);
    expect(out).toContain("p50 1m 30s, p90 12m, max 12m");
    expect(out).toContain("discord_send share 56%");
    expect(out).toMatch(/^ruda→seum +2 +0 +1 +1 +1 +0 +2 +1 +2 +1 +0 +1m 30s/m);
    expect(err).toMatch(/coordination-events\.ndjson\.1:3: not JSON/);
    expect(err).toMatch(/coordination-events\.ndjson:29: no newline at the end/);
  });

  it("--json prints one object with the documented keys", async () => {
    const { report: r } = await report("--state-dir", stateDir());
    expect(Object.keys(r)).toEqual([
      "stateDir",
      "generatedAt",
      "generatedAtIso",
      "since",
      "sinceIso",
      "log",
      "totals",
      "byAgent",
      "byPair",
      "timeline",
    ]);
    expect(Object.keys(r.totals)).toEqual(["retries", "flows", "mentions", "channels"]);
    expect(r.generatedAt).toBe(T0 + 30 * M);
  });

  it("--html writes a page with no outside resources", async () => {
    const file = join(tempDir("a2a-stats-html-"), "stats.html");
    const { code, out } = await runCli("stats", "--state-dir", stateDir(), "--html", file);
    expect(code).toBe(0);
    expect(out).toContain(`wrote ${file}`);
    const html = readFileSync(file, "utf8");
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'`);
    expect(html).not.toMatch(/<script|\bsrc=|href=|url\(|@import/i);
    for (const chart of ["latency", "timeline", "turns", "outcomes"])
      expect(html).toContain(`data-chart="${chart}"`);
    expect(html).toContain('<b data-stat="turnsSaved">6</b>');
  });

  it("reads beside a runtime: no lock taken, and a log the runtime's EventLog is appending to", async () => {
    const dir = join(tempDir("a2a-stats-"), "state");
    const lock = await acquireStateDirLock(dir);
    const log = await EventLog.open({ dir, onWarning: () => {} });
    try {
      for (const event of liveEvents().slice(0, 3)) await log.append(event);
      const first = await report("--state-dir", dir);
      expect(first.report.totals.flows.outcomes).toEqual({ ok: 0, blocked: 1, timeout: 0 });
      await log.append(liveEvents()[3] as A2AEvent);
      const second = await report("--state-dir", dir);
      expect(second.report.log).toMatchObject({ events: 4, corrupt: 0, partial: 0 });
      expect(second.report.totals.channels.sessionsSend).toBe(2);
    } finally {
      await log.close();
      await lock.release();
    }
  });

  it("reports an empty state dir and an empty window without failing", async () => {
    const empty = join(tempDir("a2a-stats-"), "state");
    mkdirSync(empty);
    const none = await runCli("stats", "--state-dir", empty);
    expect(none).toMatchObject({ code: 0, err: "" });
    expect(none.out).toMatch(/^no event log in .*state yet/);
    const later = await runCli("stats", "--state-dir", stateDir(), "--since", "2030-01-01");
    expect(later.code).toBe(0);
    expect(later.out).toMatch(/^no events since 2030-01-01T00:00:00.000Z \(33 in the whole log\)/);
  });

  it("--html shows what it has no data for, and escapes the names it got from the log", async () => {
    const dir = join(tempDir("a2a-stats-"), "state");
    mkdirSync(dir);
    const odd = "<img src=x onerror=alert(1)>";
    writeFileSync(
      join(dir, "coordination-events.ndjson"),
      lines([collab("a2a.collaborate.requested", T0, ["ruda", odd], "m1")]),
    );
    const file = join(tempDir("a2a-stats-html-"), "stats.html");
    const { code } = await runCli("stats", "--state-dir", dir, "--html", file);
    expect(code).toBe(0);
    const html = readFileSync(file, "utf8");
    expect(html).not.toContain(odd);
    expect(html).toContain("&#60;img src=x onerror=alert(1)&#62;");
    expect(html).toContain("No mention was answered in this window.");
    expect(html).toContain("No sessions_send flow completed in this window.");
    expect(html).not.toContain("<rect");
  });

  it("rejects bad input with one line: exit 2 for usage, 1 for a missing state dir", async () => {
    const dir = stateDir();
    const cases: Array<[string[], number, RegExp]> = [
      [["--bogus"], 2, /^a2a-statecharts stats: Unknown option '--bogus' \(see --help\)$/],
      [
        ["--state-dir", dir, "--since", "yesterday"],
        2,
        /--since needs an ISO time .* got "yesterday" \(see --help\)$/,
      ],
      [["--state-dir", dir, "--since", "5x"], 2, /--since needs/],
      [["--state-dir", ""], 2, /--state-dir needs a directory/],
      [["--state-dir", dir, "--html", ""], 2, /--html needs a file/],
      [["--state-dir", join(dir, "missing")], 1, /state directory .*missing does not exist/],
      [["--state-dir", join(dir, "coordination-events.ndjson")], 1, /is not a directory$/],
      [["--state-dir", dir, "--html", join(dir, "no", "such", "x.html")], 1, /cannot write .*x\.html/],
    ];
    for (const [args, code, message] of cases) {
      const result = await runCli("stats", ...args);
      expect([result.code, result.out], args.join(" ")).toEqual([code, ""]);
      expect(result.err.split("\n"), args.join(" ")).toHaveLength(1);
      expect(result.err, args.join(" ")).toMatch(message);
    }
    const help = await runCli("stats", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^a2a-statecharts stats — /);
  });
});
