import type { CliIO } from "./io.js";
import type { StatsFigures } from "./statsFigures.js";
import type { StatsReport } from "./statsReport.js";
import { alignColumns, formatDuration } from "./textTable.js";

// `stats` for a person at a terminal: the totals by section, then one row per agent and per pair.

export function printStats(report: StatsReport, io: CliIO): void {
  io.out(headline(report));
  if (report.log.events === 0) return;
  const t = report.totals;
  const out = (lines: string[]) => lines.forEach((line) => io.out(line));
  out(["", ...flowLines(t)]);
  out(["", ...retryLines(t)]);
  out(["", ...mentionLines(t)]);
  out([
    "",
    `channels: discord_send ${t.channels.discordSend} · sessions_send ${t.channels.sessionsSend} · discord_send share ${pct(t.channels.discordShare)}`,
  ]);
  out(["", "by agent asked:", ...alignColumns(groupTable("AGENT", report.byAgent))]);
  out(["", "by pair:", ...alignColumns(groupTable("PAIR", report.byPair))]);
}

/** The log's problems, one line each, for stderr. */
export function logWarnings(report: StatsReport): string[] {
  const { corrupt, partial, problems } = report.log;
  const lines = problems.map((p) => `warning: ${p.file}:${p.line}: ${p.problem}`);
  const skipped = corrupt + partial;
  if (skipped > problems.length) lines.push(`warning: … and ${skipped - problems.length} more`);
  if (skipped > 0) {
    lines.push(
      `warning: skipped ${corrupt} corrupt line${corrupt === 1 ? "" : "s"} and ${partial} partial one${partial === 1 ? "" : "s"}; the figures leave them out`,
    );
  }
  return lines;
}

function headline(report: StatsReport): string {
  const { events, eventsTotal, firstTs, lastTs, files } = report.log;
  const window =
    report.sinceIso === null ? "" : ` since ${report.sinceIso} (${eventsTotal} in the whole log)`;
  if (files.length === 0) return `no event log in ${report.stateDir} yet (coordination-events.ndjson)`;
  if (events === 0 || firstTs === null || lastTs === null) return `no events${window} in ${report.stateDir}`;
  return (
    `${events} event${events === 1 ? "" : "s"}${window}, ${iso(firstTs)} to ${iso(lastTs)} ` +
    `(${formatDuration(lastTs - firstTs)}) · state dir ${report.stateDir}`
  );
}

function flowLines(t: StatsFigures): string[] {
  const f = t.flows;
  const lines = [
    `sessions_send flows: ${f.flows} (ok ${f.outcomes.ok}, blocked ${f.outcomes.blocked}, timeout ${f.outcomes.timeout})`,
  ];
  if (f.flows === 0) return lines;
  lines.push(
    `  turns: configured ${f.configured}, effective ${f.effective}, actual ${f.actual} (mean ${num(f.meanActualTurns)}); saved ${f.saved}`,
    `  LLM calls: ${f.llmCalls.actual} of ${f.llmCalls.baseline} at a fixed maxPingPongTurns (saved ${f.llmCalls.saved})`,
    `  early terminations: ${f.earlyTerminations.total} (${pct(f.earlyTerminations.rate)})${counts(f.earlyTerminations.byReason)}`,
    `  announce: run ${f.announce.run}, skipped ${f.announce.skipped} (${pct(f.announce.skipRate)})${counts(f.announce.skippedByReason)}`,
    `  time per turn: ${f.meanMsPerTurn === null ? "-" : ms(f.meanMsPerTurn)}`,
    "  by intent:",
    ...alignColumns([
      ["INTENT", "FLOWS", "CONFIGURED", "EFFECTIVE", "ACTUAL", "SAVED"],
      ...Object.entries(f.byIntent).map(([intent, x]) => [
        intent,
        String(x.flows),
        String(x.configured),
        String(x.effective),
        String(x.actual),
        String(x.saved),
      ]),
    ]).map((line) => `    ${line}`),
  );
  return lines;
}

function retryLines(t: StatsFigures): string[] {
  const r = t.retries;
  const lines = [
    `retries: ${r.total}${counts(r.byCategory)}; flows retried ${r.flowsRetried}, ended ok ${r.flowsRetriedOk} (success rate ${pct(r.successRate)})`,
  ];
  if (r.total === 0) return lines;
  return [
    ...lines,
    ...alignColumns([["ERROR CODE", "CATEGORY", "RETRIES"], ...retryRows(t)]).map((l) => `    ${l}`),
  ];
}

/** Retries by error code, the most frequent first: code, category, count. */
export function retryRows(t: StatsFigures): string[][] {
  return Object.entries(t.retries.byCode)
    .sort((a, b) => b[1].count - a[1].count || a[0].localeCompare(b[0]))
    .map(([code, x]) => [code, x.category, String(x.count)]);
}

function mentionLines(t: StatsFigures): string[] {
  const m = t.mentions;
  const l = m.latencyMs;
  return [
    `discord_send collaborations: ${m.requested} requested, ${m.sent} mentions posted, ${m.responded} responded, ` +
      `${m.reminders} reminders (${m.remindedMentions} mentions), ${m.escalated} escalated, ${m.failed.total} failed${counts(m.failed.byCode)}`,
    `  response latency (mention posted → answered, ${l.count}): ` +
      (l.count === 0 ? "-" : `p50 ${ms(l.p50)}, p90 ${ms(l.p90)}, max ${ms(l.max)}`),
  ];
}

/** The columns of the per-agent and per-pair tables, after the group's name. */
export const GROUP_COLUMNS = [
  "FLOWS",
  "OK",
  "BLOCKED",
  "TIMEOUT",
  "RETRIES",
  "TURNS SAVED",
  "MENTIONS",
  "ANSWERED",
  "REMINDERS",
  "ESCALATED",
  "FAILED",
  "P50",
  "P90",
  "MAX",
  "DISCORD SHARE",
];

/** One group's cells under GROUP_COLUMNS. */
export function groupCells(g: StatsFigures): string[] {
  const latency = g.mentions.latencyMs;
  return [
    ...[g.flows.flows, g.flows.outcomes.ok, g.flows.outcomes.blocked, g.flows.outcomes.timeout].map(String),
    ...[g.retries.total, g.flows.saved, g.mentions.sent, g.mentions.responded].map(String),
    ...[g.mentions.reminders, g.mentions.escalated, g.mentions.failed.total].map(String),
    ms(latency.p50),
    ms(latency.p90),
    ms(latency.max),
    pct(g.channels.discordShare),
  ];
}

function groupTable(title: string, groups: Record<string, StatsFigures>): string[][] {
  return [[title, ...GROUP_COLUMNS], ...Object.entries(groups).map(([key, g]) => [key, ...groupCells(g)])];
}

/** ` (a 2, b 1)`, or "" for no counts. */
function counts(byKey: Record<string, number>): string {
  const entries = Object.entries(byKey).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return entries.length === 0 ? "" : ` (${entries.map(([k, n]) => `${k} ${n}`).join(", ")})`;
}

/** A share as a whole percentage; "-" when there was nothing to share. */
export function pct(share: number | null): string {
  return share === null ? "-" : `${Math.round(share * 100)}%`;
}

/** Milliseconds for a person: `850ms` below a second, else `formatDuration`. */
export function ms(value: number | null): string {
  if (value === null) return "-";
  return value < 1_000 ? `${Math.round(value)}ms` : formatDuration(value);
}

function num(value: number | null): string {
  return value === null ? "-" : String(Math.round(value * 100) / 100);
}

/** An ISO time to the second. */
export function iso(ts: number): string {
  return new Date(ts).toISOString().replace(/\.\d{3}Z$/, "Z");
}
