// The rows `status` shows for persisted actors, whichever store holds them, and their table cells.
import type { StoredActor } from "../persistence/index.js";
import { eventLabel } from "../machines/index.js";
import { DISCORD_TRANSIENT_MAX_RETRIES } from "../policies/index.js";
import { alignedLines, formatDuration } from "./textTable.js";

/**
 * What an actor counts, of its limit when known: a mention's deliveries ("mention": the mention is 1,
 * each reminder adds 1), a flow's reply-wait retries ("retries"), a Discord send's retries ("send retries").
 */
export interface ActorAttempts {
  kind: "mention" | "retries" | "send retries";
  count: number;
  max?: number;
}

/** One row of `status`, as `--json` prints it (times in ms since the epoch and as ISO strings). */
export type ActorStatusRow = ReturnType<typeof toRow>;

/** A stored actor as a row, its times measured from `now`. */
export function toRow({ record, file, location, problem }: StoredActor, now: number) {
  const snapshot = asObject(record.snapshot);
  const startedAt = asNumber(asObject(snapshot?.context)?.startedAt);
  const timers = record.status === "active" ? waitsOf(record) : [];
  const first = timers[0];
  return {
    id: record.id,
    machine: record.machineId,
    state: stateText(snapshot),
    status: record.status,
    location,
    attempts: attemptsOf(record.machineId, snapshot),
    // The earliest wait of an active actor (`after responseTimeout`, or the delayed event's type); `timers` counts them.
    nextDue:
      first === undefined
        ? null
        : {
            event: first.event,
            at: first.dueAt,
            atIso: new Date(first.dueAt).toISOString(),
            inMs: first.dueAt - now,
            timers: timers.length,
          },
    startedAt: startedAt ?? null, // its context's `startedAt`, when known
    updatedAt: record.updatedAt,
    ageMs: now - (startedAt ?? record.updatedAt),
    ageFrom: startedAt === undefined ? ("updatedAt" as const) : ("startedAt" as const),
    file,
    ...(problem === undefined ? {} : { problem }),
  };
}

/** A record's XState delays, earliest first. */
function waitsOf(record: StoredActor["record"]): Array<{ event: string; dueAt: number }> {
  return (record.delayed ?? [])
    .map((d) => ({ event: eventLabel(d.event.type), dueAt: d.dueAt }))
    .sort((a, b) => a.dueAt - b.dueAt);
}

/** Active first, by next due time then age; then finished ones, latest first. */
export function byUrgency(a: ActorStatusRow, b: ActorStatusRow): number {
  const activeA = a.status === "active" ? 0 : 1;
  const activeB = b.status === "active" ? 0 : 1;
  if (activeA !== activeB) return activeA - activeB;
  if (activeA === 0) {
    const dueA = a.nextDue?.at ?? Number.POSITIVE_INFINITY;
    const dueB = b.nextDue?.at ?? Number.POSITIVE_INFINITY;
    if (dueA !== dueB) return dueA < dueB ? -1 : 1;
    return (a.startedAt ?? a.updatedAt) - (b.startedAt ?? b.updatedAt) || a.id.localeCompare(b.id);
  }
  return b.updatedAt - a.updatedAt || a.id.localeCompare(b.id);
}

// ---- reading persisted snapshots (JSON of getPersistedSnapshot(): { status, value, context, children }) ----

/** `value` flattened, then each active child's state: `awaitingResponse > mention:pending`. */
export function stateText(snapshot: Record<string, unknown> | undefined): string {
  if (snapshot === undefined) return "?";
  const parts = [valueText(snapshot.value)];
  for (const [childId, child] of activeChildren(snapshot)) parts.push(`${childId}:${stateText(child)}`);
  return parts.join(" > ");
}

/** An XState state value as dotted paths; parallel regions joined by ` + `: `a.b`, `p.x.one + p.y.two`. */
export function valueText(value: unknown): string {
  const paths = valuePaths(value);
  return paths.length === 0 ? "?" : paths.join(" + ");
}

function valuePaths(value: unknown): string[] {
  if (typeof value === "string") return [value];
  const object = asObject(value);
  if (object === undefined) return [];
  return Object.entries(object).flatMap(([key, sub]) => {
    const below = valuePaths(sub);
    return below.length === 0 ? [key] : below.map((path) => `${key}.${path}`);
  });
}

/** The persisted children that are still running, with their snapshots. */
function activeChildren(snapshot: Record<string, unknown>): Array<[string, Record<string, unknown>]> {
  const children = asObject(snapshot.children) ?? {};
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const [id, entry] of Object.entries(children)) {
    const child = asObject(asObject(entry)?.snapshot);
    if (child !== undefined && child.status === "active") out.push([id, child]);
  }
  return out;
}

function childContext(snapshot: Record<string, unknown> | undefined, id: string) {
  const child = snapshot === undefined ? undefined : activeChildren(snapshot).find(([key]) => key === id);
  return asObject(child?.[1].context);
}

/**
 * collaborate: its mention's deliveries of `maxAttempts` (before it is sent: the send's retries);
 * a2aFlow: the reply wait's retries, of the error class's limit once known; others: null.
 */
export function attemptsOf(
  machineId: string,
  snapshot: Record<string, unknown> | undefined,
): ActorAttempts | null {
  const context = asObject(snapshot?.context);
  if (context === undefined) return null;
  if (machineId === "collaborate") {
    const mention = childContext(snapshot, "mention");
    const mentionCount = asNumber(mention?.attempts);
    if (mentionCount !== undefined) return withMax("mention", mentionCount, asNumber(mention?.maxAttempts));
    const ended = asNumber(context.mentionAttempts);
    const configured = asNumber(asObject(context.mention)?.maxAttempts);
    if (ended !== undefined) return withMax("mention", ended, configured);
    // Before the mention is sent: the Discord send's retries, while it is sending or if it needed any.
    const retries = asNumber(context.retries);
    if (retries === undefined || (retries === 0 && snapshot?.status !== "active")) return null;
    return withMax("send retries", retries, DISCORD_TRANSIENT_MAX_RETRIES);
  }
  if (machineId === "a2aFlow") {
    const wait = childContext(snapshot, "replyWait");
    const count = Math.max(asNumber(context.retryAttempts) ?? 0, asNumber(wait?.retryAttempts) ?? 0);
    // An error class allows maxAttempts tries in all: the first one and maxAttempts − 1 retries.
    const limit =
      asNumber(asObject(wait?.lastError)?.maxAttempts) ?? asNumber(asObject(context.error)?.maxAttempts);
    // A class that allows no retry (a permanent error) shows the count alone, not "0/0".
    return withMax("retries", count, limit === undefined || limit <= 1 ? undefined : limit - 1);
  }
  return null;
}

function withMax(kind: ActorAttempts["kind"], count: number, max: number | undefined): ActorAttempts {
  return max === undefined ? { kind, count } : { kind, count, max };
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function asNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

// ---- the human table ----

const ACTOR_HEADER = ["ID", "MACHINE", "STATE", "STATUS", "ATTEMPTS", "NEXT DUE", "AGE"];

/** The actors table a line at a time (a million actors are not held as cells); `owner` adds an OWNER column. */
export function actorLines<R extends ActorStatusRow>(
  actors: readonly R[],
  owner?: (actor: R) => string,
): Iterable<string> {
  const withOwner = (cells: string[], cell: string) => [...cells.slice(0, 4), cell, ...cells.slice(4)];
  return alignedLines(function* () {
    yield owner === undefined ? ACTOR_HEADER : withOwner(ACTOR_HEADER, "OWNER");
    for (const a of actors) yield owner === undefined ? actorCells(a) : withOwner(actorCells(a), owner(a));
  });
}

function actorCells(a: ActorStatusRow): string[] {
  return [
    a.id,
    a.machine,
    a.state,
    statusText(a),
    attemptsText(a.attempts),
    dueText(a.nextDue),
    a.ageFrom === "startedAt" ? formatDuration(a.ageMs) : `updated ${formatDuration(a.ageMs)} ago`,
  ];
}

function statusText(a: ActorStatusRow): string {
  if (a.location === "archive") return `${a.status}, archived`;
  return a.status === "active" ? "active" : `${a.status}, not yet archived`;
}

function attemptsText(attempts: ActorAttempts | null): string {
  if (attempts === null) return "-";
  return `${attempts.kind} ${attempts.count}${attempts.max === undefined ? "" : `/${attempts.max}`}`;
}

function dueText(due: ActorStatusRow["nextDue"]): string {
  if (due === null) return "-";
  const when =
    due.inMs > 0
      ? `in ${formatDuration(due.inMs)}`
      : due.inMs === 0
        ? "due now"
        : `overdue ${formatDuration(-due.inMs)}`;
  const more = due.timers > 1 ? ` +${due.timers - 1} more` : "";
  return `${due.event} ${due.atIso.replace(/\.\d{3}Z$/, "Z")} (${when})${more}`;
}

/** The table's last line: `3 actors: 1 active, 2 done, 0 error (2 archived); 1 warning`. */
export function actorsSummary(actors: readonly ActorStatusRow[], warnings: number): string {
  const count = (status: ActorStatusRow["status"]) => actors.filter((a) => a.status === status).length;
  const archived = actors.filter((a) => a.location === "archive").length;
  return (
    `${actors.length} actor${actors.length === 1 ? "" : "s"}: ${count("active")} active, ${count("done")} done, ` +
    `${count("error")} error (${archived} archived)` +
    (warnings > 0 ? `; ${warnings} warning${warnings === 1 ? "" : "s"}` : "")
  );
}

/** A warning as stderr shows it: `warning: <file>: record "<id>": <problem>`. */
export function warningLine(w: { file: string; id?: string; problem: string }): string {
  return `warning: ${w.file}: ${w.id === undefined ? "" : `record ${JSON.stringify(w.id)}: `}${w.problem}`;
}
