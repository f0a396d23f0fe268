// test/support/postgres.ts: the throwaway PostgreSQL the store's tests run against really is a server
// (reached with `pg`), survives what the fault tests do to it (restart, crash, dropped connections),
// and leaves neither a directory nor a process behind, even when the process that started it is killed.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { until } from "../support/discordClients.js";
import { ephemeralLow, findPostgresBinaries, startPostgres, usePostgres } from "../support/postgres.js";

const SUPPORT = fileURLToPath(new URL("../support/postgres.ts", import.meta.url));

async function withClient<T>(
  config: string | pg.ClientConfig,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether the process runs. A zombie does not (in a container whose init reaps no orphans, it stays one). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** A connected client and the error it reports when the server cuts its connection. */
async function connectedClient(
  url: string,
): Promise<{ client: pg.Client; cut: Promise<Error & { code?: string }> }> {
  const client = new pg.Client(url);
  const cut = new Promise<Error & { code?: string }>((resolve) => client.on("error", resolve)); // a cut connection reports more than once
  await client.connect();
  return { client, cut };
}

describe("startPostgres / usePostgres", () => {
  const postgres = usePostgres();

  it("is a real server: pg connects over 127.0.0.1 and the unix socket, and createDatabase gives a database of its own", async () => {
    const server = postgres();
    expect(server.version).toBeGreaterThanOrEqual(13);
    const version = await withClient(server.connectionString(), async (c) => {
      const { rows } = await c.query<{ server_version_num: string }>("SHOW server_version_num");
      return Number(rows[0]?.server_version_num);
    });
    expect(Math.floor(version / 10_000)).toBe(server.version);

    const url = await server.createDatabase();
    const other = await server.createDatabase();
    expect(url).not.toBe(other);
    const name = await withClient(url, async (c) => {
      await c.query("CREATE TABLE t (v int)");
      return (await c.query<{ db: string }>("SELECT current_database() AS db")).rows[0]?.db;
    });
    expect(url.endsWith(`/${name}`)).toBe(true);
    // The table is in that database only.
    const elsewhere = await withClient(other, (c) => c.query("SELECT to_regclass('t') AS t"));
    expect(elsewhere.rows[0]).toEqual({ t: null });
    // Over the socket, as query() does.
    const socket = await withClient(
      { host: server.socketDir, port: server.port, user: server.superuser, database: name },
      (c) => c.query("SELECT count(*)::int AS n FROM t"),
    );
    expect(socket.rows[0]).toEqual({ n: 0 });
  });

  it("listens below the kernel's ephemeral range: while it restarts, no other socket can be given its port", () => {
    // A port from listen(0) is in that range; in a full test run other processes bind and connect
    // all the time, and one given the port while the server is down keeps the server from binding it.
    expect(postgres().port).toBeLessThan(ephemeralLow());
    expect(postgres().port).toBeGreaterThanOrEqual(1024);
  });

  it("createDatabase refuses a name that is not a plain identifier, naming it", async () => {
    await expect(postgres().createDatabase('x"; DROP DATABASE postgres; --')).rejects.toThrow(
      /createDatabase: "x"; DROP.*not a plain database name/,
    );
  });

  it("the password login needs its password over TCP: wrong and missing passwords are refused", async () => {
    const server = postgres();
    const { user, password } = server.passwordLogin;
    const who = await withClient(server.connectionString("postgres", { user, password }), (c) =>
      c.query<{ who: string }>("SELECT current_user AS who"),
    );
    expect(who.rows[0]?.who).toBe(user);
    await expect(
      withClient(server.connectionString("postgres", { user, password: "wrong" }), (c) =>
        c.query("SELECT 1"),
      ),
    ).rejects.toMatchObject({ code: "28P01" }); // invalid_password
    await expect(
      withClient({ host: "127.0.0.1", port: server.port, user, password: "", database: "postgres" }, (c) =>
        c.query("SELECT 1"),
      ),
    ).rejects.toThrow();
  });

  it("restart() is a database restart: open connections are cut, a new postmaster serves the committed data", async () => {
    const server = postgres();
    const url = await server.createDatabase();
    await withClient(url, (c) => c.query("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before')"));
    const before = server.pid();
    const { client, cut } = await connectedClient(url);
    try {
      await server.restart();
      expect(await cut).toMatchObject({ code: "57P01" }); // admin_shutdown
    } finally {
      await client.end().catch(() => undefined);
    }
    expect(server.pid()).not.toBe(before);
    expect(before !== undefined && alive(before)).toBe(false);
    const rows = await withClient(url, (c) => c.query("SELECT v FROM kept"));
    expect(rows.rows).toEqual([{ v: "before" }]);
  });

  it("stopServer('immediate') is a crash: connections are refused until startServer(), and an acknowledged commit survives", async () => {
    const server = postgres();
    const url = await server.createDatabase();
    await withClient(url, (c) => c.query("CREATE TABLE acked (v int); INSERT INTO acked VALUES (1)"));
    await server.stopServer("immediate");
    expect(server.pid()).toBeUndefined();
    await expect(withClient(url, (c) => c.query("SELECT 1"))).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await server.startServer();
    const rows = await withClient(url, (c) => c.query("SELECT v FROM acked"));
    expect(rows.rows).toEqual([{ v: 1 }]);
    expect(await server.log()).toMatch(/database system was interrupted|not properly shut down/);
  });

  it("terminateConnections() cuts the clients of one database and no other", async () => {
    const server = postgres();
    const [a, b] = [await server.createDatabase(), await server.createDatabase()];
    const cut = await connectedClient(a);
    const spared = await connectedClient(b);
    try {
      const database = a.slice(a.lastIndexOf("/") + 1);
      expect(await server.terminateConnections(database)).toBe(1);
      expect(await cut.cut).toMatchObject({ code: "57P01" }); // admin_shutdown: pg_terminate_backend
      expect((await spared.client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await Promise.all([cut.client.end().catch(() => undefined), spared.client.end()]);
    }
  });
});

describe("a server's lifetime", () => {
  it("close() stops the server process and removes its directory; a second close() is harmless", async () => {
    const server = await startPostgres();
    const pid = server.pid();
    expect(pid).toBeDefined();
    expect(existsSync(server.socketDir)).toBe(true);
    await server.close();
    expect(existsSync(server.socketDir)).toBe(false);
    expect(alive(pid ?? 0)).toBe(false);
    await server.close();
  });

  it("a killed test process leaves nothing either: the watchdog stops the server and removes the directory", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { startPostgres } from ${JSON.stringify(SUPPORT)};
         const server = await startPostgres();
         console.log(JSON.stringify({ dir: server.socketDir, pid: server.pid() }));
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const started = await new Promise<{ dir: string; pid: number }>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("\n")) resolve(JSON.parse(out) as { dir: string; pid: number });
      });
      child.once("exit", (code) =>
        reject(new Error(`the child exited with ${code} before starting a server`)),
      );
    });
    expect(existsSync(started.dir)).toBe(true);
    expect(alive(started.pid)).toBe(true);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    await until(() => !existsSync(started.dir) && !alive(started.pid), "the watchdog's clean-up", 20_000);
  }, 30_000);

  it("without the server binaries, the error says what to install", () => {
    expect(() => findPostgresBinaries("/nonexistent/postgresql")).toThrow(
      "PostgreSQL server binaries not found (no /nonexistent/postgresql/<major>/bin/initdb): install Debian's postgresql package: apt-get install -y postgresql",
    );
    return expect(startPostgres({ binDir: "/nonexistent/bin" })).rejects.toThrow(
      /\/nonexistent\/bin\/initdb is missing \(install Debian's postgresql package: apt-get install -y postgresql\)/,
    );
  });
});
