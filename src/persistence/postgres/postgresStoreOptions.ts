import { wholeOption } from "../snapshotStoreOptions.js";
import { SCHEMA_NAME } from "./migrations.js";

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** A PostgreSQL connection string, e.g. `postgresql://a2a:secret@db.internal:5432/gateway`. */
  connectionString: string;
  /** The schema the store creates and migrates its tables in (default `a2a`). */
  schema?: string;
  /** How long a process owns its actors without renewal (default 10 s): a hung one's are taken over within it. */
  leaseMs?: number;
  /** How often to look for actors to take over and events sent (default leaseMs / 20 within 50–500 ms; at most leaseMs / 4). */
  pollMs?: number;
  /** Connections this process keeps to the server (default 4). */
  poolSize?: number;
}

export interface ResolvedPostgresStoreOptions {
  connectionString: string;
  schema: string;
  leaseMs: number;
  pollMs: number;
  poolSize: number;
}

/** How long one renewal holds the lease: less one poll, so others take a dead process's actors within `leaseMs`. */
export function leaseLength(o: { leaseMs: number; pollMs: number }): number {
  return o.leaseMs - o.pollMs;
}

/** How long a query may take (client and server side): a silent connection is noticed in this time, not ~15 minutes. */
export function queryTimeout(o: { leaseMs: number }): number {
  return Math.min(10_000, Math.max(1_000, o.leaseMs));
}

/** How long a renewal may take: a third of the lease, as renewals come every third. */
export function renewalTimeout(o: { leaseMs: number }): number {
  return Math.max(500, Math.floor(o.leaseMs / 3));
}

const FN = "createPostgresStore";

/** The options with their defaults; a TypeError naming the option for a wrong one. */
export function resolvePostgresStoreOptions(o: unknown): ResolvedPostgresStoreOptions {
  if (typeof o !== "object" || o === null) {
    throw new TypeError(
      `${FN}: takes an options object ({ connectionString, schema?, leaseMs? }), got ${String(o)}`,
    );
  }
  const options = o as Partial<Record<keyof PostgresStoreOptions, unknown>>;
  const { connectionString, schema } = checkTarget(FN, options.connectionString, options.schema);
  const leaseMs = wholeOption(FN, "leaseMs", options.leaseMs, 10_000, 200, 3_600_000);
  const defaultPollMs = Math.min(500, Math.max(50, Math.round(leaseMs / 20)));
  const pollMs = wholeOption(FN, "pollMs", options.pollMs, defaultPollMs, 10, Math.floor(leaseMs / 4));
  const poolSize = wholeOption(FN, "poolSize", options.poolSize, 4, 2, 100);
  return { connectionString, schema, leaseMs, pollMs, poolSize };
}

/** The connection string and the schema (default `a2a`), or a TypeError naming `fn` and the one that is wrong. */
export function checkTarget(
  fn: string,
  connectionString: unknown,
  schema: unknown = "a2a",
): { connectionString: string; schema: string } {
  if (typeof connectionString !== "string" || connectionString.trim() === "") {
    throw new TypeError(
      `${fn}: connectionString must be a non-empty string (postgresql://user:password@host:5432/database), got ${typeof connectionString === "string" ? '""' : String(connectionString)}`,
    );
  }
  if (typeof schema !== "string" || !SCHEMA_NAME.test(schema)) {
    throw new TypeError(
      `${fn}: schema must be a lower-case SQL name (letters, digits, _; at most 63), got ${JSON.stringify(schema)}`,
    );
  }
  return { connectionString, schema };
}
