import { parseArgs } from "node:util";
import {
  type StateDirLockInfo,
  type StateDirProblem,
  StateDirNotFoundError,
  readStateDir,
} from "../persistence/index.js";
import { MACHINE_VERSIONS } from "../runtime/index.js";
import { type CliIO, firstLine, flagProblem, writeText } from "./io.js";
import { jsonDocument } from "./jsonText.js";
import { loadPeer } from "./peerDependencies.js";
import { postgresUsageError } from "./postgresUsage.js";
import { type QuarantinedRow, quarantineWarning, toQuarantinedRow } from "./quarantineWarnings.js";
import { collectExchanges, type ExchangeStatusRow, exchangeTable } from "./statusExchanges.js";
import {
  type ActorStatusRow,
  actorLines,
  actorsSummary,
  byUrgency,
  toRow,
  warningLine,
} from "./statusRows.js";
import { alignedLines } from "./textTable.js";

export type { ExchangeStatusRow } from "./statusExchanges.js";
export { attemptsOf, stateText, valueText } from "./statusRows.js";
export type { ActorAttempts, ActorStatusRow } from "./statusRows.js";

const DEFAULT_STATE_DIR = ".a2a-state";

export const STATUS_HELP = `a2a-statecharts status — list the persisted actors of a state directory or a PostgreSQL store (read-only)

Usage:
  a2a-statecharts status [--state-dir DIR] [--json]
  a2a-statecharts status --postgres URL [--schema NAME] [--json]

Options:
  -d, --state-dir DIR   the runtime's state directory (default ${DEFAULT_STATE_DIR})
      --postgres URL    read the PostgreSQL store instead (postgresql://user@host:5432/database; the
                        password can come from PGPASSWORD instead of the URL); needs the pg package
      --schema NAME     the store's schema (default a2a; with --postgres only)
      --json            print one JSON document: { stateDir, now, lock, actors, exchanges, warnings,
                        quarantined }, or with --postgres { postgres, schema, schemaVersion, now,
                        serverNow, processes, unowned, actors, inbox, warnings, quarantined }
  -h, --help            show this help

Bot exchanges: each thread's current bot-to-bot exchange, how many messages it handled of its
limit, and why it ended (turn_limit, explicit_skip, repetition_detected, minimal_content,
conclusion_detected); a human message in the thread starts a new one.

Reads the snapshots on disk and changes nothing: it takes no lock, so it works beside a running
runtime (showing its last durable state), and it reports corrupt files instead of moving them.
Files the runtime set aside (quarantine/, *.corrupt-*) are listed as warnings: their data is not
loaded; inspect them, then move or delete them.

With --postgres it only reads, in one read-only transaction, so it claims nothing: it lists the
gateway processes sharing the store (each one's lease, and whether it lapsed), the actors each one
owns and those waiting to be taken over, the events waiting in the inbox, and the records set aside.
Exit status: 0 listed (warnings included), 1 the directory or the database cannot be read, 2 bad usage.`;

export type { QuarantinedRow } from "./quarantineWarnings.js";

/** A file or record that could not be read, or a quarantined file. */
export type StatusWarning = StateDirProblem;

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
 * `a2a-statecharts status [--state-dir DIR | --postgres URL [--schema NAME]] [--json]`: the persisted
 * actors of a state directory or a PostgreSQL store — machine, state, status, attempts, next due
 * timer, age; for PostgreSQL also the processes and their leases — as a table or one JSON document. Read-only.
 */
export async function runStatus(argv: string[], io: CliIO): Promise<number> {
  let values: { "state-dir"?: string; postgres?: string; schema?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        "state-dir": { type: "string", short: "d" },
        postgres: { type: "string" },
        schema: { type: "string" },
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
  if (values.postgres !== undefined) return postgresStatus(values.postgres, values, io);
  if (values.schema !== undefined) {
    io.err("a2a-statecharts status: --schema names a PostgreSQL schema: use it with --postgres URL");
    return 2;
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
  if (values.json) await writeText(io, jsonDocument(report));
  else await printTable(report, io);
  return 0;
}

/** `--postgres`: its code and the pg package are loaded only then, so that status works without pg. */
async function postgresStatus(
  connectionString: string,
  values: { "state-dir"?: string; schema?: string; json?: boolean },
  io: CliIO,
): Promise<number> {
  if (values["state-dir"] !== undefined) {
    io.err("a2a-statecharts status: --state-dir and --postgres name two different stores: give one of them");
    return 2;
  }
  const usage = postgresUsageError(connectionString, values.schema);
  if (usage !== undefined) {
    io.err(`a2a-statecharts status: ${usage}`);
    return 2;
  }
  try {
    const run = await loadPeer(async () => (await import("./statusPostgres.js")).runPostgresStatus);
    return await run({ connectionString, schema: values.schema, json: values.json === true }, io, Date.now());
  } catch (error) {
    io.err(`a2a-statecharts status: ${firstLine(error)}`);
    return 1;
  }
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
    warnings: [...reading.problems, ...exchangeWarnings, ...quarantined.map(quarantineWarning)],
    quarantined,
  };
}

// ---- the human table ----

async function printTable(report: StatusReport, io: CliIO): Promise<void> {
  for (const line of lockNotes(report.lock, report.stateDir)) io.out(line);
  for (const w of report.warnings) {
    io.err(warningLine(w));
  }
  if (report.quarantined.length > 0) {
    const n = report.quarantined.length;
    io.err(
      `warning: ${n} quarantined file${n === 1 ? "" : "s"} in ${report.stateDir}: damaged or unusable ` +
        "data the runtime set aside, kept for inspection (listed above)",
    );
  }
  if (report.actors.length === 0) io.out(`no actors persisted in ${report.stateDir}`);
  else await writeText(io, actorLines(report.actors));
  if (report.exchanges.length > 0) {
    io.out("");
    io.out("bot exchanges in threads:");
    const rows = exchangeTable(report.exchanges, report.now);
    const lines = alignedLines(() => rows);
    await writeText(io, lines);
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

function footer(report: StatusReport): string {
  return `${actorsSummary(report.actors, report.warnings.length)} · state dir ${report.stateDir}`;
}
