// Which PostgreSQL driver should the PostgreSQL store use: `pg` (node-postgres) or `postgres`
// (postgres.js)? Both run the store's own work against one throwaway server (test/support/postgres.ts),
// side by side in one run, alternating by round so drift on a shared machine hits both alike:
//   (a) a batch put: one transaction upserting 1, 10 or 100 actor records (~2 KB of JSON each) with one
//       statement (arrays through unnest), fenced: `ON CONFLICT (id) DO UPDATE … WHERE actors.owner = me`;
//   (b) a get: one record by id;
//   (c) 8 writers at once through a pool of 8, each a one-record batch put on its own records.
// `pg` runs twice: unnamed statements (what pool.query(text, values) does) and named prepared
// statements (what postgres.js does by default). Then each driver's installed size with its dependencies.
// Run: npx tsx bench/pgDriver.bench.ts [--seconds 1] [--rounds 4]
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import pg from "pg";
import postgres from "postgres";
import { startPostgres } from "../test/support/postgres.js";

function option(name: string, fallback: string): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = Number((at >= 0 ? process.argv[at + 1] : undefined) ?? fallback);
  if (!(value > 0)) throw new Error(`--${name} must be a positive number`);
  return value;
}

const SECONDS = option("seconds", "1");
const ROUNDS = option("rounds", "4");
const WRITERS = 8;
const ME = "owner-a";
const RECORDS = 1_000; // the ids batches cycle through (all owned by ME)

const SCHEMA = `
  CREATE TABLE actors (id text PRIMARY KEY, record jsonb NOT NULL, status text NOT NULL,
                       owner text, updated_at timestamptz NOT NULL DEFAULT now());
  INSERT INTO actors (id, record, status, owner) VALUES ('fenced-out', '{}', 'active', 'owner-b');`;
// $1 ids, $2 records (JSON text), $3 statuses, $4 the writing process: what the store's put does.
const PUT = `
  INSERT INTO actors (id, record, status, owner, updated_at)
  SELECT t.id, t.record::jsonb, t.status, $4, now() FROM unnest($1::text[], $2::text[], $3::text[]) AS t(id, record, status)
  ON CONFLICT (id) DO UPDATE SET record = excluded.record, status = excluded.status, updated_at = excluded.updated_at
  WHERE actors.owner = $4
  RETURNING id`;
const GET = "SELECT record, status, owner FROM actors WHERE id = $1";

/** ~2 KB once serialised: an XState persisted snapshot with some context text and a timer. */
function record(i: number, at: number): string {
  return JSON.stringify({
    id: `mention:${1_000_000_000_000_000 + i * 7919}`,
    machineId: "mention",
    machineVersion: 1,
    snapshot: {
      status: "active",
      value: { awaitingResponse: "waiting" },
      context: { attempts: 1, threadId: "1234567890123456789", text: "x".repeat(1_700), sentAt: at },
      children: {},
      historyValue: {},
    },
    delayed: [{ id: "remind", source: [], target: [], event: { type: "REMIND" }, dueAt: at + 300_000 }],
    status: "active",
    updatedAt: at,
  });
}

/** One driver: the three operations, each resolving when the database has answered. */
interface Driver {
  name: string;
  put(ids: string[], records: string[], statuses: string[]): Promise<number>;
  get(id: string): Promise<unknown>;
  end(): Promise<void>;
}

function nodePostgres(url: string, prepared: boolean): Driver {
  const pool = new pg.Pool({ connectionString: url, max: WRITERS });
  const named = (name: string, text: string, values: unknown[]) =>
    prepared ? { name, text, values } : { text, values };
  return {
    name: prepared ? "pg (prepared)" : "pg",
    async put(ids, records, statuses) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await client.query(named("put", PUT, [ids, records, statuses, ME]));
        await client.query("COMMIT");
        return result.rowCount ?? 0;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async get(id) {
      return (await pool.query(named("get", GET, [id]))).rows[0];
    },
    end: () => pool.end(),
  };
}

function postgresJs(url: string): Driver {
  const sql = postgres(url, { max: WRITERS, onnotice: () => {} });
  return {
    name: "postgres.js",
    async put(ids, records, statuses) {
      const rows = await sql.begin((tx) => tx.unsafe(PUT, [ids, records, statuses, ME], { prepare: true }));
      return rows.length;
    },
    async get(id) {
      return (await sql.unsafe(GET, [id], { prepare: true }))[0];
    },
    end: () => sql.end({ timeout: 5 }),
  };
}

interface Sample {
  ops: number;
  seconds: number;
  latencies: number[];
  /** ops/s of each round on its own: how far the shared machine moved the figures. */
  rates: number[];
}

/** `workers` loops calling `op` until the time is up; every call's latency. */
async function measure(workers: number, op: (worker: number, n: number) => Promise<void>): Promise<Sample> {
  const latencies: number[] = [];
  const start = performance.now();
  const until = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let n = 0; performance.now() < until; n++) {
        const began = performance.now();
        await op(worker, n);
        latencies.push(performance.now() - began);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { ops: latencies.length, seconds, latencies, rates: [latencies.length / seconds] };
}

function batch(size: number, n: number, offset = 0): [string[], string[], string[]] {
  const at = 1_700_000_000_000 + n;
  const ids = Array.from({ length: size }, (_, k) => `a${(offset + n * size + k) % RECORDS}`);
  return [ids, ids.map((_, k) => record(n * size + k, at)), ids.map(() => "active")];
}

const WORKLOADS: Array<{
  label: string;
  workers: number;
  op: (d: Driver) => (w: number, n: number) => Promise<void>;
}> = [1, 10, 100]
  .map((size) => ({
    label: `(a) batch put of ${size}`,
    workers: 1,
    op: (d: Driver) => async (_w: number, n: number) => expectRows(await d.put(...batch(size, n)), size),
  }))
  .concat([
    {
      label: "(b) get by id",
      workers: 1,
      op: (d: Driver) => async (_w: number, n: number) => {
        if ((await d.get(`a${n % RECORDS}`)) === undefined)
          throw new Error(`${d.name}: a${n % RECORDS} missing`);
      },
    },
    {
      label: `(c) ${WRITERS} writers, put of 1`,
      workers: WRITERS,
      // Each writer its own slice of the ids: no two transactions wait on one row's lock.
      op: (d: Driver) => async (w: number, n: number) =>
        expectRows(await d.put(...batch(1, n % (RECORDS / WRITERS), w * (RECORDS / WRITERS))), 1),
    },
  ]);

function expectRows(got: number, want: number): void {
  if (got !== want) throw new Error(`a put returned ${got} rows, expected ${want}`);
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

/** Disk usage (du -sk) of a package and everything it depends on, and how many packages that is. */
async function installedSize(root: string, name: string): Promise<{ kb: number; packages: number }> {
  const seen = new Set<string>();
  const visit = (pkg: string) => {
    const dir = join(root, "node_modules", pkg);
    if (seen.has(dir) || !existsSync(dir)) return;
    seen.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) visit(dep);
  };
  visit(name);
  const { stdout } = await promisify(execFile)("du", ["-skc", ...seen]);
  const total = /^(\d+)\s+total$/m.exec(stdout)?.[1];
  return { kb: Number(total), packages: seen.size };
}

const server = await startPostgres();
try {
  const url = await server.createDatabase("bench");
  await server.query(SCHEMA, undefined, "bench");
  const drivers = [nodePostgres(url, false), nodePostgres(url, true), postgresJs(url)];
  try {
    // Every record exists and is owned by ME (so puts take the DO UPDATE path), and the fence holds
    // for each driver: a record another process owns is left alone.
    for (let n = 0; n < RECORDS / 100; n++) await drivers[0]?.put(...batch(100, n));
    for (const d of drivers) {
      expectRows(await d.put(["fenced-out"], [record(0, 0)], ["active"]), 0);
      for (let n = 0; n < 50; n++) await d.put(...batch(10, n)); // warm-up: connections, plans
    }
    const samples = new Map<string, Sample>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const w of WORKLOADS) {
        for (const d of round % 2 === 0 ? drivers : [...drivers].reverse()) {
          const s = await measure(w.workers, w.op(d));
          const key = `${w.label}|${d.name}`;
          const prior = samples.get(key);
          samples.set(key, {
            ops: s.ops + (prior?.ops ?? 0),
            seconds: s.seconds + (prior?.seconds ?? 0),
            latencies: [...(prior?.latencies ?? []), ...s.latencies],
            rates: [...(prior?.rates ?? []), ...s.rates],
          });
        }
      }
    }
    const cell = (label: string, name: string) => {
      const s = samples.get(`${label}|${name}`);
      if (s === undefined) return { rate: Number.NaN, rates: [], text: "?" };
      const sorted = [...s.latencies].sort((a, b) => a - b);
      const rate = s.ops / s.seconds;
      return {
        rate,
        rates: s.rates,
        text: `${Math.round(rate).toLocaleString("en-US")}/s, p50 ${quantile(sorted, 0.5).toFixed(2)} ms, p99 ${quantile(sorted, 0.99).toFixed(2)} ms`,
      };
    };
    console.log(
      `PostgreSQL ${server.version} (fsync off, 127.0.0.1), pg ${version("pg")} and postgres.js ${version("postgres")}: ` +
        `${ROUNDS} rounds × ${SECONDS} s per workload and driver, alternating; transactions/s (gets/s for (b)), latency per call\n`,
    );
    console.log(
      "| workload | pg | pg (prepared) | postgres.js | postgres.js ÷ pg | postgres.js ÷ pg (prepared) | postgres.js ÷ pg (prepared), per round |",
    );
    console.log("|---|---|---|---|---|---|---|");
    for (const w of WORKLOADS) {
      const [a, b, c] = [cell(w.label, "pg"), cell(w.label, "pg (prepared)"), cell(w.label, "postgres.js")];
      console.log(
        `| ${w.label} | ${a.text} | ${b.text} | ${c.text} | ${(c.rate / a.rate).toFixed(2)} | ${(c.rate / b.rate).toFixed(2)} | ` +
          `${c.rates.map((r, i) => (r / (b.rates[i] ?? Number.NaN)).toFixed(2)).join(" ")} |`,
      );
    }
  } finally {
    await Promise.all(drivers.map((d) => d.end()));
  }
} finally {
  await server.close();
}

console.log("\n| driver | installed size with its dependencies (du -sk) | packages |");
console.log("|---|---|---|");
for (const name of ["pg", "postgres"]) {
  const size = await installedSize(join(import.meta.dirname, ".."), name);
  console.log(`| ${name} | ${size.kb.toLocaleString("en-US")} KB | ${size.packages} |`);
}

function version(name: string): string {
  const manifest = join(import.meta.dirname, "..", "node_modules", name, "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}
