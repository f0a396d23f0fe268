import type { Pool } from "pg";
import type { ActorRecord } from "../actorRecord.js";
import { errorText } from "../DurableJsonFile.js";
import type { SharedStoreEvents, StoredDelivery } from "../SnapshotStorePort.js";
import { leaseLength } from "./postgresStoreOptions.js";
import { claimOrphans, forgetDeadOwners, named, orphanCheck, renewLease, takeInbox } from "./statements.js";

/** Actors claimed per statement: a takeover of many goes on in several rounds, soonest due first. */
const CLAIM_BATCH = 1_000;
const INBOX_BATCH = 500;

export interface OwnershipOptions {
  pool: Pool;
  /** The quoted schema name. */
  s: string;
  leaseMs: number;
  pollMs: number;
  /** This process's owner id now (it changes when the lease lapsed and the process registers again). */
  owner: () => string;
  /** Registers this process again under a new owner id, after its lease lapsed. */
  registerAgain: () => Promise<void>;
  /** Checks claimed records (migration, restorability); returns the usable ones, setting the others aside. */
  usable: (records: ActorRecord[]) => Promise<ActorRecord[]>;
  events: SharedStoreEvents | undefined;
  warn: (message: string) => void;
}

/**
 * While the store is open: renews this process's lease every third of `leaseMs`, and every `pollMs`
 * takes over actors whose owner is gone and hands the events other processes sent to this one's actors
 * to the host. A failed round (the server restarting, say) is tried again at the next tick.
 */
export class Ownership {
  private renewTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private running = false;
  private renewing: Promise<void> = Promise.resolve();
  private polling: Promise<void> = Promise.resolve();
  /** The last failure said, so that a server down for a while is reported once, not at every tick. */
  private lastProblem: string | undefined;

  constructor(private readonly o: OwnershipOptions) {}

  start(): void {
    this.running = true;
    this.renewTimer = setInterval(
      () => {
        this.renewing = this.renewing.then(() => this.renew());
      },
      Math.max(1, Math.floor(this.o.leaseMs / 3)),
    );
    this.renewTimer.unref();
    this.schedulePoll();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.renewTimer);
    clearTimeout(this.pollTimer);
    await Promise.all([this.renewing, this.polling]);
  }

  /** Claims orphaned actors until none is left; returns the usable ones (open() hosts them itself). */
  async claimAll(): Promise<ActorRecord[]> {
    const claimed: ActorRecord[] = [];
    for (;;) {
      const batch = await this.claim();
      claimed.push(...batch.usable);
      if (batch.count < CLAIM_BATCH) return claimed;
    }
  }

  private schedulePoll(): void {
    if (!this.running) return;
    this.pollTimer = setTimeout(() => {
      this.polling = this.poll().finally(() => this.schedulePoll());
    }, this.o.pollMs);
    this.pollTimer.unref();
  }

  private async renew(): Promise<void> {
    if (!this.running) return;
    try {
      const { pool, s } = this.o;
      const renewed = await pool.query(
        named(s, "renew", renewLease(s), [this.o.owner(), leaseLength(this.o)]),
      );
      if (renewed.rowCount === 0) {
        // Lapsed (the server was out of reach longer than the lease): another process may own our actors now.
        this.o.warn(
          `PostgreSQL store: this process's lease lapsed; dropping its actors and claiming again what no one took`,
        );
        this.o.events?.lost("all");
        await this.o.registerAgain();
      }
      await pool.query(forgetDeadOwners(s));
      this.recovered();
    } catch (error) {
      this.problem(`renewing the lease failed (${errorText(error)}); trying again`);
    }
  }

  private async poll(): Promise<void> {
    if (!this.running) return;
    try {
      for (;;) {
        const batch = await this.claim();
        if (batch.usable.length > 0) this.o.events?.claimed(batch.usable);
        if (batch.count < CLAIM_BATCH || !this.running) break;
      }
      await this.deliverInbox();
      this.recovered();
    } catch (error) {
      this.problem(`taking over actors or reading the inbox failed (${errorText(error)}); trying again`);
    }
  }

  private async claim(): Promise<{ count: number; usable: ActorRecord[] }> {
    const { pool, s } = this.o;
    const check = await pool.query<{ dead: string[]; unowned: boolean }>(
      named(s, "orphans", orphanCheck(s), []),
    );
    const { dead, unowned } = check.rows[0] ?? { dead: [], unowned: false };
    if (dead.length === 0 && !unowned) return { count: 0, usable: [] };
    const claimed = await pool.query<{ record: ActorRecord }>(claimOrphans(s), [
      this.o.owner(),
      CLAIM_BATCH,
      dead,
    ]);
    const records = claimed.rows.map((row) => row.record);
    return { count: records.length, usable: records.length === 0 ? [] : await this.o.usable(records) };
  }

  private async deliverInbox(): Promise<void> {
    const events = this.o.events;
    if (events === undefined) return;
    const { pool, s } = this.o;
    const taken = await pool.query<{ seq: string; actor_id: string; event: StoredDelivery["event"] }>(
      named(s, "inbox", takeInbox(s), [this.o.owner(), INBOX_BATCH]),
    );
    if (taken.rows.length === 0) return;
    // Deleted only once delivered and durable: a crash in between delivers them again (an answer twice is one answer).
    if (!(await events.delivered(taken.rows.map((row) => ({ id: row.actor_id, event: row.event }))))) return;
    await pool.query(`DELETE FROM ${s}.inbox WHERE seq = ANY($1::int8[])`, [
      taken.rows.map((row) => row.seq),
    ]);
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
