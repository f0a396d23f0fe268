import { parseArgs } from "node:util";
import {
  type StateDirLockInfo,
  type StateDirProblem,
  type StoredActor,
  StateDirNotFoundError,
  readStateDir,
} from "../persistence/index.js";
import { eventLabel } from "../machines/index.js";
import { MACHINE_VERSIONS } from "../runtime/index.js";
import { DISCORD_TRANSIENT_MAX_RETRIES } from "../services/index.js";
import { type CliIO, firstLine, flagProblem } from "./io.js";
import { type QuarantinedRow, quarantineWarning, toQuarantinedRow } from "./quarantineWarnings.js";
import { collectExchanges, type ExchangeStatusRow, exchangeTable } from "./statusExchanges.js";
import { alignColumns, formatDuration } from "./textTable.js";

export type { ExchangeStatusRow } from "./statusExchanges.js";

const DEFAULT_STATE_DIR = ".a2a-state";

export const STATUS_HELP = `a2a-statecharts status — list the actors persisted in a state directory (read-only)

Usage:
  a2a-statecharts status [--state-dir DIR] [--json]

Options:
  -d, --state-dir DIR   the runtime's state directory (default ${DEFAULT_STATE_DIR})
      --json            print one JSON document { stateDir, now, lock, actors, exchanges, warnings, quarantined }
  -h, --help            show this help

Bot exchanges: each thread's current bot-to-bot exchange, how many messages it handled of its
limit, and why it ended (turn_limit, explicit_skip, repetition_detected, minimal_content,
conclusion_detected); a human message in the thread starts a new one.

Reads the snapshots on disk and changes nothing: it takes no lock, so it works beside a running
runtime (showing its last durable state), and it reports corrupt files instead of moving them.
Files the runtime set aside (quarantine/, *.corrupt-*) are listed as warnings: their data is not
loaded; inspect them, then move or delete them.
Exit status: 0 listed (warnings included), 1 the directory is missing or unreadable, 2 bad usage.`;

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
export interface ActorStatusRow {
  id: string;
  machine: string;
  /** The state value flattened (`a.b`, parallel regions joined by ` + `), then each active child's (`> child:state`). */
  state: string;
  status: "active" | "done" | "error";
  location: "live" | "archive";
  attempts: ActorAttempts | null;
  /**
   * The earliest wait of an active actor: a durable timer (named by its event) or one of its XState
   * delays (`after responseTimeout`, or the delayed event's type); `timers` counts both kinds.
   */
  nextDue: { event: string; at: number; atIso: string; inMs: number; timers: number } | null;
  /** When the actor started (its context's `startedAt`), when known. */
  startedAt: number | null;
  updatedAt: number;
  /** now − startedAt, or now − updatedAt when the start is unknown (`ageFrom` says which). */
  ageMs: number;
  ageFrom: "startedAt" | "updatedAt";
  file: string;
  problem?: string;
}

export type { QuarantinedRow } from "./quarantineWarnings.js";

export interface StatusWarning {
  file: string;
  id?: string;
  problem: string;
}

export interface StatusReport {
  stateDir: string;
  now: number;
  lock: StateDirLockInfo;
  actors: ActorStatusRow[];
  /** Each thread's bot↔bot exchange: ended ones first, then by latest activity. */
  exchanges: ExchangeStatusRow[];
  /** Problems found reading the files, then one per quarantined file. */
  warnings: StatusWarning[];
  quarantined: QuarantinedRow[];
}

/**
 * `a2a-statecharts status [--state-dir DIR] [--json]`: the persisted actors of a state directory —
 * machine, state, status, attempts, next due timer, age — as a table or one JSON document. Read-only.
 */
export async function runStatus(argv: string[], io: CliIO): Promise<number> {
  let values: { "state-dir"?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        "state-dir": { type: "string", short: "d" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    io.err(`a2a-statecharts status: ${flagProblem(error)} (see --help)`);
    return 2;
  }
  if (values.help) {
    io.out(STATUS_HELP);
    return 0;
  }
  const dir = values["state-dir"] ?? DEFAULT_STATE_DIR;
  if (dir.trim() === "") {
    io.err("a2a-statecharts status: --state-dir needs a directory, got an empty string");
    return 2;
  }

  let report: StatusReport;
  try {
    report = await collectStatus(dir, Date.now());
  } catch (error) {
    io.err(
      error instanceof StateDirNotFoundError
        ? `a2a-statecharts status: ${error.message}`
        : `a2a-statecharts status: cannot read state directory ${dir}: ${firstLine(error)}`,
    );
    return 1;
  }
  if (values.json) io.out(JSON.stringify(report, null, 2));
  else printTable(report, io);
  return 0;
}

/** Reads the state directory (read-only) and builds the rows, sorted: active first by next due time, then finished, latest first. */
export async function collectStatus(dir: string, now: number): Promise<StatusReport> {
  const reading = await readStateDir(dir, { machineVersions: { ...MACHINE_VERSIONS } });
  const actors = reading.actors.map((actor) => toRow(actor, now)).sort(byUrgency);
  const quarantined = reading.quarantined.map(toQuarantinedRow);
  const exchangeWarnings: StatusWarning[] = [];
  const exchanges = await collectExchanges(reading.dir, (problem) =>
    exchangeWarnings.push({ file: "threads", problem }),
  );
  return {
    stateDir: reading.dir,
    now,
    lock: reading.lock,
    actors,
    exchanges,
    warnings: [
      ...reading.problems.map(toWarning),
      ...exchangeWarnings,
      ...quarantined.map(quarantineWarning),
    ],
    quarantined,
  };
}

function toWarning(p: StateDirProblem): StatusWarning {
  return { file: p.file, ...(p.id === undefined ? {} : { id: p.id }), problem: p.problem };
}

function toRow({ record, file, location, problem }: StoredActor, now: number): ActorStatusRow {
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
    startedAt: startedAt ?? null,
    updatedAt: record.updatedAt,
    ageMs: now - (startedAt ?? record.updatedAt),
    ageFrom: startedAt === undefined ? "updatedAt" : "startedAt",
    file,
    ...(problem === undefined ? {} : { problem }),
  };
}

/** A record's durable timers and XState delays, earliest first. */
function waitsOf(record: StoredActor["record"]): Array<{ event: string; dueAt: number }> {
  const delays = (record.delayed ?? []).map((d) => ({ event: eventLabel(d.event.type), dueAt: d.dueAt }));
  return [...record.timers, ...delays].sort((a, b) => a.dueAt - b.dueAt);
}

function byUrgency(a: ActorStatusRow, b: ActorStatusRow): number {
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
 * What the machine counts. collaborate: its mention's deliveries (the mention is 1, each reminder
 * adds 1) of `maxAttempts`, or before the mention is sent, the Discord send's retries. a2aFlow: the
 * reply wait's retries, of the error class's limit while one is known. Others: none.
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

function printTable(report: StatusReport, io: CliIO): void {
  for (const line of lockNotes(report.lock, report.stateDir)) io.out(line);
  for (const w of report.warnings) {
    io.err(`warning: ${w.file}: ${w.id === undefined ? "" : `record ${JSON.stringify(w.id)}: `}${w.problem}`);
  }
  if (report.quarantined.length > 0) {
    const n = report.quarantined.length;
    io.err(
      `warning: ${n} quarantined file${n === 1 ? "" : "s"} in ${report.stateDir}: damaged or unusable ` +
        "data the runtime set aside, kept for inspection (listed above)",
    );
  }
  const header = ["ID", "MACHINE", "STATE", "STATUS", "ATTEMPTS", "NEXT DUE", "AGE"];
  const rows = report.actors.map((a) => [
    a.id,
    a.machine,
    a.state,
    statusText(a),
    attemptsText(a.attempts),
    dueText(a.nextDue),
    a.ageFrom === "startedAt" ? formatDuration(a.ageMs) : `updated ${formatDuration(a.ageMs)} ago`,
  ]);
  if (rows.length === 0) io.out(`no actors persisted in ${report.stateDir}`);
  else for (const line of alignColumns([header, ...rows])) io.out(line);
  if (report.exchanges.length > 0) {
    io.out("");
    io.out("bot exchanges in threads:");
    for (const line of alignColumns(exchangeTable(report.exchanges, report.now))) io.out(line);
  }
  io.out(footer(report));
}

function lockNotes(lock: StateDirLockInfo, dir: string): string[] {
  if (lock.kind === "none") return [];
  if (lock.kind === "unreadable") {
    return [
      `note: the lock file ${lock.lockFile} is unreadable (${lock.problem}); showing the files as they are`,
    ];
  }
  if (lock.alive) {
    return [`note: state dir ${dir} is in use by pid ${lock.pid}; showing its last durable state`];
  }
  return [
    `note: the lock of state dir ${dir} names pid ${lock.pid}, which is not running (the next runtime takes it over)`,
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

function footer(report: StatusReport): string {
  const count = (status: ActorStatusRow["status"]) => report.actors.filter((a) => a.status === status).length;
  const archived = report.actors.filter((a) => a.location === "archive").length;
  const total = report.actors.length;
  const warnings = report.warnings.length;
  return (
    `${total} actor${total === 1 ? "" : "s"}: ${count("active")} active, ${count("done")} done, ` +
    `${count("error")} error (${archived} archived)` +
    (warnings > 0 ? `; ${warnings} warning${warnings === 1 ? "" : "s"}` : "") +
    ` · state dir ${report.stateDir}`
  );
}
