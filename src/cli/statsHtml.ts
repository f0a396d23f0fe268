import { barChart, columnChart, escapeHtml, type Series } from "./statsCharts.js";
import type { StatsFigures } from "./statsFigures.js";
import type { StatsReport } from "./statsReport.js";
import { GROUP_COLUMNS, groupCells, iso, ms, pct, retryRows } from "./statsText.js";

// The `stats --html` page: one self-contained file, no script, no network (its CSP allows inline
// styles only), so it opens anywhere, also from an attachment or a CI artifact.

const COLORS = {
  ok: "#2e7d32",
  responded: "#2e7d32",
  sent: "#90a4ae",
  reminded: "#f9a825",
  escalated: "#ef6c00",
  failed: "#c62828",
  actual: "#5c6bc0",
  saved: "#66bb6a",
  latency: "#1e88e5",
};

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:16px 24px}header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#c5cad3}
main{padding:16px 24px;max-width:1400px}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:12px;margin-bottom:16px}
.tile{background:#fff;border-radius:8px;padding:12px 14px;box-shadow:0 1px 2px #0002}
.tile b{display:block;font-size:26px}.tile span{color:#5b6472;font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:16px}
.chart{background:#fff;border-radius:8px;padding:12px 14px;margin:0;box-shadow:0 1px 2px #0002}
.chart figcaption{font-weight:600;margin-bottom:6px}.chart svg{max-width:100%;height:auto}
.chart .grid{stroke:#e3e6ea}.chart text{font-size:12px;fill:#5b6472}.chart .total{fill:#1d2330;font-weight:600}
.chart .inside{fill:#fff;font-weight:600}.none{color:#5b6472}
.legend{display:flex;gap:14px;flex-wrap:wrap;font-size:12px;color:#5b6472;margin-top:4px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px}
section{background:#fff;border-radius:8px;padding:12px 14px;margin-top:16px;box-shadow:0 1px 2px #0002;overflow-x:auto}
h2{font-size:16px;margin:0 0 8px}table{border-collapse:collapse;font-size:13px}
th,td{padding:4px 7px;text-align:right;border-bottom:1px solid #eceef1;white-space:nowrap}
th:first-child,td:first-child{text-align:left}th{color:#5b6472;font-weight:600}
.warn{background:#fff4e5;border:1px solid #f9a825;border-radius:8px;padding:8px 12px;margin-bottom:16px}`;

export function renderStatsHtml(report: StatsReport): string {
  const t = report.totals;
  const window =
    report.log.firstTs === null || report.log.lastTs === null
      ? "no events"
      : `${report.log.events} events, ${iso(report.log.firstTs)} to ${iso(report.log.lastTs)}`;
  const since = report.sinceIso === null ? "" : ` · since ${iso(report.since ?? 0)}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>a2a-statecharts stats</title><style>${CSS}</style></head>
<body><header><h1>a2a-statecharts stats</h1><p>${escapeHtml(`${window}${since} · ${report.stateDir} · made ${iso(report.generatedAt)}`)}</p></header>
<main>${warnings(report)}
<div class="tiles">${tiles(t)}</div>
<div class="charts">
${latencyChart(t)}
${timelineChart(report)}
${turnsChart(t)}
${outcomeChart(t)}
</div>
${retriesTable(t)}
${groupSection("By agent asked", "by-agent", report.byAgent)}
${groupSection("By pair (requester → agent asked)", "by-pair", report.byPair)}
</main></body></html>
`;
}

function tiles(t: StatsFigures): string {
  const tile = (key: string, value: string, label: string) =>
    `<div class="tile"><b data-stat="${key}">${escapeHtml(value)}</b><span>${escapeHtml(label)}</span></div>`;
  return [
    tile("flows", String(t.flows.flows), "sessions_send flows"),
    tile("turnsSaved", String(t.flows.saved), "ping-pong turns saved"),
    tile(
      "llmCallsSaved",
      String(t.flows.llmCalls.saved),
      `LLM calls saved (${t.flows.llmCalls.actual} of ${t.flows.llmCalls.baseline})`,
    ),
    tile("retries", String(t.retries.total), `retries · success rate ${pct(t.retries.successRate)}`),
    tile("mentions", String(t.mentions.sent), "discord_send mentions posted"),
    tile("responded", String(t.mentions.responded), "mentions answered"),
    tile("escalated", String(t.mentions.escalated), `escalated · ${t.mentions.reminders} reminders`),
    tile("p50", ms(t.mentions.latencyMs.p50), `response latency p50 (p90 ${ms(t.mentions.latencyMs.p90)})`),
    tile(
      "discordShare",
      pct(t.channels.discordShare),
      `discord_send share (${t.channels.discordSend} vs ${t.channels.sessionsSend} sessions_send)`,
    ),
  ].join("");
}

function latencyChart(t: StatsFigures): string {
  const h = t.mentions.latencyMs.histogram;
  return columnChart(
    {
      id: "latency",
      title: `Response latency: mention posted → answered (${t.mentions.latencyMs.count} answers)`,
      labels: h.map((b) => (b.toMs === null ? `≥ ${ms(b.fromMs)}` : `< ${ms(b.toMs)}`)),
      series: [{ name: "answers", color: COLORS.latency, values: h.map((b) => b.count) }],
      empty: "No mention was answered in this window.",
    },
    { labelEvery: 1 },
  );
}

function timelineChart(report: StatsReport): string {
  const buckets = report.timeline.buckets;
  const series = (name: keyof typeof COLORS & keyof (typeof buckets)[number]): Series => ({
    name,
    color: COLORS[name],
    values: buckets.map((b) => b[name]),
  });
  return columnChart({
    id: "timeline",
    title: `Mention outcomes over time (per ${ms(report.timeline.bucketMs)}, UTC)`,
    labels: buckets.map((b) => clock(b.start, report.timeline.bucketMs)),
    series: [series("sent"), series("responded"), series("reminded"), series("escalated"), series("failed")],
    empty: "No discord_send mention in this window.",
  });
}

function turnsChart(t: StatsFigures): string {
  const intents = Object.entries(t.flows.byIntent);
  return barChart({
    id: "turns",
    title: "Ping-pong turns by intent: run and saved against the configured maximum",
    labels: intents.map(([intent, x]) => `${intent} (${x.flows})`),
    series: [
      { name: "turns run", color: COLORS.actual, values: intents.map(([, x]) => x.actual) },
      { name: "turns saved", color: COLORS.saved, values: intents.map(([, x]) => x.saved) },
    ],
    empty: "No sessions_send flow completed in this window.",
  });
}

function outcomeChart(t: StatsFigures): string {
  const o = t.flows.outcomes;
  const m = t.mentions;
  return barChart({
    id: "outcomes",
    title: "Outcomes",
    labels: ["sessions_send", "discord_send"],
    series: [
      { name: "ok / answered", color: COLORS.ok, values: [o.ok, m.responded] },
      { name: "blocked / escalated", color: COLORS.escalated, values: [o.blocked, m.escalated] },
      { name: "timeout / failed", color: COLORS.failed, values: [o.timeout, m.failed.total] },
    ],
    empty: "No flow or mention ended in this window.",
  });
}

function retriesTable(t: StatsFigures): string {
  const rows = retryRows(t);
  const reasons = Object.entries(t.flows.earlyTerminations.byReason).map(([k, n]) => [k, String(n)]);
  const skips = Object.entries(t.flows.announce.skippedByReason).map(([k, n]) => [k, String(n)]);
  return `<section id="retries"><h2>Retries by error code (${t.retries.total}; flows retried ${t.retries.flowsRetried}, ended ok ${t.retries.flowsRetriedOk})</h2>
${table(["Error code", "Category", "Retries"], rows, "No retry in this window.")}
<h2 style="margin-top:12px">Early terminations (${t.flows.earlyTerminations.total}) and skipped announcements (${t.flows.announce.skipped} of ${t.flows.flows})</h2>
${table(["Termination reason", "Flows"], reasons, "No early termination.")}
${table(["Announce skipped because", "Flows"], skips, "No announcement skipped.")}</section>`;
}

function groupSection(title: string, id: string, groups: Record<string, StatsFigures>): string {
  const rows = Object.entries(groups).map(([key, g]) => [key, ...groupCells(g)]);
  const head = ["", ...GROUP_COLUMNS.map((c) => c.charAt(0) + c.slice(1).toLowerCase())];
  return `<section id="${id}"><h2>${escapeHtml(title)}</h2>${table(head, rows, "No events.")}</section>`;
}

function table(head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="none">${escapeHtml(empty)}</p>`;
  const cells = (row: string[], tag: "th" | "td") =>
    row.map((c) => `<${tag}>${escapeHtml(c)}</${tag}>`).join("");
  return `<table><thead><tr>${cells(head, "th")}</tr></thead><tbody>${rows.map((row) => `<tr>${cells(row, "td")}</tr>`).join("")}</tbody></table>`;
}

function warnings(report: StatsReport): string {
  const { corrupt, partial } = report.log;
  if (corrupt + partial === 0) return "";
  return `<p class="warn">${corrupt} corrupt and ${partial} partial line(s) of the event log were left out.</p>`;
}

/** A bucket's start: HH:MM within a day, the date for day buckets or wider. */
function clock(ts: number, bucketMs: number): string {
  const text = new Date(ts).toISOString();
  return bucketMs >= 86_400_000 ? text.slice(5, 10) : text.slice(11, 16);
}
