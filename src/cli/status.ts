import { join } from "node:path";
import {
  type QuarantinedFile,
  type StateDirLockInfo,
  type StateDirProblem,
  StateDirNotFoundError,
  readStateDir,
} from "../persistence/index.js";
import { SCHEMA_NAME } from "../persistence/postgres/migrations.js";
import { MACHINE_VERSIONS } from "../runtime/index.js";
import { readThreadExchanges, THREAD_STATE_DIR } from "../runtime/threadStatePersistence.js";
import { type CliIO, firstLine, readCommandLine, stateDirOf, UsageError, writeText } from "./io.js";
import { jsonDocument } from "./jsonText.js";
import { loadPeer } from "./peerDependencies.js";
import { actorLines, actorsSummary, byUrgency, toRow, warningLine } from "./statusRows.js";
import { alignedLines, formatDuration } from "./textTable.js";

export { valueText } from "./statusRows.js";
export type { ActorAttempts, ActorStatusRow } from "./statusRows.js";

export const STATUS_HELP = `a2a-statecharts status — list the persisted actors of a state directory or a PostgreSQL store (read-only)

Usage:
  a2a-statecharts status [--state-dir DIR] [--json]
  a2a-statecharts status --postgres URL [--schema NAME] [--json]

Options:
  -d, --state-dir DIR   the runtime's state directory (default .a2a-state)
      --postgres URL    read the PostgreSQL store instead (postgresql://user@host:5432/database; the
                        password can come from PGPASSWORD instead of the URL); needs the pg package
      --schema NAME     the store's schema (default a2a; with --postgres only)
      --json            print one JSON document: { stateDir, now, lock, actors, exchanges, warnings,
                        quarantined }, or with --postgres { postgres, schema, schemaVersion, now,
                        serverNow, processes, unowned, actors, inbox, warnings, quarantined }
  -h, --help            show this help

Also each thread's current bot-to-bot exchange: messages handled of its limit, and why it ended
(turn_limit, explicit_skip, repetition_detected, minimal_content, conclusion_detected).

Reads without a lock and changes nothing, so it works beside a running runtime (showing its last
durable state). Corrupt files and files the runtime set aside (quarantine/, *.corrupt-*) are warnings,
left where they are: their data is not loaded; inspect them, then move or delete them.
With --postgres: one read-only transaction that claims nothing; also the gateway processes and their
leases, the actors waiting to be taken over, the events waiting in the inbox, and the records set aside.
Exit status: 0 listed (warnings included), 1 the directory or the database cannot be read, 2 bad usage.`;

/** `status --json`: one document. */
export type StatusReport = Awaited<ReturnType<typeof collectStatus>>;

const STATUS_OPTIONS = {
  "state-dir": { type: "string", short: "d" },
  postgres: { type: "string" },
  schema: { type: "string" },
  json: { type: "boolean" },
} as const;

/** `a2a-statecharts status`: the persisted actors of a state directory or a PostgreSQL store. Read-only. */
export async function runStatus(argv: string[], io: CliIO): Promise<number> {
  const flags = readCommandLine(io, "status", STATUS_HELP, argv, STATUS_OPTIONS, ({ values }) => {
    const { postgres, schema } = values;
    // Checked before pg is loaded: a usage error is one whether pg is installed or not.
    if (postgres === undefined && schema !== undefined) {
      throw new UsageError("--schema names a PostgreSQL schema: use it with --postgres URL");
    }
    if (postgres !== undefined && values["state-dir"] !== undefined) {
      throw new UsageError("--state-dir and --postgres name two different stores: give one of them");
    }
    if (postgres?.trim() === "") {
      throw new UsageError(
        "--postgres needs a connection string (postgresql://user@host:5432/database), got an empty string",
      );
    }
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
      throw new UsageError(
        `--schema must be a lower-case SQL name (letters, digits, _; at most 63), got ${JSON.stringify(schema)}`,
      );
    }
    return { ...values, dir: stateDirOf(values) };
  });
  if (typeof flags === "number") return flags;

  let report: object;
  let print: () => Promise<void>;
  try {
    if (flags.postgres === undefined) {
      const local = await collectStatus(flags.dir, Date.now());
      [report, print] = [local, () => printTable(local, io)];
    } else {
      // Loaded only for --postgres: it needs the pg package, an optional peer dependency.
      const pg = await loadPeer(async () => import("./statusPostgres.js"));
      const options = { connectionString: flags.postgres, schema: flags.schema ?? "a2a" };
      const remote = await pg.collectPostgresStatus(options, Date.now());
      [report, print] = [remote, () => pg.printPostgresTable(remote, io)];
    }
  } catch (error) {
    io.err(
      error instanceof StateDirNotFoundError || flags.postgres !== undefined
        ? `a2a-statecharts status: ${firstLine(error)}`
        : `a2a-statecharts status: cannot read state directory ${flags.dir}: ${firstLine(error)}`,
    );
    return 1;
  }
  if (flags.json === true) await writeText(io, jsonDocument(report));
  else await print();
  return 0;
}

/** Reads the state directory (read-only) and builds the rows, sorted: active first by next due time, then finished, latest first. */
export async function collectStatus(dir: string, now: number) {
  const reading = await readStateDir(dir, {
    machineVersions: { ...MACHINE_VERSIONS },
    keep: (actor) => toRow(actor, now),
  });
  const quarantined = reading.quarantined.map((q) => ({
    ...q,
    modifiedIso: new Date(q.modifiedAt).toISOString(),
  }));
  const exchangeWarnings: StateDirProblem[] = [];
  const exchanges = await collectExchanges(reading.dir, (problem) =>
    exchangeWarnings.push({ file: "threads", problem }),
  );
  return {
    stateDir: reading.dir,
    now,
    lock: reading.lock,
    actors: reading.actors.sort(byUrgency),
    exchanges,
    // Problems found reading the files, then one per file the runtime set aside (its data is not loaded).
    warnings: [...reading.problems, ...exchangeWarnings, ...quarantined.map(quarantineWarning)],
    quarantined,
  };
}

/** Loud on purpose: a quarantined file may hold acknowledged data the runtime no longer has. */
function quarantineWarning(q: QuarantinedFile & { modifiedIso: string }): StateDirProblem {
  return {
    file: q.file,
    problem:
      `quarantined (${formatBytes(q.bytes)}, set aside ${q.modifiedIso}): the runtime does not load ` +
      "it and may have lost what it held; inspect it, then move or delete it",
  };
}

/** Bytes in the largest binary unit that keeps a number ≥ 1: `512 B`, `1.5 KiB`, `3.2 MiB`. */
function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit] ?? ""}`;
}

/** Each thread's bot↔bot exchange on disk (read-only): ended ones first, then by latest activity. */
async function collectExchanges(stateDir: string, onWarning: (problem: string) => void) {
  const exchanges = await readThreadExchanges(stateDir, onWarning).catch((error: unknown) => {
    onWarning(
      `${join(stateDir, THREAD_STATE_DIR)}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return [];
  });
  return exchanges
    .map(({ threadId, exchange }) => ({
      threadId,
      handled: exchange.handled, // messages handled, its opening included: one agent run each
      limit: exchange.limit, // 1 + maxPingPongTurns
      endedBy: exchange.endedBy ?? null, // null while it goes on
      at: exchange.at, // its last handled message, or its end
      atIso: new Date(exchange.at).toISOString(),
    }))
    .sort((a, b) => Number(a.endedBy === null) - Number(b.endedBy === null) || b.at - a.at);
}

// ---- the human table ----

async function printTable(report: StatusReport, io: CliIO): Promise<void> {
  const note = lockNote(report.lock, report.stateDir);
  if (note !== undefined) io.out(note);
  for (const w of report.warnings) io.err(warningLine(w));
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
    const rows = [
      ["THREAD", "HANDLED", "ENDED BY", "LAST ACTIVITY"],
      ...report.exchanges.map((r) => [
        r.threadId,
        `${r.handled}/${r.limit}`,
        r.endedBy ?? "(going on)",
        `${formatDuration(report.now - r.at)} ago`,
      ]),
    ];
    await writeText(
      io,
      alignedLines(() => rows),
    );
  }
  io.out(`${actorsSummary(report.actors, report.warnings.length)} · state dir ${report.stateDir}`);
}

function lockNote(lock: StateDirLockInfo, dir: string): string | undefined {
  if (lock.kind === "none") return undefined;
  if (lock.kind === "unreadable") {
    return `note: the lock file ${lock.lockFile} is unreadable (${lock.problem}); showing the files as they are`;
  }
  return lock.alive
    ? `note: state dir ${dir} is in use by pid ${lock.pid}; showing its last durable state`
    : `note: the lock of state dir ${dir} names pid ${lock.pid}, which is not running (the next runtime takes it over)`;
}
