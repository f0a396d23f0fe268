import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import pg from "pg";
import {
  type ActorRecord,
  type ActorRecordRules,
  ActorTakenOverError,
  checkActorRecord,
  ownRules,
  type RecordForPut,
  recordForPut,
} from "../actorRecord.js";
import { errorText } from "../DurableJsonFile.js";
import {
  checkMachineVersions,
  emptyOpenReport,
  type SnapshotStoreOpenReport,
} from "../snapshotStoreOptions.js";
import {
  checkCutoff,
  checkListKind,
  type LiveRecordFilter,
  type SharedSnapshotStore,
  type SnapshotStoreOpenOptions,
  SnapshotStoreInUseError,
  SnapshotStoreNotOpenError,
  type StoredDelivery,
} from "../SnapshotStorePort.js";
import { BatchedGets } from "./batchedGets.js";
import { GroupCommit } from "./groupCommit.js";
import { migrate, quoteIdentifier } from "./migrations.js";
import { Ownership } from "./ownership.js";
import { Presence } from "./presence.js";
import { codeOf, describeTarget, openFailure } from "./postgresErrors.js";
import { queryTimeout, renewalTimeout, type ResolvedPostgresStoreOptions } from "./postgresStoreOptions.js";
import { named, putRecords, quarantineRecords, releaseOwner } from "./statements.js";

/** What the store holds while open. */
interface Opened {
  pool: pg.Pool;
  /** The lease's own connection. */
  lease: pg.Pool;
  presence: Presence;
  owner: string;
  rules: ActorRecordRules;
  warn: (message: string) => void;
  /** Puts, one statement at a time, in order. */
  commits: GroupCommit;
  /** Reads by id, those of one turn in one statement. */
  gets: BatchedGets<ActorRecord>;
  ownership: Ownership;
  /** The live actors this process holds: listed at open, claimed, or put by it. */
  held: Set<string>;
  /** The checked copy of each actor's latest put until it lands or fails: what kept() hands a host. */
  writing: Map<string, ActorRecord>;
}

/** The snapshot store on PostgreSQL, shared by every process on the same schema (createPostgresStore). */
export class PostgresSnapshotStore implements SharedSnapshotStore {
  readonly shared = true;
  private readonly s: string;
  private readonly name: string;
  private opened: Opened | undefined;
  private opening = false;

  constructor(private readonly o: ResolvedPostgresStoreOptions) {
    this.s = quoteIdentifier(o.schema);
    this.name = `PostgreSQL store (${describeTarget(o.connectionString)}, schema ${o.schema})`;
  }

  async open(options: SnapshotStoreOpenOptions): Promise<SnapshotStoreOpenReport> {
    if (this.opened !== undefined || this.opening) throw new SnapshotStoreInUseError(this.name);
    checkMachineVersions(options.rules.machineVersions, `${this.name}: open`);
    this.opening = true;
    const pool = this.pool(this.o.poolSize, queryTimeout(this.o));
    const lease = this.pool(1, renewalTimeout(this.o));
    const presence = new Presence(this.clientConfig(renewalTimeout(this.o)));
    const owner = randomUUID();
    let registered = false;
    try {
      const client = await pool.connect();
      try {
        await migrate(client, this.o.schema);
      } finally {
        client.release();
      }
      const rules = ownRules(options.rules);
      // Filled by the claims open() makes; later claims are reported as warnings only.
      let report: SnapshotStoreOpenReport | undefined = emptyOpenReport();
      const held = new Set<string>();
      const ownership = new Ownership({
        pool,
        lease,
        presence,
        s: this.s,
        leaseMs: this.o.leaseMs,
        pollMs: this.o.pollMs,
        owner,
        pid: process.pid,
        host: hostname(),
        instance: options.instance,
        held,
        usable: (records) => this.usable(opened, records, report),
        events: options.shared,
        now: options.now,
        warn: options.onWarning,
      });
      const opened: Opened = {
        pool,
        lease,
        presence,
        owner,
        rules,
        warn: options.onWarning,
        commits: new GroupCommit((rows) => this.write(opened, rows)),
        gets: new BatchedGets(async (ids) => {
          const found = await pool.query<{ id: string; record: ActorRecord }>(
            named(this.s, "get", `SELECT id, record FROM ${this.s}.actors WHERE id = ANY($1::text[])`, [ids]),
          );
          return new Map(found.rows.map((row) => [row.id, row.record]));
        }),
        ownership,
        held,
        writing: new Map(),
      };
      await ownership.renewNow();
      registered = true;
      // What no living process owns (and this instance's before a restart) is this one's: list("live") lists it.
      await ownership.claimAll();
      const opening = report;
      report = undefined;
      this.opened = opened;
      ownership.start();
      return opening;
    } catch (error) {
      // What it claimed goes back at once rather than when the lease lapses.
      if (registered) await pool.query(releaseOwner(this.s), [owner]).catch(() => undefined);
      await Promise.all([pool.end(), lease.end(), presence.close()]).catch(() => undefined);
      throw openFailure(error, this.o);
    } finally {
      this.opening = false;
    }
  }

  private clientConfig(timeoutMs: number): pg.ClientConfig {
    return {
      connectionString: this.o.connectionString,
      connectionTimeoutMillis: Math.max(5_000, timeoutMs),
      // Bounded waits: a silent connection fails its query and is dropped; keep-alive notices it idle.
      query_timeout: timeoutMs,
      statement_timeout: timeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      application_name: "a2a-statecharts",
    };
  }

  private pool(max: number, timeoutMs: number): pg.Pool {
    const pool = new pg.Pool({ ...this.clientConfig(timeoutMs), max });
    // An idle connection the server drops (a restart) is reported here; without a listener it would end the process.
    pool.on("error", () => undefined);
    return pool;
  }

  async get(id: string): Promise<ActorRecord | undefined> {
    return this.held("get").gets.get(id);
  }

  async put(records: readonly ActorRecord[]): Promise<void> {
    const { rules, commits, writing } = this.held("put");
    // Checked before anything is sent: a refused batch changes nothing.
    const checked = records.map((r) => recordForPut(r, rules));
    if (checked.length === 0) return;
    for (const { record } of checked) writing.set(record.id, record);
    try {
      await commits.put(checked);
    } finally {
      for (const { record } of checked) if (writing.get(record.id) === record) writing.delete(record.id);
    }
  }

  /**
   * The live record with this id while its put is being written: a host spawning thousands keeps each
   * actor as this record at once, rather than hosted until its write lands. The store's own copy: never
   * change it.
   */
  kept(id: string): Readonly<ActorRecord> | undefined {
    const record = this.held("kept").writing.get(id);
    return record?.status === "active" ? record : undefined;
  }

  /** One statement writing a batch, fenced by ownership; refused for this process's own lapsed lease, it renews and retries. */
  private async write(opened: Opened, puts: RecordForPut[]): Promise<void> {
    const rows = puts.map(({ record }) => record);
    for (let attempt = 1; ; attempt += 1) {
      try {
        await opened.pool.query(
          named(this.s, "put", putRecords(this.s), [
            opened.owner,
            rows.map((r) => r.id),
            rows.map((r) => r.machineId),
            rows.map((r) => r.machineVersion),
            rows.map((r) => r.status),
            // The bigint columns take whole milliseconds; the record keeps a fractional time exactly.
            rows.map((r) => Math.floor(r.updatedAt)),
            puts.map(({ text }) => text),
            rows.map((r) => nextDue(r) ?? null),
          ]),
        );
        for (const r of rows) {
          if (r.status === "active") opened.held.add(r.id);
          else opened.held.delete(r.id);
        }
        return;
      } catch (error) {
        const code = codeOf(error);
        if (code === "A2A02" && attempt < 3) {
          await opened.ownership.renewNow();
          continue;
        }
        if (code === "A2A01") {
          const detail = (error as { detail?: unknown }).detail;
          const ids = typeof detail === "string" ? detail.split("\n") : rows.map((r) => r.id);
          for (const id of ids) opened.held.delete(id);
          throw new ActorTakenOverError(ids);
        }
        throw error;
      }
    }
  }

  async list(which: "live" | "archive"): Promise<Array<Readonly<ActorRecord>>> {
    const { pool, owner, held } = this.held("list");
    checkListKind(this.name, which);
    const found =
      which === "live"
        ? await pool.query<{ record: ActorRecord }>(
            `SELECT record FROM ${this.s}.actors WHERE status = 'active' AND owner = $1`,
            [owner],
          )
        : await pool.query<{ record: ActorRecord }>(
            `SELECT record FROM ${this.s}.actors WHERE status <> 'active'`,
          );
    if (which === "live") for (const row of found.rows) held.add(row.record.id);
    return found.rows.map((row) => row.record);
  }

  async prune(olderThan: number): Promise<number> {
    const { pool } = this.held("prune");
    checkCutoff(this.name, olderThan);
    // updated_at holds whole milliseconds (floored): a floored cutoff never prunes a record early.
    const pruned = await pool.query(
      `DELETE FROM ${this.s}.actors WHERE status <> 'active' AND updated_at < $1`,
      [Math.floor(olderThan)],
    );
    // Events for actors that finished before they were delivered have no one to go to.
    await pool.query(
      `DELETE FROM ${this.s}.inbox i WHERE NOT EXISTS (SELECT 1 FROM ${this.s}.actors a WHERE a.id = i.actor_id AND a.status = 'active')`,
    );
    return pruned.rowCount ?? 0;
  }

  async close(): Promise<void> {
    const opened = this.opened;
    if (opened === undefined) return;
    this.opened = undefined;
    await opened.ownership.stop();
    try {
      await opened.pool.query(releaseOwner(this.s), [opened.owner]);
    } catch (error) {
      // The lease lapses by itself: the others take the actors over then.
      opened.warn(
        `${this.name}: could not hand the actors over at close (${errorText(error)}); they are taken over once the lease lapses`,
      );
    }
    await Promise.all([opened.pool.end(), opened.lease.end(), opened.presence.close()]);
  }

  async listEveryLive(filter: LiveRecordFilter = {}): Promise<Array<Readonly<ActorRecord>>> {
    const { pool } = this.held("listEveryLive");
    const found = await pool.query<{ record: ActorRecord }>(
      `SELECT record FROM ${this.s}.actors WHERE status = 'active' AND ($1::text IS NULL OR machine_id = $1)
         AND ($2::jsonb IS NULL OR (record->'meta')::jsonb @> $2::jsonb)`,
      [filter.machineId ?? null, filter.meta === undefined ? null : JSON.stringify(filter.meta)],
    );
    return found.rows.map((row) => row.record);
  }

  async sendTo(delivery: StoredDelivery): Promise<void> {
    const { pool } = this.held("sendTo");
    await pool.query(`INSERT INTO ${this.s}.inbox (actor_id, event) VALUES ($1, $2::json)`, [
      delivery.id,
      JSON.stringify(delivery.event),
    ]);
  }

  /** Claimed records checked as at open: migrated when older, set aside (quarantine table) when unusable. */
  private async usable(
    opened: Opened,
    records: ActorRecord[],
    report: SnapshotStoreOpenReport | undefined,
  ): Promise<ActorRecord[]> {
    const good: ActorRecord[] = [];
    const bad: Array<{ id: string; problem: string }> = [];
    for (const record of records) {
      const checked = checkActorRecord(record.id, record, opened.rules, true, report?.migrated);
      if (checked.ok) good.push(checked.record);
      else bad.push({ id: record.id, problem: checked.problem });
    }
    if (bad.length > 0) {
      for (const { id } of bad) opened.held.delete(id);
      await opened.pool.query(quarantineRecords(this.s), [
        opened.owner,
        bad.map((b) => b.id),
        bad.map((b) => b.problem),
      ]);
      for (const { id, problem } of bad) {
        report?.quarantinedRecords.push({ id, file: `${this.o.schema}.quarantine`, problem });
        opened.warn(`${this.name}: record ${JSON.stringify(id)} was set aside: ${problem}`);
      }
    }
    return good;
  }

  private held(method: string): Opened {
    if (this.opened === undefined) throw new SnapshotStoreNotOpenError(this.name, method);
    return this.opened;
  }
}

/** A live record's earliest XState delay, floored to whole ms (under 1 ms early; its own delay waits the rest). */
function nextDue(record: ActorRecord): number | undefined {
  const dues = record.status === "active" ? (record.delayed ?? []).map((d) => d.dueAt) : [];
  return dues.length === 0 ? undefined : Math.floor(Math.min(...dues));
}
