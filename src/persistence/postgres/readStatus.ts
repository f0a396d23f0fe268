import pg from "pg";
import { type RecordFate, inspectRecord } from "../actorRecord.js";
import type { StoredActor } from "../readStateDir.js";
import { quoteIdentifier } from "./migrations.js";
import { checkTarget } from "./postgresStoreOptions.js";
import { describeTarget, openFailure, PostgresStoreError } from "./postgresErrors.js";

/** Options of {@link readPostgresStatus}. */
export interface ReadPostgresStatusOptions {
  /** Any login with USAGE on the schema and SELECT on its tables. */
  connectionString: string;
  /** The store's schema (default `a2a`). */
  schema?: string;
  /** The current version of each machine: records of others are flagged. */
  machineVersions?: Record<string, number>;
  /** How long one query may run before the server cancels it (default 10 s). */
  statementTimeoutMs?: number;
}

/** A gateway process registered on the store, as its row says. Times in ms since the epoch, on the server's clock. */
export interface PostgresProcess {
  /** Its owner id: actors it owns name it. */
  id: string;
  pid: number;
  host: string;
  startedAt: number;
  leaseUntil: number;
  /** leaseUntil − the server's clock at the read: negative once the lease lapsed. */
  leaseLeftMs: number;
  /** Its live actors (once its lease lapsed, those not taken over yet). */
  liveActors: number;
}

/** A stored actor with its owner (null: finished, or no process holds it). */
export interface PostgresStoredActor extends StoredActor {
  owner: string | null;
}

/** A record a process set aside when it claimed it: kept, not loaded. */
export interface PostgresQuarantinedRecord {
  id: string;
  machineId: string | null;
  problem: string;
  /** When it was set aside (server clock, ms since the epoch). */
  at: number;
}

/** What {@link readPostgresStatus} found. */
export interface PostgresStatusReading {
  /** The server and database, without the password: `user@host:port/database`. */
  target: string;
  schema: string;
  /** The newest migration applied to the schema. */
  schemaVersion: number;
  /** The server's clock at the read (ms since the epoch): leases are measured against it. */
  serverNow: number;
  /** Registered processes, oldest first. */
  processes: PostgresProcess[];
  /** Every stored actor, live and finished, by id. */
  actors: PostgresStoredActor[];
  /** Live actors with no owner: the next process to poll claims them. */
  unowned: number;
  /** Rows that are not usable records, by id. */
  problems: Array<{ id: string; problem: string }>;
  quarantined: PostgresQuarantinedRecord[];
  /** Events one process sent to an actor another owns, not yet taken by the owner. */
  inbox: { events: number; oldestAt: number | null };
}

/** What a process of this version does with a live record it takes over, when its machine is unknown or at another version. */
const FATE: RecordFate = {
  unknown: "a process of this version sets it aside when it takes it over",
  otherVersion: "a process of this version migrates it or sets it aside when it takes it over",
};

const TABLES = ["migrations", "owners", "actors", "timers", "inbox", "quarantine"];

/**
 * Reads a PostgreSQL store's state for monitoring (processes and leases, actors and owners, the inbox,
 * set-aside records) in one read-only transaction: it registers no process and claims nothing. Fails
 * with a PostgresStoreError naming the problem.
 */
export async function readPostgresStatus(options: ReadPostgresStatusOptions): Promise<PostgresStatusReading> {
  const { machineVersions, statementTimeoutMs = 10_000 } = options;
  const { connectionString, schema } = checkTarget(
    "readPostgresStatus",
    options.connectionString,
    options.schema,
  );
  if (!Number.isInteger(statementTimeoutMs) || statementTimeoutMs < 1) {
    throw new TypeError(
      `readPostgresStatus: statementTimeoutMs must be a whole number of milliseconds ≥ 1, got ${String(statementTimeoutMs)}`,
    );
  }
  const target = describeTarget(connectionString);
  const client = new pg.Client({
    connectionString,
    connectionTimeoutMillis: 5_000,
    statement_timeout: statementTimeoutMs,
    application_name: "a2a-statecharts status",
  });
  // A dropped connection is reported by the failing query; without a listener it would end the process.
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const schemaVersion = await versionOf(client, schema);
    const reading = await readTables(client, schema, machineVersions);
    await client.query("COMMIT");
    return { target, schema, schemaVersion, ...reading };
  } catch (error) {
    throw openFailure(error, { connectionString, schema, statementTimeoutMs });
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function versionOf(client: pg.Client, schema: string): Promise<number> {
  const found = await client.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = ANY($2::text[])`,
    [schema, TABLES],
  );
  const present = new Set(found.rows.map((row) => row.relname));
  if (present.size === 0) {
    throw new PostgresStoreError(
      `schema ${schema} has no a2a-statecharts tables: is --schema right?`,
      undefined,
    );
  }
  const missing = TABLES.filter((table) => !present.has(table));
  if (missing.length > 0) {
    throw new PostgresStoreError(
      `schema ${schema} lacks tables of the a2a-statecharts store (${missing.join(", ")}): is --schema right?`,
      undefined,
    );
  }
  const version = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${quoteIdentifier(schema)}.migrations`,
  );
  return version.rows[0]?.version ?? 0;
}

type TableReading = Omit<PostgresStatusReading, "target" | "schema" | "schemaVersion">;

async function readTables(
  client: pg.Client,
  schema: string,
  machineVersions: Record<string, number> | undefined,
): Promise<TableReading> {
  const s = quoteIdentifier(schema);
  // Times as ms since the epoch (float8: numeric would come back as a string).
  const ms = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;
  const now = await client.query<{ now: number }>(`SELECT ${ms("clock_timestamp()")} AS now`);
  const serverNow = now.rows[0]?.now ?? Date.now();
  const owners = await client.query<Omit<PostgresProcess, "leaseLeftMs">>(
    `SELECT o.id, o.pid, o.host, ${ms("o.started_at")} AS "startedAt", ${ms("o.lease_until")} AS "leaseUntil",
            (SELECT count(*) FROM ${s}.actors a WHERE a.owner = o.id AND a.status = 'active')::int AS "liveActors"
       FROM ${s}.owners o ORDER BY o.started_at, o.id`,
  );
  const rows = await client.query<{ id: string; owner: string | null; record: unknown }>(
    `SELECT id, owner, record FROM ${s}.actors ORDER BY id`,
  );
  const quarantined = await client.query<PostgresQuarantinedRecord>(
    `SELECT id, record->>'machineId' AS "machineId", problem, ${ms("at")} AS at
       FROM ${s}.quarantine ORDER BY at, id`,
  );
  const inbox = await client.query<{ events: number; oldestAt: number | null }>(
    `SELECT count(*)::int AS events, ${ms("min(sent_at)")} AS "oldestAt" FROM ${s}.inbox`,
  );
  const actors: PostgresStoredActor[] = [];
  const problems: Array<{ id: string; problem: string }> = [];
  for (const { id, owner, record: value } of rows.rows) {
    const { record, problem } = inspectRecord(id, value, machineVersions, FATE);
    const file = `${schema}.actors`;
    if (record === undefined) problems.push({ id, problem });
    // A finished record is never loaded again: what its machine is now does not matter.
    else if (record.status !== "active") actors.push({ record, location: "archive", owner, file });
    else
      actors.push({ record, location: "live", owner, file, ...(problem === undefined ? {} : { problem }) });
  }
  return {
    serverNow,
    processes: owners.rows.map((o) => ({ ...o, leaseLeftMs: o.leaseUntil - serverNow })),
    actors,
    unowned: actors.filter((a) => a.record.status === "active" && a.owner === null).length,
    problems,
    quarantined: quarantined.rows,
    inbox: inbox.rows[0] ?? { events: 0, oldestAt: null },
  };
}
