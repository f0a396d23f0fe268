import { performance } from "node:perf_hooks";
import type { Pool } from "pg";
import type { ActorRecord } from "../actorRecord.js";
import { errorText } from "../DurableJsonFile.js";
import type { SharedStoreEvents, StoredDelivery } from "../SnapshotStorePort.js";
import { leaseLength } from "./postgresStoreOptions.js";
import type { Presence } from "./presence.js";
import {
  claimOrphans,
  forgetDeadOwners,
  heldElsewhere,
  named,
  orphanCheck,
  ownedUnheld,
  predecessors,
  renewLease,
  takeInbox,
} from "./statements.js";

/** Actors claimed per statement: a takeover of many goes on in several rounds, soonest due first. */
const CLAIM_BATCH = 1_000;
const INBOX_BATCH = 500;
/** A clock this far from the server's is said once: due times taken over between processes are off by it. */
const SKEW_SAID_MS = 1_000;

export interface OwnershipOptions {
  pool: Pool;
  /** The lease's own connection: a renewal never waits behind the application's queries. */
  lease: Pool;
  presence: Presence;
  /** The quoted schema name. */
  s: string;
  leaseMs: number;
  pollMs: number;
  /** This process's owner id, kept for its life: a lapsed lease is renewed under it. */
  owner: string;
  pid: number;
  host: string;
  instance: string | undefined;
  /** The live actors this process holds (kept by the store and here). */
  held: Set<string>;
  /** Checks claimed records (migration, restorability); returns the usable ones, setting the others aside. */
  usable: (records: ActorRecord[]) => Promise<ActorRecord[]>;
  events: SharedStoreEvents | undefined;
  now: () => number;
  warn: (message: string) => void;
}

/**
 * While the store is open: renews the lease every third of `leaseMs`, and every `pollMs` takes over
 * actors whose owner is gone, reconciles what this process holds with what it owns, and hands the
 * host the events sent to its actors. A failed round is tried again at the next tick; every query is
 * bounded by the pool's timeouts, so a silent connection cannot stop the rounds.
 */
export class Ownership {
  private renewTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private running = false;
  private renewal: Promise<void> | undefined;
  private polling: Promise<void> = Promise.resolve();
  /** When the lease was last renewed (monotonic ms): past its length, it has lapsed. */
  private renewedAt = performance.now();
  /** Said once per lapse, until the lease holds again. */
  private lapsed = false;
  /** After a lapse: which held actors other processes took meanwhile. */
  private checkTaken = false;
  /** A claim whose outcome is unknown (its reply was lost): what the database says is this process's. */
  private checkOwned = false;
  /** Inbox events the host could not apply (an actor it does not host): passed over for a while, by seq. */
  private readonly unapplied = new Map<string, number>();
  private skewSaid = false;
  private registered = false;
  /** The last failure said: a server down for a while is reported once, not at every tick. */
  private lastProblem: string | undefined;

  constructor(private readonly o: OwnershipOptions) {}

  start(): void {
    this.running = true;
    this.scheduleRenewal();
    this.schedulePoll();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.renewTimer);
    clearTimeout(this.pollTimer);
    await Promise.all([this.renewal?.catch(() => undefined), this.polling]);
  }

  /** Renews the lease now (one renewal at a time: a caller during one waits for it). */
  renewNow(): Promise<void> {
    this.renewal ??= this.renew().finally(() => {
      this.renewal = undefined;
    });
    return this.renewal;
  }

  /** Claims orphaned actors, and those of this instance's predecessors, until none is left. */
  async claimAll(): Promise<void> {
    const { lease, s, owner, host, instance } = this.o;
    const before =
      instance === undefined
        ? []
        : (await lease.query<{ id: string }>(predecessors(s), [owner, host, instance])).rows.map((r) => r.id);
    while ((await this.claim(before)).count === CLAIM_BATCH);
    if (before.length > 0) await lease.query(`DELETE FROM ${s}.owners WHERE id = ANY($1::text[])`, [before]);
  }

  private scheduleRenewal(): void {
    if (!this.running) return;
    this.renewTimer = setTimeout(
      () => {
        const since = performance.now() - this.renewedAt;
        if (!this.lapsed && since > leaseLength(this.o)) {
          this.lapsed = true;
          this.o.warn(
            `PostgreSQL store: this process's lease lapsed (last renewed ${Math.round(since)} ms ago: the server was out of reach, or the process paused); its writes wait until it is renewed`,
          );
        }
        this.renewNow()
          .then(() => this.o.lease.query(forgetDeadOwners(this.o.s)))
          .catch((error: unknown) =>
            this.problem(`renewing the lease failed (${errorText(error)}); trying again`),
          )
          .finally(() => this.scheduleRenewal());
      },
      Math.max(1, Math.floor(this.o.leaseMs / 3)),
    );
    this.renewTimer.unref();
  }

  private async renew(): Promise<void> {
    const { lease, s, owner, pid, host, instance } = this.o;
    const backend = await this.o.presence.backend();
    const asked = this.o.now();
    const started = performance.now();
    const renewed = await lease.query<{ lapsed_ms: number | null; reconnected: boolean; server_now: number }>(
      named(s, "renew", renewLease(s), [owner, leaseLength(this.o), pid, host, instance ?? null, backend]),
    );
    const first = !this.registered;
    this.registered = true;
    // Lapsed by this process's count too: a delayed renewal may have reached the server after a takeover.
    const unrenewedMs = started - this.renewedAt - leaseLength(this.o);
    this.renewedAt = started;
    this.recovered();
    const row = renewed.rows[0];
    if (row === undefined) return;
    this.checkSkew(asked, this.o.now(), row.server_now);
    // Its previous connection closed: to the others this process looked dead meanwhile.
    if (row.reconnected) this.checkTaken = true;
    // Null: the row was gone (never registered, or forgotten long after a lapse).
    const lapsedMs = row.lapsed_ms ?? (first ? -1 : 0);
    const hadLapsedMs = Math.max(lapsedMs, first ? -1 : unrenewedMs);
    if (hadLapsedMs < 0) return;
    this.o.warn(
      `PostgreSQL store: this process's lease is renewed again (it had lapsed ${Math.round(hadLapsedMs)} ms before); actors other processes took over meanwhile are dropped here`,
    );
    this.lapsed = false;
    // Other processes may have taken some actors over meanwhile: the next poll asks which.
    this.checkTaken = true;
  }

  private checkSkew(asked: number, answered: number, serverNow: number): void {
    const skew = (asked + answered) / 2 - serverNow;
    if (this.skewSaid || Math.abs(skew) <= SKEW_SAID_MS + (answered - asked) / 2) return;
    this.skewSaid = true;
    this.o.warn(
      `PostgreSQL store: this process's clock is ${Math.round(Math.abs(skew))} ms ${skew > 0 ? "ahead of" : "behind"} the database server's; actors taken over from or by other processes fire off by the difference between their clocks`,
    );
  }

  private schedulePoll(): void {
    if (!this.running) return;
    this.pollTimer = setTimeout(() => {
      this.polling = this.poll().finally(() => this.schedulePoll());
    }, this.o.pollMs);
    this.pollTimer.unref();
  }

  private async poll(): Promise<void> {
    if (!this.running) return;
    try {
      // Seen dead meanwhile: renewed at once, so others take no more, and told which they took.
      if (this.o.presence.closed) await this.renewNow();
      if (this.checkTaken) await this.dropTaken();
      if (this.checkOwned) await this.hostOwned();
      for (;;) {
        const batch = await this.claim([]);
        if (batch.usable.length > 0) this.o.events?.claimed(batch.usable);
        if (batch.count < CLAIM_BATCH || !this.running) break;
      }
      await this.deliverInbox();
      this.recovered();
    } catch (error) {
      this.problem(`taking over actors or reading the inbox failed (${errorText(error)}); trying again`);
    }
  }

  private async claim(before: string[]): Promise<{ count: number; usable: ActorRecord[] }> {
    const { pool, s, owner } = this.o;
    const check = await pool.query<{ dead: string[]; unowned: boolean }>(
      named(s, "orphans", orphanCheck(s), [owner]),
    );
    const { dead, unowned } = check.rows[0] ?? { dead: [], unowned: false };
    if (dead.length === 0 && before.length === 0 && !unowned) return { count: 0, usable: [] };
    const claimed = await pool
      .query<{ record: ActorRecord }>(claimOrphans(s), [owner, CLAIM_BATCH, [...dead, ...before], before])
      .catch((error: unknown) => {
        // It may have committed with its reply lost: the next poll asks what this process owns.
        this.checkOwned = true;
        throw error;
      });
    const records = claimed.rows.map((row) => row.record);
    for (const record of records) this.o.held.add(record.id);
    return { count: records.length, usable: records.length === 0 ? [] : await this.o.usable(records) };
  }

  /** Hosts the live actors the database says are this process's but that it does not hold. */
  private async hostOwned(): Promise<void> {
    const { pool, s, owner, held } = this.o;
    const found = await pool.query<{ record: ActorRecord }>(ownedUnheld(s), [owner, [...held]]);
    this.checkOwned = false;
    const records = found.rows.map((row) => row.record);
    if (records.length === 0) return;
    for (const record of records) held.add(record.id);
    const usable = await this.o.usable(records);
    if (usable.length > 0) this.o.events?.claimed(usable);
  }

  /** Drops the held actors another process took over while this one's lease had lapsed or its connection was closed. */
  private async dropTaken(): Promise<void> {
    const { pool, s, owner, held } = this.o;
    const found = await pool.query<{ id: string }>(heldElsewhere(s), [owner, [...held]]);
    this.checkTaken = false;
    const ids = found.rows.map((row) => row.id);
    if (ids.length === 0) return;
    for (const id of ids) held.delete(id);
    this.o.warn(
      `PostgreSQL store: ${ids.length} actor(s) were taken over by other processes while this one's lease had lapsed or its connection was closed; dropped here`,
    );
    this.o.events?.lost(ids);
  }

  private async deliverInbox(): Promise<void> {
    const events = this.o.events;
    if (events === undefined) return;
    const { pool, s, owner } = this.o;
    const now = performance.now();
    // An event the host could not apply waits a few polls, so it never holds the others back.
    for (const [seq, at] of this.unapplied) if (now - at > 4 * this.o.pollMs) this.unapplied.delete(seq);
    const taken = await pool.query<{ seq: string; actor_id: string; event: StoredDelivery["event"] }>(
      named(s, "inbox", takeInbox(s), [owner, INBOX_BATCH, [...this.unapplied.keys()]]),
    );
    if (taken.rows.length === 0) return;
    // Deleted only once applied and durable: a crash in between delivers it again.
    const applied = await events.delivered(taken.rows.map((row) => ({ id: row.actor_id, event: row.event })));
    const done: string[] = [];
    taken.rows.forEach((row, i) => {
      if (applied[i] === true) done.push(row.seq);
      else this.unapplied.set(row.seq, now);
    });
    if (done.length > 0) await pool.query(`DELETE FROM ${s}.inbox WHERE seq = ANY($1::int8[])`, [done]);
  }

  private problem(message: string): void {
    if (message === this.lastProblem) return;
    this.lastProblem = message;
    this.o.warn(`PostgreSQL store: ${message}`);
  }

  private recovered(): void {
    if (this.lastProblem === undefined) return;
    this.lastProblem = undefined;
    this.o.warn("PostgreSQL store: the server answers again");
  }
}
