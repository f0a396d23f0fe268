import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { type CliIO, firstLine, readCommandLine, stateDirOf, UsageError } from "./io.js";
import { renderStatsHtml } from "./statsHtml.js";
import { StateDirNotFoundError } from "../persistence/index.js";
import { readEventLog } from "./statsRead.js";
import { buildReport, parseSince, type StatsReport } from "./statsReport.js";
import { logWarnings, printStats } from "./statsText.js";

export type { StatsReport } from "./statsReport.js";

export const STATS_HELP = `a2a-statecharts stats — figures from a state directory's event log (read-only)

Usage:
  a2a-statecharts stats [--state-dir DIR] [--since TIME] [--json] [--html FILE]

Options:
  -d, --state-dir DIR   the runtime's state directory (default .a2a-state)
      --since TIME      only events from TIME on: an ISO time (2026-05-01T09:00:00Z; without Z
                        or an offset, a time of day is local) or a duration back from now
                        (30m, 24h, 7d, 2w)
      --json            print one JSON document (its keys are described in docs/stats.md)
      --html FILE       also write a self-contained page with charts to FILE (works offline)
  -h, --help            show this help

Reads coordination-events.ndjson and its rotated files: sessions_send flows (outcomes, turns,
early terminations, LLM calls saved, announcements, by intent), reply-wait retries by error
code, discord_send mentions (responded, reminded, escalated, failed, response latency) and the
discord_send / sessions_send ratio; in total, by agent asked and by pair.
It takes no lock, so it works beside a running gateway. Corrupt or partial lines are reported
and left out. Exit status: 0 done, 1 the directory is missing or unreadable, 2 bad usage.`;

const STATS_OPTIONS = {
  "state-dir": { type: "string", short: "d" },
  since: { type: "string" },
  json: { type: "boolean" },
  html: { type: "string" },
} as const;

/** `a2a-statecharts stats`: the event log's figures as text, JSON and/or HTML. `now` is injected for tests. */
export async function runStats(argv: string[], io: CliIO, now: () => number = Date.now): Promise<number> {
  const at = now();
  const flags = readCommandLine(io, "stats", STATS_HELP, argv, STATS_OPTIONS, ({ values }) => {
    const dir = stateDirOf(values);
    if (values.html?.trim() === "") throw new UsageError("--html needs a file, got an empty string");
    return { ...values, dir, since: values.since === undefined ? null : parseSince(values.since, at) };
  });
  if (typeof flags === "number") return flags;
  const { dir, since, html, json } = flags;

  let report: StatsReport;
  try {
    report = buildReport(await readEventLog(dir), at, since);
  } catch (error) {
    io.err(
      error instanceof StateDirNotFoundError
        ? `a2a-statecharts stats: ${error.message}`
        : `a2a-statecharts stats: cannot read the event log in ${dir}: ${firstLine(error)}`,
    );
    return 1;
  }
  if (html !== undefined) {
    const file = resolve(html);
    try {
      await writeFile(file, renderStatsHtml(report));
    } catch (error) {
      io.err(`a2a-statecharts stats: cannot write ${file}: ${firstLine(error)}`);
      return 1;
    }
  }
  for (const line of logWarnings(report)) io.err(line);
  if (json) io.out(JSON.stringify(report, null, 2));
  else printStats(report, io);
  // With --json, stdout is the document alone.
  if (html !== undefined) (json ? io.err : io.out)(`wrote ${resolve(html)}`);
  return 0;
}
