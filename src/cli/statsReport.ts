import type { A2AEvent } from "../policies/index.js";
import { computeFigures, type StatsFigures } from "./statsFigures.js";
import type { EventLogReading } from "./statsRead.js";

/** What `stats --json` prints: one object, keys in this order (docs/stats.md describes each). */
export type StatsReport = ReturnType<typeof buildReport>;

/** Bucket sizes for the timeline, smallest first: the first that gives at most MAX_BUCKETS is used. */
const BUCKET_SIZES_MS = [60_000, 300_000, 900_000, 3_600_000, 21_600_000, 86_400_000, 604_800_000];
const MAX_BUCKETS = 40;

export function buildReport(reading: EventLogReading, now: number, since: number | null) {
  const events = since === null ? reading.events : reading.events.filter((e) => e.ts >= since);
  return {
    stateDir: reading.stateDir,
    generatedAt: now,
    generatedAtIso: new Date(now).toISOString(),
    since,
    sinceIso: since === null ? null : new Date(since).toISOString(),
    log: {
      files: reading.files,
      events: events.length,
      eventsTotal: reading.events.length,
      corrupt: reading.corrupt,
      partial: reading.partial,
      problems: reading.problems,
      firstTs: events[0]?.ts ?? null,
      lastTs: events.at(-1)?.ts ?? null,
    },
    totals: computeFigures(events),
    byAgent: groupFigures(events, (e) => e.toAgent),
    byPair: groupFigures(events, ({ fromAgent: from, toAgent: to }) =>
      from === undefined || to === undefined ? undefined : `${from}→${to}`,
    ),
    timeline: timeline(events),
  };
}

function groupFigures(
  events: readonly A2AEvent[],
  keyOf: (e: A2AEvent) => string | undefined,
): Record<string, StatsFigures> {
  const groups = new Map<string, A2AEvent[]>();
  for (const e of events) {
    const key = keyOf(e);
    if (key === undefined) continue;
    const list = groups.get(key) ?? [];
    list.push(e);
    groups.set(key, list);
  }
  const out: Record<string, StatsFigures> = {};
  for (const key of [...groups.keys()].sort()) out[key] = computeFigures(groups.get(key) ?? []);
  return out;
}

/** Mention outcomes over time, in buckets of the smallest size that gives at most MAX_BUCKETS. */
function timeline(events: readonly A2AEvent[]) {
  const first = events[0]?.ts;
  const last = events.at(-1)?.ts;
  if (first === undefined || last === undefined)
    return { bucketMs: BUCKET_SIZES_MS[0] ?? 60_000, buckets: [] };
  const bucketMs =
    BUCKET_SIZES_MS.find((size) => Math.floor(last / size) - Math.floor(first / size) < MAX_BUCKETS) ??
    (BUCKET_SIZES_MS.at(-1) as number);
  const start = Math.floor(first / bucketMs) * bucketMs;
  const count = Math.floor((last - start) / bucketMs) + 1;
  const buckets = Array.from({ length: count }, (_, i) => {
    const at = start + i * bucketMs;
    return {
      start: at,
      startIso: new Date(at).toISOString(),
      sent: 0,
      responded: 0,
      reminded: 0,
      escalated: 0,
      failed: 0,
    };
  });
  const field: Partial<Record<A2AEvent["type"], "sent" | "responded" | "reminded" | "escalated" | "failed">> =
    {
      "a2a.collaborate.sent": "sent",
      "a2a.collaborate.responded": "responded",
      "a2a.mention.reminded": "reminded",
      "a2a.mention.escalated": "escalated",
      "a2a.collaborate.failed": "failed",
    };
  for (const e of events) {
    const key = field[e.type];
    const bucket = buckets[Math.floor((e.ts - start) / bucketMs)];
    if (key !== undefined && bucket !== undefined) bucket[key] += 1;
  }
  return { bucketMs, buckets };
}

const DURATION = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `--since`: an ISO date/time, or a duration back from now (`30m`, `24h`, `7d`, `2w`). */
export function parseSince(text: string, now: number): number {
  const duration = DURATION.exec(text.trim());
  if (duration !== null) return now - Number(duration[1]) * (UNIT_MS[duration[2] ?? ""] ?? 0);
  // Date.parse accepts odd forms ("1", "May"); insist on an ISO date first.
  const at = /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new Error(
      `--since needs an ISO time (2026-05-01, 2026-05-01T09:00:00Z) or a duration (30m, 24h, 7d, 2w), got ${JSON.stringify(text)}`,
    );
  }
  return at;
}
