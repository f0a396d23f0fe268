// `status --postgres URL` on a real server: what two gateway processes (two stores) wrote, read without
// changing anything, and each way the read can fail said in one line.
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runStatus } from "../../src/cli/status.js";
import type { PostgresStatusReport } from "../../src/cli/statusPostgres.js";
import type { ActorRecord, ActorRecordRules } from "../../src/persistence/index.js";
import {
  createPostgresStore,
  PostgresStoreError,
  type SharedSnapshotStore,
} from "../../src/persistence/postgres/index.js";
import { readPostgresStatus } from "../../src/persistence/postgres/readStatus.js";
import { usePostgres } from "../support/postgres.js";
import { STORE_T0 } from "../support/storeRecords.js";

const postgres = usePostgres();
const MINUTE = 60_000;
const HOUR = 3_600_000;
// `legacy` lets a store write a record of a machine this package does not run: status flags it.
const RULES: ActorRecordRules = { machineVersions: { a2aFlow: 1, collaborate: 1, legacy: 1 } };

const toClose: SharedSnapshotStore[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const store of toClose.splice(0)) await store.close();
});

/** A store as one gateway process opens it; it renews and polls rarely (quarter-hourly), so nothing moves unless the test moves it. */
async function gatewayProcess(url: string): Promise<SharedSnapshotStore> {
  const store = createPostgresStore({ connectionString: url, leaseMs: HOUR, pollMs: HOUR / 4 });
  await store.open({ now: () => STORE_T0, rules: RULES, onWarning: () => undefined });
  toClose.push(store);
  return store;
}

/** A live collaboration whose mention was delivered once (of 3), its reminder due `dueIn` after STORE_T0. */
function collaboration(id: string, dueIn: number): ActorRecord {
  return {
    id,
    machineId: "collaborate",
    machineVersion: 1,
    snapshot: {
      status: "active",
      value: "awaitingResponse",
      context: { startedAt: STORE_T0 },
      children: {
        mention: {
          snapshot: { status: "active", value: "pending", context: { attempts: 1, maxAttempts: 3 } },
        },
      },
    },
    delayed: [{ id: "remind", source: [], target: [], event: { type: "REMIND" }, dueAt: STORE_T0 + dueIn }],
    status: "active",
    updatedAt: STORE_T0,
  };
}

function finished(id: string): ActorRecord {
  return {
    id,
    machineId: "a2aFlow",
    machineVersion: 1,
    snapshot: { status: "done", value: "completed", context: { startedAt: STORE_T0 - MINUTE } },
    status: "done",
    updatedAt: STORE_T0,
  };
}

async function status(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runStatus(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err, stdout: out.join("\n"), stderr: err.join("\n") };
}

async function statusJson(url: string, ...more: string[]): Promise<PostgresStatusReport> {
  const run = await status("--postgres", url, "--json", ...more);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  return JSON.parse(run.stdout) as PostgresStatusReport;
}

/** Everything the store keeps, as text: equal before and after status shows that status wrote nothing. */
async function storeContents(database: string): Promise<string> {
  const tables = {
    owners: "SELECT id, pid, host, started_at::text, lease_until::text FROM a2a.owners ORDER BY id",
    actors: "SELECT id, owner, status, updated_at::text, record::text FROM a2a.actors ORDER BY id",
    timers: "SELECT actor_id, due_at::text FROM a2a.timers ORDER BY actor_id",
    inbox: "SELECT seq::text, actor_id, event::text FROM a2a.inbox ORDER BY seq",
    quarantine: "SELECT id, problem, record::text FROM a2a.quarantine ORDER BY id",
  };
  const contents: Record<string, unknown> = {};
  for (const [table, sql] of Object.entries(tables))
    contents[table] = await postgres().query(sql, [], database);
  return JSON.stringify(contents);
}

const databaseOf = (url: string): string => new URL(url).pathname.slice(1);

async function ownerIds(database: string): Promise<string[]> {
  const rows = await postgres().query<{ id: string }>(
    "SELECT id FROM a2a.owners ORDER BY started_at",
    [],
    database,
  );
  return rows.map((row) => row.id);
}

function lineOf(lines: string[], start: string): string {
  const line = lines.find((l) => l.startsWith(start));
  if (line === undefined) throw new Error(`no line starting with ${start} in:\n${lines.join("\n")}`);
  return line;
}

describe("status --postgres", { timeout: 30_000 }, () => {
  it("shows both processes with their leases and actors, the inbox, then an actor let go, then a lapsed lease, and changes nothing", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: STORE_T0 + MINUTE });
    const url = await postgres().createDatabase();
    const database = databaseOf(url);
    const first = await gatewayProcess(url);
    const second = await gatewayProcess(url);
    await first.put([collaboration("soon", 5 * MINUTE), collaboration("later", 10 * MINUTE)]);
    await second.put([collaboration("other", 2 * MINUTE), finished("flow-done")]);
    // The inbox's age is the server's real clock: it is bracketed by real time, not assumed under 1 s.
    const sentBefore = performance.now();
    await first.sendTo({ id: "other", event: { type: "ANSWER", text: "done" } });
    const [a, b] = await ownerIds(database);
    if (a === undefined || b === undefined) throw new Error("expected two owners rows");

    let before = await storeContents(database);
    const both = await statusJson(url);
    expect(await storeContents(database)).toBe(before);
    expect(both).toMatchObject({ schema: "a2a", schemaVersion: 1, unowned: 0, inbox: { events: 1 } });
    expect(both.postgres).toBe(`postgres@127.0.0.1:${postgres().port}/${database}`);
    expect(both.processes.map((p) => [p.id, p.pid, p.host, p.liveActors, p.lapsed])).toEqual([
      [a, process.pid, hostname(), 2, false],
      [b, process.pid, hostname(), 1, false],
    ]);
    for (const p of both.processes) expect(p.leaseLeftMs > 0 && p.leaseLeftMs <= HOUR).toBe(true);
    // Soonest due first, finished last; each with its owner, due time and attempts as for a state dir.
    expect(both.actors.map((r) => [r.id, r.owner, r.location, r.nextDue?.inMs ?? null])).toEqual([
      ["other", b, "live", MINUTE],
      ["soon", a, "live", 4 * MINUTE],
      ["later", a, "live", 9 * MINUTE],
      ["flow-done", null, "archive", null],
    ]);
    expect(both.actors[0]).toMatchObject({
      machine: "collaborate",
      state: "awaitingResponse > mention:pending",
      attempts: { kind: "mention", count: 1, max: 3 },
      nextDue: { event: "REMIND", at: STORE_T0 + 2 * MINUTE, timers: 1 },
      ageMs: MINUTE,
      file: "a2a.actors",
    });

    const table = await status("--postgres", url);
    expect({ code: table.code, stderr: table.stderr }).toEqual({ code: 0, stderr: "" });
    expect(table.out[0]).toBe(
      `PostgreSQL postgres@127.0.0.1:${postgres().port}/${database}, schema a2a (version 1)`,
    );
    expect(lineOf(table.out, "PROCESS")).toMatch(/^PROCESS\s+PID\s+HOST\s+STARTED\s+LEASE\s+LIVE ACTORS$/);
    expect(lineOf(table.out, a.slice(0, 8))).toMatch(
      new RegExp(
        `^${a.slice(0, 8)}\\s+${process.pid}\\s+\\S+\\s+\\S+Z \\(\\d+s ago\\)\\s+(\\d+m|\\d+m \\d+s) left\\s+2$`,
      ),
    );
    expect(lineOf(table.out, "ID")).toMatch(
      /^ID\s+MACHINE\s+STATE\s+STATUS\s+OWNER\s+ATTEMPTS\s+NEXT DUE\s+AGE$/,
    );
    expect(lineOf(table.out, "other")).toMatch(
      new RegExp(
        `^other\\s+collaborate\\s+awaitingResponse > mention:pending\\s+active\\s+${b.slice(0, 8)}\\s+mention 1/3\\s+REMIND \\S+ \\(in 1m\\)\\s+1m$`,
      ),
    );
    expect(lineOf(table.out, "flow-done")).toMatch(/^flow-done\s+a2aFlow\s+completed\s+done, archived\s+-\s/);
    const sentAgo = Math.ceil((performance.now() - sentBefore) / 1000);
    const inbox = table.out.find((line) => line.startsWith("inbox: "));
    expect(inbox).toMatch(
      /^inbox: 1 event waiting for the process that owns the actor \(oldest sent \d+s ago\)$/,
    );
    expect(Number(/sent (\d+)s ago/.exec(inbox ?? "")?.[1])).toBeLessThanOrEqual(sentAgo);
    expect(table.out.at(-1)).toMatch(
      /^4 actors: 3 active, 1 done, 0 error \(1 archived\) · 2 processes · PostgreSQL /,
    );

    // The second process stops: its live actor waits, unowned, for the next poll; status must not claim it.
    await second.close();
    toClose.splice(toClose.indexOf(second), 1);
    before = await storeContents(database);
    const released = await statusJson(url);
    const releasedTable = await status("--postgres", url);
    expect(await storeContents(database)).toBe(before);
    expect(released.processes.map((p) => p.id)).toEqual([a]);
    expect(released.unowned).toBe(1);
    expect(released.actors.find((r) => r.id === "other")?.owner).toBeNull();
    expect(lineOf(releasedTable.out, "other")).toMatch(/\sactive\s+unowned\s+mention 1\/3/);
    expect(releasedTable.out).toContain(
      "unowned: 1 live actor let go by a stopped process, claimed by the next process that polls",
    );

    // The first one's lease runs out (a killed process): shown lapsed, its actors waiting to be taken over.
    await postgres().query(
      "UPDATE a2a.owners SET lease_until = clock_timestamp() - interval '5 seconds'",
      [],
      database,
    );
    before = await storeContents(database);
    const lapsed = await statusJson(url);
    const lapsedTable = await status("--postgres", url);
    expect(await storeContents(database)).toBe(before);
    expect(lapsed.processes).toMatchObject([{ id: a, lapsed: true, liveActors: 2 }]);
    expect(lapsed.processes[0]?.leaseLeftMs).toBeLessThanOrEqual(-5_000);
    expect(lineOf(lapsedTable.out, a.slice(0, 8))).toMatch(/\slapsed \d+s ago\s+2 \(to be taken over\)$/);
  });

  it("leaves no connection open behind it", async () => {
    const url = await postgres().createDatabase();
    await gatewayProcess(url);
    await statusJson(url);
    const open = async () =>
      postgres().query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'a2a-statecharts status'",
      );
    // A backend exits just after its client's goodbye: wait for that, never for long.
    for (let tries = 0; (await open())[0]?.n !== 0; tries++) {
      if (tries > 100) throw new Error("status left its connection open");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  it("warns of a record no process can load and of a record set aside, and still lists the rest", async () => {
    const url = await postgres().createDatabase();
    const database = databaseOf(url);
    const store = await gatewayProcess(url);
    // A finished record of an unknown machine is never loaded again: no warning for it.
    await store.put([
      collaboration("fine", MINUTE),
      { ...collaboration("old", MINUTE), machineId: "legacy", machineVersion: 1 },
      { ...finished("older"), machineId: "legacy", machineVersion: 1 },
    ]);
    await postgres().query(
      `INSERT INTO a2a.quarantine (id, problem, record, at) VALUES ('gone', 'unknown machine "ancient"', '{"id":"gone","machineId":"ancient"}', '2026-01-02T03:04:05Z')`,
      [],
      database,
    );
    // A row no store would write (its record lacks most fields): reported, not shown as an actor.
    await postgres().query(
      `INSERT INTO a2a.actors (id, machine_id, machine_version, status, updated_at, record)
       VALUES ('broken', 'collaborate', 2, 'active', 0, '{"id":"broken"}')`,
      [],
      database,
    );
    const report = await statusJson(url);
    expect(report.actors.map((r) => r.id).sort()).toEqual(["fine", "old", "older"]);
    expect(report.actors.find((r) => r.id === "old")?.problem).toMatch(/^unknown machine "legacy"/);
    expect(report.quarantined).toEqual([
      {
        id: "gone",
        machineId: "ancient",
        problem: 'unknown machine "ancient"',
        at: Date.UTC(2026, 0, 2, 3, 4, 5),
        atIso: "2026-01-02T03:04:05.000Z",
      },
    ]);
    const table = await status("--postgres", url);
    expect(table.code).toBe(0);
    expect(table.err[0]).toMatch(/^warning: a2a\.actors: record "broken": not a usable record: machineId: /);
    expect(table.err.slice(1)).toEqual([
      'warning: a2a.actors: record "old": unknown machine "legacy": a process of this version sets it aside when it takes it over',
      'warning: a2a.quarantine: record "gone": set aside 2026-01-02T03:04:05.000Z (unknown machine "ancient"): no process loads it; inspect the row, then delete it',
    ]);
    expect(table.out.at(-1)).toMatch(/; 3 warnings · 1 process · /);
  });

  it("warns when the schema is newer than this package", async () => {
    const url = await postgres().createDatabase();
    await gatewayProcess(url);
    await postgres().query(
      "INSERT INTO a2a.migrations (version, name) VALUES (99, 'future')",
      [],
      databaseOf(url),
    );
    const run = await status("--postgres", url);
    expect(run.code).toBe(0);
    expect(run.err).toEqual([
      "warning: a2a.migrations: the schema is at version 99, newer than this a2a-statecharts knows (1): upgrade it, or some of what the store holds may not show",
    ]);
    expect(run.out[0]).toMatch(/, schema a2a \(version 99\)$/);
  });

  it("reads a store in another schema with --schema", async () => {
    const url = await postgres().createDatabase();
    const store = createPostgresStore({
      connectionString: url,
      schema: "gateway_b",
      leaseMs: HOUR,
      pollMs: HOUR / 4,
    });
    await store.open({ now: () => STORE_T0, rules: RULES, onWarning: () => undefined });
    toClose.push(store);
    await store.put([collaboration("in-b", MINUTE)]);
    const report = await statusJson(url, "--schema", "gateway_b");
    expect([report.schema, report.actors.map((r) => r.id)]).toEqual(["gateway_b", ["in-b"]]);
  });

  // Many actors make one JSON string or one buffered output too large: stdout gets them in pieces.
  it("writes --json and the actors table through write, as the same text", async () => {
    const url = await postgres().createDatabase();
    const store = await gatewayProcess(url);
    await store.put([collaboration("live-1", MINUTE), finished("done-1")]);
    vi.useFakeTimers({ toFake: ["Date"], now: STORE_T0 });
    const viaWrite = async (...flags: string[]) => {
      const out: string[] = [];
      const writes: string[] = [];
      const code = await runStatus(["--postgres", url, ...flags], {
        out: (line) => out.push(line),
        err: () => undefined,
        write: async (text) => (writes.push(text), true),
      });
      return { code, out, written: writes.join("") };
    };

    const json = await viaWrite("--json");
    expect([json.code, json.out]).toEqual([0, []]);
    const report = JSON.parse(json.written) as PostgresStatusReport;
    expect(json.written).toBe(`${JSON.stringify(report, null, 2)}\n`);
    expect(report.actors.map((a) => a.id).sort()).toEqual(["done-1", "live-1"]);

    const table = await viaWrite();
    const lines = (await status("--postgres", url)).out;
    const header = lines.findIndex((line) => line.startsWith("ID "));
    expect(table.written).toBe(
      lines
        .slice(header, header + 3)
        .map((line) => `${line}\n`)
        .join(""),
    );
    // The rest (the processes, whose lease countdown moves on the server's clock, and the footer) as lines.
    expect(table.out.at(-1)).toBe(lines.at(-1));
    expect(table.out.filter((line) => /live-1|done-1/.test(line))).toEqual([]);
  });
});

describe("status --postgres: each failure in one line, exit 1, no password", { timeout: 30_000 }, () => {
  async function fails(url: string, ...more: string[]): Promise<string> {
    const run = await status("--postgres", url, ...more);
    expect({ code: run.code, out: run.out, lines: run.err.length }).toEqual({ code: 1, out: [], lines: 1 });
    return run.stderr;
  }

  it("a server that does not answer", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
      });
    });
    expect(await fails(`postgresql://postgres:hunter2secret@127.0.0.1:${port}/db`)).toBe(
      `a2a-statecharts status: PostgreSQL store (postgres@127.0.0.1:${port}/db): cannot reach the server (ECONNREFUSED): is PostgreSQL running there, and is the connection string right?`,
    );
  });

  it("wrong credentials", async () => {
    const url = await postgres().createDatabase();
    const { user } = postgres().passwordLogin;
    const said = await fails(
      postgres().connectionString(databaseOf(url), { user, password: "not-the-password-42" }),
    );
    expect(said).toMatch(
      /refused the credentials \(password authentication failed for user "a2a_password"\)/,
    );
    expect(said).not.toContain("not-the-password-42");
  });

  it("a database that does not exist", async () => {
    expect(await fails(postgres().connectionString("no_such_database"))).toMatch(
      /: database "no_such_database" does not exist: create it \(createdb\) or name an existing database/,
    );
  });

  it("a schema the store never created, or one without its tables", async () => {
    const url = await postgres().createDatabase();
    const target = `postgres@127.0.0.1:${postgres().port}/${databaseOf(url)}`;
    expect(await fails(url)).toBe(
      `a2a-statecharts status: PostgreSQL store (${target}): schema a2a has no a2a-statecharts tables: is --schema right?`,
    );
    await postgres().query("CREATE SCHEMA other; CREATE TABLE other.things (id int)", [], databaseOf(url));
    expect(await fails(url, "--schema", "other")).toContain("schema other has no a2a-statecharts tables");
  });

  it("a login that may not read the store's schema", async () => {
    const url = await postgres().createDatabase();
    await gatewayProcess(url);
    const login = postgres().passwordLogin;
    const said = await fails(postgres().connectionString(databaseOf(url), login));
    expect(said).toMatch(
      /permission denied \(permission denied for schema a2a\): reading the store needs USAGE on schema "a2a" and SELECT on its tables$/,
    );
    expect(said).not.toContain(login.password);
    // The password from PGPASSWORD instead of the URL: the login succeeds, the same permission is missing.
    vi.stubEnv("PGPASSWORD", login.password);
    try {
      expect(await fails(postgres().connectionString(databaseOf(url), { user: login.user }))).toBe(said);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe("status --postgres: bounded and optional", { timeout: 30_000 }, () => {
  it("refuses a statement timeout that is not a whole number of milliseconds", async () => {
    await expect(
      readPostgresStatus({ connectionString: "postgresql://a2a@127.0.0.1:1/db", statementTimeoutMs: 0.5 }),
    ).rejects.toThrow(
      "readPostgresStatus: statementTimeoutMs must be a whole number of milliseconds ≥ 1, got 0.5",
    );
  });

  it("gives up on a query the server cannot answer within statementTimeoutMs (a lock held on the tables)", async () => {
    const url = await postgres().createDatabase();
    await gatewayProcess(url);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("LOCK TABLE a2a.actors IN ACCESS EXCLUSIVE MODE");
      const read = readPostgresStatus({ connectionString: url, statementTimeoutMs: 300 });
      await expect(read).rejects.toBeInstanceOf(PostgresStoreError);
      await expect(read).rejects.toThrow(
        "a query ran longer than 300 ms and was cancelled: the server is overloaded, or a transaction holds a lock on the store's tables",
      );
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
  });

  // Run by Node itself with pg made unresolvable, as on an install without it: status still loads, and
  // --postgres says what to install.
  it("without the pg package, --postgres says to install it; a usage error is still one (exit 2)", async () => {
    const root = resolve(import.meta.dirname, "../..");
    const hook = `export async function resolve(specifier, context, next) {
      if (specifier !== "pg") return next(specifier, context);
      throw Object.assign(new Error("Cannot find package 'pg' imported from here"), { code: "ERR_MODULE_NOT_FOUND" });
    }`;
    const script = `
      import { register } from "node:module";
      register("data:text/javascript," + encodeURIComponent(${JSON.stringify(hook)}));
      const { main } = await import(${JSON.stringify(join(root, "src/cli/main.ts"))});
      for (const store of [
        ["--state-dir", "/no-such-a2a-state"],
        ["--postgres", "postgresql://a2a@127.0.0.1:1/gateway"],
        ["--postgres", "postgresql://a2a@127.0.0.1:1/gateway", "--schema", "Bad-Name"],
        ["--postgres", " "],
      ]) {
        console.log("exit " + (await main(["status", ...store], console.log, console.log)));
      }
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { cwd: root },
    );
    expect(stdout.trim().split("\n")).toEqual([
      "a2a-statecharts status: state directory /no-such-a2a-state does not exist",
      "exit 1",
      "a2a-statecharts status: this command needs pg, which is not installed: npm install pg",
      "exit 1",
      // A usage error is one whether pg is there or not.
      'a2a-statecharts status: --schema must be a lower-case SQL name (letters, digits, _; at most 63), got "Bad-Name" (see --help)',
      "exit 2",
      "a2a-statecharts status: --postgres needs a connection string (postgresql://user@host:5432/database), got an empty string (see --help)",
      "exit 2",
    ]);
  });
});

describe("status --postgres: usage errors exit 2 before connecting", () => {
  it.each([
    [
      ["--postgres", "postgresql://x@127.0.0.1:1/db", "--state-dir", "dir"],
      "--state-dir and --postgres name two different stores",
    ],
    [["--schema", "a2a"], "--schema names a PostgreSQL schema: use it with --postgres URL"],
    [
      ["--postgres", "postgresql://x@127.0.0.1:1/db", "--schema", "Bad-Name"],
      '--schema must be a lower-case SQL name (letters, digits, _; at most 63), got "Bad-Name"',
    ],
    [["--postgres", " "], "--postgres needs a connection string"],
    [["--postgres"], "Option '--postgres <value>' argument missing"],
  ])("%j", async (argv, problem) => {
    const run = await status(...argv);
    expect(run.code).toBe(2);
    expect(run.err).toHaveLength(1);
    expect(run.stderr).toContain(problem);
  });
});
