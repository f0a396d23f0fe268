/**
 * A real, throwaway PostgreSQL server for the tests and benchmarks of the PostgreSQL store: Debian's
 * `postgresql` package (the newest /usr/lib/postgresql/<major>/bin), a fresh cluster per call, removed
 * after. No mock of the database.
 *
 *   const server = await startPostgres();      // ~1 s: initdb --no-sync, then pg_ctl start
 *   const url = await server.createDatabase(); // a database of its own for one test
 *   await server.restart();                    // a database restart (pg_ctl restart -m fast)
 *   await server.stopServer("immediate");      // a crash (connections refused) ...
 *   await server.startServer();                // ... then recovery
 *   await server.terminateConnections();       // a connection loss, the server staying up
 *   await server.close();                      // stops the server, removes the cluster
 *
 * or, in a test file: `const postgres = usePostgres();` then `postgres().connectionString()`.
 *
 * - **User.** initdb refuses to run as root: as root (CI, containers) every server binary runs as the
 *   `postgres` user the package creates (spawned with its uid/gid), on a cluster directory that user
 *   owns. As anyone else they run as that user.
 * - **Where.** The cluster lives in one directory (data, log, unix socket). As root it goes to the OS
 *   temp folder, or /tmp when the `postgres` user cannot reach that (a test run's private TMPDIR):
 *   outside the run's folder, so it is removed here, not by the run's leftover check.
 * - **Nothing left behind.** A watchdog process (`sh`, holding a pipe from this process) stops the
 *   server and removes the directory when the pipe closes: on close(), and also when this process
 *   dies without calling it (a killed test worker, Ctrl-C).
 * - **Listening.** 127.0.0.1 on a free port below the kernel's ephemeral range (so no other socket
 *   is given it while the server restarts), and a unix socket in the cluster directory. Connections
 *   are trusted, except for `passwordLogin.user` over TCP, which needs its password (scram-sha-256):
 *   the role a test of wrong credentials uses.
 * - **Speed, not durability.** fsync=off and full_page_writes=off: commits survive a killed server
 *   process (the kernel keeps the writes), not a power loss. synchronous_commit stays on, so a commit
 *   the server acknowledged survives `stopServer("immediate")`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";

/** How `pg_ctl stop` ends the server: `fast` disconnects clients and shuts down cleanly; `immediate` is a crash (recovery on the next start); `smart` waits for clients to leave. */
export type StopMode = "smart" | "fast" | "immediate";

export interface PostgresServer {
  /** The server's major version (15 on Debian 12). */
  readonly version: number;
  /** 127.0.0.1 */
  readonly host: string;
  /** The TCP port, also the unix socket's number (`<socketDir>/.s.PGSQL.<port>`). */
  readonly port: number;
  /** The directory of the unix socket (the cluster directory). */
  readonly socketDir: string;
  /** The superuser every connection string logs in as unless told otherwise. */
  readonly superuser: string;
  /** A login role that must give its password over TCP (created with no other privilege). */
  readonly passwordLogin: { readonly user: string; readonly password: string };
  /** `postgresql://…@127.0.0.1:<port>/<database>` as the superuser, or as `login` (with its password if given). */
  connectionString(database?: string, login?: { user: string; password?: string }): string;
  /** Creates a database (a fresh unique name when none is given) and returns its connection string. */
  createDatabase(name?: string): Promise<string>;
  /** One statement as the superuser over the unix socket, on its own connection: its rows. */
  query<Row extends Record<string, unknown> = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    database?: string,
  ): Promise<Row[]>;
  /** Ends every client connection to `database` (all databases when omitted) but this one's: a connection loss without a restart. Returns how many. */
  terminateConnections(database?: string): Promise<number>;
  /** A database restart: `pg_ctl restart -m fast` (clients are disconnected, the data stays). */
  restart(): Promise<void>;
  /** Stops the server (connections are refused until startServer()). */
  stopServer(mode?: StopMode): Promise<void>;
  /** Starts the stopped server again on the same port and socket. */
  startServer(): Promise<void>;
  /** The postmaster's process id while the server runs, else undefined. */
  pid(): number | undefined;
  /** The server's log so far. */
  log(): Promise<string>;
  /** Stops the server and removes its directory. Safe to call twice. */
  close(): Promise<void>;
}

export interface StartPostgresOptions {
  /** The directory holding initdb, pg_ctl and postgres; default: the newest /usr/lib/postgresql/<major>/bin. */
  binDir?: string;
  /** Extra postgresql.conf settings, e.g. `{ max_connections: "300" }`. */
  settings?: Record<string, string>;
}

const INSTALL_HINT = "install Debian's postgresql package: apt-get install -y postgresql";
const SUPERUSER = "postgres";
const PASSWORD_USER = "a2a_password";
const NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The newest installed /usr/lib/postgresql/<major>/bin with initdb, or a clear error. */
export function findPostgresBinaries(root = "/usr/lib/postgresql"): { binDir: string; version: number } {
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, "bin", "initdb")))
        .map(Number)
        .sort((a, b) => b - a)
    : [];
  const newest = majors[0];
  if (newest === undefined) {
    throw new Error(`PostgreSQL server binaries not found (no ${root}/<major>/bin/initdb): ${INSTALL_HINT}`);
  }
  return { binDir: join(root, String(newest), "bin"), version: newest };
}

/** Starts a fresh PostgreSQL cluster; see the top of this file. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const { binDir, version } =
    options.binDir === undefined ? findPostgresBinaries() : binariesIn(options.binDir);
  const runAs = await serverUser();
  const dir = await mkdtemp(join(clusterParent(runAs), "a2a-pg-"));
  const dataDir = join(dir, "data");
  const logFile = join(dir, "server.log");
  const bin = (name: string) => join(binDir, name);
  const run = (name: string, args: string[]) => runBinary(bin(name), args, runAs, dir);
  let watchdog: ChildProcess | undefined;
  try {
    if (runAs !== undefined) await chown(dir, runAs.uid, runAs.gid);
    watchdog = startWatchdog(bin("pg_ctl"), dataDir, dir, runAs);
    const initdbFlags = "-A trust -E UTF8 --locale=C --no-sync --no-instructions".split(" ");
    await run("initdb", ["-D", dataDir, "-U", SUPERUSER, ...initdbFlags]);
    await writeFile(
      join(dataDir, "pg_hba.conf"),
      [
        "local all all trust",
        `host all ${PASSWORD_USER} 127.0.0.1/32 scram-sha-256`,
        "host all all 127.0.0.1/32 trust",
        "",
      ].join("\n"),
    );
    const start = () => run("pg_ctl", ["start", "-D", dataDir, "-l", logFile, "-w", "-t", "30"]);
    const port = await startOnFreePort(dataDir, dir, options.settings ?? {}, start, () => readLog(logFile));
    const password = randomBytes(12).toString("hex");
    const server = makeServer({ version, port, dir, dataDir, logFile, password, run, watchdog });
    await server.query(`CREATE ROLE ${PASSWORD_USER} LOGIN PASSWORD '${password}'`);
    return server;
  } catch (error) {
    await reap(watchdog, dir);
    throw error;
  }
}

/**
 * For a test file: one server for all its tests, started before them and closed after them. Call at
 * the top level or inside a `describe`; the returned function gives the server inside a test.
 */
export function usePostgres(options?: StartPostgresOptions): () => PostgresServer {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await startPostgres(options);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    server = undefined;
  }, 60_000);
  return () => {
    if (server === undefined)
      throw new Error("usePostgres(): the server is not started (use it inside a test)");
    return server;
  };
}

interface RunAs {
  uid: number;
  gid: number;
}
type Run = (name: string, args: string[]) => Promise<string>;

function makeServer(parts: {
  version: number;
  port: number;
  dir: string;
  dataDir: string;
  logFile: string;
  password: string;
  run: Run;
  watchdog: ChildProcess;
}): PostgresServer {
  const { port, dir, dataDir, logFile, run, watchdog } = parts;
  let databases = 0;
  let closed = false;
  const pgCtl = async (args: string[], what: string) => {
    try {
      await run("pg_ctl", [...args, "-D", dataDir, "-w", "-t", "30"]);
    } catch (error) {
      throw new Error(`${what} failed: ${message(error)}\n${tail(await readLog(logFile))}`, { cause: error });
    }
  };
  const server: PostgresServer = {
    version: parts.version,
    host: "127.0.0.1",
    port,
    socketDir: dir,
    superuser: SUPERUSER,
    passwordLogin: { user: PASSWORD_USER, password: parts.password },
    connectionString(database = "postgres", login = { user: SUPERUSER }) {
      const secret = login.password === undefined ? "" : `:${encodeURIComponent(login.password)}`;
      return `postgresql://${encodeURIComponent(login.user)}${secret}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
    },
    async createDatabase(name) {
      databases += 1;
      const database = name ?? `test_${databases}_${randomBytes(3).toString("hex")}`;
      if (!NAME.test(database)) {
        throw new Error(
          `createDatabase: "${database}" is not a plain database name (a-z, 0-9, _; at most 63)`,
        );
      }
      await server.query(`CREATE DATABASE ${database}`);
      return server.connectionString(database);
    },
    async query<Row extends Record<string, unknown>>(sql: string, params?: unknown[], database = "postgres") {
      const client = new pg.Client({ host: dir, port, user: SUPERUSER, database });
      await client.connect();
      try {
        return (await client.query<Row>(sql, params)).rows;
      } finally {
        await client.end();
      }
    },
    async terminateConnections(database) {
      const rows = await server.query<{ ended: string }>(
        `SELECT count(pg_terminate_backend(pid)) AS ended FROM pg_stat_activity
          WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'
            AND ($1::text IS NULL OR datname = $1)`,
        [database ?? null],
      );
      return Number(rows[0]?.ended ?? 0);
    },
    restart: () => pgCtl(["restart", "-m", "fast", "-l", logFile], "pg_ctl restart"),
    stopServer: (mode = "fast") => pgCtl(["stop", "-m", mode], `pg_ctl stop -m ${mode}`),
    startServer: () => pgCtl(["start", "-l", logFile], "pg_ctl start"),
    pid() {
      // postmaster.pid's first line is the postmaster's process id; the file exists while it runs.
      const pid = Number(readText(join(dataDir, "postmaster.pid")).split("\n")[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    },
    log: () => readLog(logFile),
    async close() {
      if (closed) return;
      closed = true;
      await reap(watchdog, dir);
    },
  };
  return server;
}

/** Picks a free port, writes the settings and starts; another process may take the port first: retried. */
async function startOnFreePort(
  dataDir: string,
  dir: string,
  extra: Record<string, string>,
  start: () => Promise<string>,
  log: () => Promise<string>,
): Promise<number> {
  const conf = join(dataDir, "postgresql.conf");
  const base = await readFile(conf, "utf8");
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const settings: Record<string, string> = {
      listen_addresses: "'127.0.0.1'",
      port: String(port),
      unix_socket_directories: `'${dir}'`,
      fsync: "off",
      full_page_writes: "off",
      max_connections: "200",
      shared_buffers: "32MB",
      ...extra,
    };
    const lines = Object.entries(settings).map(([key, value]) => `${key} = ${value}`);
    await writeFile(conf, `${base}\n# test/support/postgres.ts\n${lines.join("\n")}\n`);
    try {
      await start();
      return port;
    } catch (error) {
      const text = await log();
      if (attempt < 5 && /could not bind|Address already in use/i.test(text)) continue;
      throw new Error(`PostgreSQL did not start: ${message(error)}\n${tail(text)}`, { cause: error });
    }
  }
}

/**
 * A free port below the kernel's ephemeral range. A port from `listen(0)` is in that range, and while
 * the server is down (a restart, a crash) any socket bound or connected elsewhere can be given it, and
 * the server then cannot bind it again. No socket is handed a port below the range unless it asks.
 */
async function freePort(): Promise<number> {
  const low = ephemeralLow();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low - 1 - Math.floor(Math.random() * (low - PORTS_FROM));
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port between ${PORTS_FROM} and ${low - 1} in 50 tries`);
}

/** The lowest port the kernel hands out unasked (Linux's ip_local_port_range; its default elsewhere). */
export function ephemeralLow(): number {
  const text = readText("/proc/sys/net/ipv4/ip_local_port_range");
  const low = Number(text.trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low > PORTS_FROM + 1000 ? low : 32768;
}

/** Ports are picked from here up to the ephemeral range: above the well-known services. */
const PORTS_FROM = 20000;

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/**
 * The watchdog: waits for its stdin to close (close(), or this process's death), then stops the
 * server and removes the directory. It ignores the terminal's signals so a Ctrl-C that kills the test
 * process still gets the cleanup, and it holds no reference that would keep this process alive.
 */
function startWatchdog(pgCtl: string, dataDir: string, dir: string, runAs: RunAs | undefined): ChildProcess {
  const script = [
    "trap '' INT TERM HUP",
    "cat >/dev/null",
    '"$1" stop -D "$2" -m fast -w -t 10 >/dev/null 2>&1 || "$1" stop -D "$2" -m immediate -w >/dev/null 2>&1',
    'rm -rf "$3"',
  ].join("\n");
  const child = spawn("/bin/sh", ["-c", script, "a2a-pg-watchdog", pgCtl, dataDir, dir], {
    cwd: "/",
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
    ...runAs,
  });
  child.unref();
  (child.stdin as unknown as { unref(): void }).unref();
  return child;
}

async function reap(watchdog: ChildProcess | undefined, dir: string): Promise<void> {
  if (watchdog !== undefined && watchdog.exitCode === null && watchdog.signalCode === null) {
    const exited = new Promise<void>((resolve) => watchdog.once("exit", () => resolve()));
    watchdog.ref(); // unreferenced until now: this process waits for it here
    watchdog.stdin?.end();
    await exited;
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

function runBinary(file: string, args: string[], runAs: RunAs | undefined, cwd: string): Promise<string> {
  // Variables such as PGDATA or PGPORT in the caller's shell must not steer the test server.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("PG")));
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { cwd, env: { ...env, LC_ALL: "C", LANG: "C" }, timeout: 60_000, ...runAs },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else
          reject(new Error(`${file} ${args.join(" ")}: ${stderr.trim() || error.message}`, { cause: error }));
      },
    );
  });
}

function binariesIn(binDir: string): { binDir: string; version: number } {
  for (const name of ["initdb", "pg_ctl", "postgres"]) {
    if (!existsSync(join(binDir, name))) {
      throw new Error(
        `PostgreSQL server binaries not found: ${join(binDir, name)} is missing (${INSTALL_HINT})`,
      );
    }
  }
  const version = Number(/(\d+)[/\\]bin\/?$/.exec(binDir)?.[1] ?? Number.NaN);
  return { binDir, version };
}

/** As root, the unprivileged user the servers run as (Debian's `postgres`); otherwise none. */
async function serverUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const passwd = await readFile("/etc/passwd", "utf8").catch(() => "");
  const entry = passwd.split("\n").find((line) => line.startsWith(`${SUPERUSER}:`));
  const [, , uid, gid] = entry?.split(":") ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error(
      `running as root, and initdb refuses root: no "${SUPERUSER}" user to run the server as (${INSTALL_HINT}, which creates it)`,
    );
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/** The OS temp folder, or /tmp when another user (the server's) cannot reach into it. */
function clusterParent(runAs: RunAs | undefined): string {
  const temp = tmpdir();
  if (runAs === undefined) return temp;
  for (let at = temp; ; at = dirname(at)) {
    if ((statSync(at).mode & 0o001) === 0) return "/tmp";
    if (dirname(at) === at) return temp;
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

async function readLog(file: string): Promise<string> {
  return readFile(file, "utf8").catch(() => "");
}

function tail(text: string, lines = 20): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
