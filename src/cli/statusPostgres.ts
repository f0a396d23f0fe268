// `status --postgres URL`: the PostgreSQL store's processes, actors and backlog.
import { SCHEMA_VERSION } from "../persistence/postgres/migrations.js";
import { type PostgresStatusReading, readPostgresStatus } from "../persistence/postgres/readStatus.js";
import { MACHINE_VERSIONS } from "../runtime/index.js";
import { type CliIO, writeText } from "./io.js";
import { actorLines, actorsSummary, byUrgency, toRow, warningLine } from "./statusRows.js";
import { alignColumns, formatDuration } from "./textTable.js";

/** `status --postgres --json`: one document. */
export type PostgresStatusReport = Awaited<ReturnType<typeof collectPostgresStatus>>;
type Warning = { file: string; id?: string; problem: string };

/** Reads the store (read-only) and builds the report; actor times are measured from `now`. */
export async function collectPostgresStatus(o: { connectionString: string; schema: string }, now: number) {
  const reading = await readPostgresStatus({ ...o, machineVersions: { ...MACHINE_VERSIONS } });
  // Each with the process that owns it (null: finished, or live and waiting to be claimed).
  const actors = reading.actors
    .map((actor) => ({ ...toRow(actor, now), owner: actor.owner }))
    .sort(byUrgency);
  const quarantined = reading.quarantined.map((q) => ({ ...q, atIso: new Date(q.at).toISOString() }));
  const { events, oldestAt } = reading.inbox;
  return {
    postgres: reading.target, // the server and database, without the password
    schema: reading.schema,
    schemaVersion: reading.schemaVersion,
    // Actor due times and ages are measured on this machine's clock, as the gateways set them; leases
    // (the processes' times) on the server's.
    now,
    serverNow: reading.serverNow,
    processes: reading.processes.map((p) => ({
      ...p,
      startedIso: new Date(p.startedAt).toISOString(),
      leaseUntilIso: new Date(p.leaseUntil).toISOString(),
      // The process died or lost the server; the others take its actors over.
      lapsed: p.leaseLeftMs <= 0,
    })),
    // Live actors released by a process that stopped, claimed by the next one that polls.
    unowned: reading.unowned,
    actors,
    inbox: { events, oldestAt, oldestAgeMs: oldestAt === null ? null : reading.serverNow - oldestAt },
    warnings: warningsOf(reading, quarantined),
    quarantined,
  };
}

function warningsOf(
  reading: PostgresStatusReading,
  quarantined: ReadonlyArray<{ id: string; problem: string; atIso: string }>,
): Warning[] {
  const actors = `${reading.schema}.actors`;
  const newer =
    reading.schemaVersion > SCHEMA_VERSION
      ? [
          {
            file: `${reading.schema}.migrations`,
            problem: `the schema is at version ${reading.schemaVersion}, newer than this a2a-statecharts knows (${SCHEMA_VERSION}): upgrade it, or some of what the store holds may not show`,
          },
        ]
      : [];
  return [
    ...newer,
    ...reading.problems.map((p) => ({
      file: actors,
      id: p.id,
      problem: `not a usable record: ${p.problem}`,
    })),
    ...reading.actors.flatMap((a) =>
      a.problem === undefined ? [] : [{ file: actors, id: a.record.id, problem: a.problem }],
    ),
    ...quarantined.map((q) => ({
      file: `${reading.schema}.quarantine`,
      id: q.id,
      problem: `set aside ${q.atIso} (${q.problem}): no process loads it; inspect the row, then delete it`,
    })),
  ];
}

// ---- the human table ----

export async function printPostgresTable(report: PostgresStatusReport, io: CliIO): Promise<void> {
  for (const w of report.warnings) io.err(warningLine(w));
  io.out(`PostgreSQL ${report.postgres}, schema ${report.schema} (version ${report.schemaVersion})`);
  io.out("");
  for (const line of processLines(report)) io.out(line);
  io.out("");
  if (report.actors.length === 0) io.out(`no actors in schema ${report.schema}`);
  else await writeText(io, actorLines(report.actors, ownerText));
  const { events, oldestAgeMs } = report.inbox;
  if (events > 0) {
    io.out(
      `inbox: ${events} event${events === 1 ? "" : "s"} waiting for the process that owns the actor` +
        (oldestAgeMs === null ? "" : ` (oldest sent ${formatDuration(oldestAgeMs)} ago)`),
    );
  }
  io.out(
    `${actorsSummary(report.actors, report.warnings.length)} · ${plural(report.processes.length, "process", "processes")} · PostgreSQL ${report.postgres}, schema ${report.schema}`,
  );
}

function processLines(report: PostgresStatusReport): string[] {
  const lines: string[] = [];
  if (report.processes.length === 0) lines.push("no process holds a lease: no gateway runs on this schema");
  else {
    const rows = report.processes.map((p) => [
      shortId(p.id),
      String(p.pid),
      p.host,
      `${p.startedIso.replace(/\.\d{3}Z$/, "Z")} (${formatDuration(report.serverNow - p.startedAt)} ago)`,
      p.lapsed
        ? `lapsed ${formatDuration(-p.leaseLeftMs)} ago`
        : `${p.leaseLeftMs < 1_000 ? "<1s" : formatDuration(p.leaseLeftMs)} left`,
      p.lapsed && p.liveActors > 0 ? `${p.liveActors} (to be taken over)` : String(p.liveActors),
    ]);
    lines.push(...alignColumns([["PROCESS", "PID", "HOST", "STARTED", "LEASE", "LIVE ACTORS"], ...rows]));
  }
  if (report.unowned > 0) {
    lines.push(
      `unowned: ${plural(report.unowned, "live actor")} let go by a stopped process, claimed by the next process that polls`,
    );
  }
  return lines;
}

function ownerText(a: PostgresStatusReport["actors"][number]): string {
  if (a.owner !== null) return shortId(a.owner);
  return a.status === "active" ? "unowned" : "-";
}

/** An owner id's first 8 characters (a UUID's first group): enough to match the processes table. */
function shortId(id: string): string {
  return id.slice(0, 8);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
