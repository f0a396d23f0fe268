import type { PoolClient } from "pg";

/**
 * The store's schema, as versioned migrations applied in order at open. A migration is never edited
 * once released: a change is a new one. `s` is the quoted schema name.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: (s: string) => string }> = [
  {
    version: 1,
    name: "actors, owners, timers, inbox, quarantine",
    sql: (s) => `
      -- One row per running process: the lease that keeps its actors its own.
      CREATE TABLE ${s}.owners (
        id text PRIMARY KEY,
        pid integer NOT NULL,
        host text NOT NULL,
        -- What the process names itself when it alone runs there (the runtime: its locked state
        -- directory): one that starts again under this name on this host takes the actors back at once.
        instance text,
        started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        lease_until timestamptz NOT NULL,
        -- The server process of its presence connection (idle, open while the process lives), and
        -- when that was recorded: gone since the server started, the process died.
        backend integer NOT NULL,
        backend_at timestamptz NOT NULL
      );
      -- Every actor: its whole record (json keeps the snapshot as written), and the process that hosts it.
      CREATE TABLE ${s}.actors (
        id text PRIMARY KEY,
        machine_id text NOT NULL,
        machine_version integer NOT NULL,
        status text NOT NULL CHECK (status IN ('active', 'done', 'error')),
        updated_at bigint NOT NULL,
        record json NOT NULL,
        owner text
      );
      CREATE INDEX actors_live_owner ON ${s}.actors (owner) WHERE status = 'active';
      -- Live records found by what their meta holds (listEveryLive({ meta })).
      CREATE INDEX actors_live_meta ON ${s}.actors USING gin (((record->'meta')::jsonb) jsonb_path_ops) WHERE status = 'active';
      CREATE INDEX actors_archived_at ON ${s}.actors (updated_at) WHERE status <> 'active';
      -- Each live actor's next due time (its earliest XState delay): takeovers claim the soonest first.
      CREATE TABLE ${s}.timers (
        actor_id text PRIMARY KEY,
        due_at bigint NOT NULL
      );
      CREATE INDEX timers_due ON ${s}.timers (due_at);
      -- Events for a live actor, sent by a process that does not own it; its owner applies them.
      CREATE TABLE ${s}.inbox (
        seq bigserial PRIMARY KEY,
        actor_id text NOT NULL,
        event json NOT NULL,
        sent_at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX inbox_actor ON ${s}.inbox (actor_id);
      -- Records that could not be used when claimed (unknown machine, failed migration): kept, never dropped.
      CREATE TABLE ${s}.quarantine (
        id text NOT NULL,
        problem text NOT NULL,
        record json NOT NULL,
        at timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      -- A batch put that finds an actor owned by another process fails whole, naming the actors.
      CREATE FUNCTION ${s}.not_owned(ids text[]) RETURNS void LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'not owned by this process: %', array_to_string(ids, ', ')
          USING ERRCODE = 'A2A01', DETAIL = array_to_string(ids, chr(10));
      END
      $fn$;
      -- A put refused because this process's own lease lapsed: it renews and tries again (no takeover).
      CREATE FUNCTION ${s}.lease_lapsed() RETURNS void LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'the lease of this process lapsed' USING ERRCODE = 'A2A02';
      END
      $fn$;
    `,
  },
];

/** The newest schema version this package knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Creates the schema when missing and applies the migrations it lacks, under an advisory lock; returns those applied. */
export async function migrate(client: PoolClient, schema: string): Promise<number[]> {
  const s = quoteIdentifier(schema);
  await client.query("BEGIN");
  try {
    // The lock first: processes creating the schema at once collide otherwise (IF NOT EXISTS is no lock).
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `a2a-statecharts migrations ${schema}`,
    ]);
    const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    // Only when missing: a user without CREATE on the database may still use a schema made for it.
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.migrations (
         version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const applied = new Set(
      (await client.query<{ version: number }>(`SELECT version FROM ${s}.migrations`)).rows.map(
        (row) => row.version,
      ),
    );
    const newest = Math.max(0, ...applied);
    if (newest > SCHEMA_VERSION) {
      throw new Error(
        `schema ${JSON.stringify(schema)} is at version ${newest}, newer than this package knows (${SCHEMA_VERSION}): upgrade a2a-statecharts, or use another schema`,
      );
    }
    const now: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql(s));
      await client.query(`INSERT INTO ${s}.migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      now.push(migration.version);
    }
    await client.query("COMMIT");
    return now;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** A schema name as SQL: checked to be a plain lower-case identifier, then quoted. */
export function quoteIdentifier(name: string): string {
  return `"${name}"`;
}

/** Lower-case letters, digits and underscores, starting with a letter or underscore, at most 63 bytes. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
