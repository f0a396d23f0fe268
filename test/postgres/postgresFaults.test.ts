// The PostgreSQL store under faults between a process and the server, injected by a TCP proxy on the
// process's connection (test/support/faultProxy.ts): a pause longer than the lease, a claim whose reply
// is lost, a silent connection, a process that restarts under its instance name, queries stuck behind
// a lock. What must hold: a lapsed lease is no takeover, ownership is reconciled, waits are bounded.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { ActorTakenOverError } from "../../src/persistence/index.js";
import { type FaultProxy, startFaultProxy } from "../support/faultProxy.js";
import { usePostgres } from "../support/postgres.js";
import { STORE_T0, storeRecord } from "../support/storeRecords.js";
import { dbName, heard, ids, openStore, until } from "./fixtures/sharedStores.js";

const postgres = usePostgres();

const proxies: FaultProxy[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) {
    proxy.heal();
    await proxy.close();
  }
});

/** A database, and the same database through a proxy of its own. */
async function database(): Promise<{ url: string; proxied: string; proxy: FaultProxy }> {
  const url = await postgres().createDatabase();
  const proxy = await startFaultProxy({ host: postgres().host, port: postgres().port });
  proxies.push(proxy);
  return { url, proxied: proxy.url(url), proxy };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("PostgreSQL store under faults", { timeout: 30_000 }, () => {
  it("a process cut off longer than its lease, with no one to take over, writes again under its own lease: no takeover", async () => {
    const { proxied, proxy } = await database();
    const h = heard();
    const a = await openStore(proxied, { heard: h, leaseMs: 1_500 });
    await a.put([storeRecord("x")]);
    proxy.pause();
    await until("a to say its lease lapsed", () => h.warnings.some((w) => /lease lapsed/.test(w)));
    proxy.heal();
    // Refused at first because the lease lapsed: renewed and written, as nobody took x.
    await a.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })]);
    expect((await a.get("x"))?.updatedAt).toBe(STORE_T0 + 1);
    expect(ids(await a.list("live"))).toEqual(["x"]);
    await until("a to say its lease holds again", () => h.warnings.some((w) => /renewed again/.test(w)));
    await sleep(200);
    expect(h.lost).toEqual([]);
    expect(h.warnings.filter((w) => /lease lapsed/.test(w))).toHaveLength(1);
    expect(h.warnings.filter((w) => /renewed again/.test(w))).toHaveLength(1);
    expect(h.warnings.join("\n")).not.toMatch(/taken over/);
  });

  it("a process cut off while another takes its actors over hears which, and its writes of them are refused", async () => {
    const { url, proxied, proxy } = await database();
    const ha = heard();
    const a = await openStore(proxied, { heard: ha, leaseMs: 1_500 });
    const hb = heard();
    const b = await openStore(url, { heard: hb, leaseMs: 1_500 });
    await a.put([storeRecord("x"), storeRecord("y")]);
    proxy.pause();
    await until("b to take a's actors over", () => hb.claimed.length === 2);
    proxy.heal();
    await until("a to hear it lost them", () => ha.lost.length === 2);
    expect([...ha.lost].sort()).toEqual(["x", "y"]);
    await expect(a.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })])).rejects.toThrow(ActorTakenOverError);
    // New actors are a's own, under the lease it renewed.
    await a.put([storeRecord("z")]);
    expect(ids(await a.list("live"))).toEqual(["z"]);
    expect(ids(await b.list("live"))).toEqual(["x", "y"]);
  });

  it("a process whose connections close (it was killed) has its actors taken over at the next poll, not when its lease lapses", async () => {
    const { url, proxied, proxy } = await database();
    const ha = heard();
    const a = await openStore(proxied, { heard: ha, leaseMs: 60_000 });
    await a.put([storeRecord("x")]);
    const hb = heard();
    const b = await openStore(url, { heard: hb, leaseMs: 60_000 });
    proxy.refuse();
    // Within `until`'s 10 s: long before the 60 s lease could lapse.
    await until("b to take x over", () => hb.claimed.includes("x"));
    expect(ids(await b.list("live"))).toEqual(["x"]);
    // Alive after all (only its connections were cut): it connects again, hears it lost x, and says so.
    proxy.heal();
    await until("a to hear it lost x", () => ha.lost.includes("x"));
    expect(ha.warnings.join("\n")).toMatch(/1 actor\(s\) were taken over .* its connection was closed/);
    await expect(a.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })])).rejects.toThrow(ActorTakenOverError);
  });

  // pg_ctl restart waits up to 30 s for the stop and 30 s for the start: longer than the other tests'
  // budget, so that a restart that fails is reported with the server's log, not as a timeout.
  it("a database restart is no death: the others wait for the lease of a process that cannot connect again yet", async () => {
    const { url, proxied, proxy } = await database();
    const ha = heard();
    const a = await openStore(proxied, { heard: ha });
    const hb = heard();
    const b = await openStore(url, { heard: hb });
    await a.put([storeRecord("x")]);
    // a's connections end with the server, and it cannot connect again until healed: its backend is
    // gone as a killed process's would be, but recorded before the restart, so only its lease (10 s) counts.
    proxy.pause();
    await postgres().restart();
    await until("b to answer again", () =>
      b.list("live").then(
        () => true,
        () => false,
      ),
    );
    await sleep(500);
    expect(hb.claimed).toEqual([]);
    proxy.heal();
    await until("a to write again", () =>
      a.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })]).then(
        () => true,
        () => false,
      ),
    );
    expect(ha.lost).toEqual([]);
    expect(ids(await a.list("live"))).toEqual(["x"]);
  }, 90_000);

  it("a takeover claim that commits but whose reply is lost: the claimed actors are hosted at the next poll", async () => {
    const { url, proxied, proxy } = await database();
    const a = await openStore(url, {}, true);
    await a.put([storeRecord("x")]);
    const hb = heard();
    await openStore(proxied, { heard: hb });
    const reset = proxy.resetAfterReply("FOR UPDATE OF a SKIP LOCKED");
    // Let go: x has no owner now, and b claims it through the proxy.
    await a.close();
    await reset;
    await until("b to host x", () => hb.claimed.includes("x"));
    expect(hb.claimed).toEqual(["x"]);
  });

  it("an event for an actor the host does not run stays in the inbox; the others are applied and deleted", async () => {
    const url = await postgres().createDatabase();
    const ha = heard();
    const a = await openStore(url, { heard: ha, deliver: ({ id }) => id !== "unhosted" });
    await a.put([storeRecord("x"), storeRecord("unhosted")]);
    await a.sendTo({ id: "unhosted", event: { type: "PING" } });
    await a.sendTo({ id: "x", event: { type: "PING" } });
    await until("x's event to be applied", () => ha.delivered.some((d) => d.id === "x"));
    await until("x's event to leave the inbox", async () =>
      (await postgres().query("SELECT actor_id FROM a2a.inbox", [], dbName(url))).every(
        (row) => row.actor_id !== "x",
      ),
    );
    expect(await postgres().query("SELECT actor_id FROM a2a.inbox", [], dbName(url))).toEqual([
      { actor_id: "unhosted" },
    ]);
  });

  it("close() returns while the connection is silent, and the actors are taken over once the lease lapses", async () => {
    const { url, proxied, proxy } = await database();
    const a = await openStore(proxied, { leaseMs: 1_000 }, true);
    await a.put([storeRecord("x")]);
    proxy.blackHole();
    // Without bounded waits this never returns: a renewal waits for a reply that never comes.
    await a.close();
    // Taken over at b's open or at a later look, whichever comes after the lease lapsed.
    const b = await openStore(url, { leaseMs: 1_000 });
    await until("b to take x over", async () => ids(await b.list("live")).includes("x"));
  });

  it("after a silent connection heals, the process writes again", async () => {
    const { proxied, proxy } = await database();
    const h = heard();
    const a = await openStore(proxied, { heard: h, leaseMs: 1_000 });
    await a.put([storeRecord("x")]);
    proxy.blackHole();
    await expect(a.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })])).rejects.toThrow(/timeout/i);
    proxy.heal();
    await until("a to write again", async () => {
      try {
        await a.put([storeRecord("x", { updatedAt: STORE_T0 + 2 })]);
        return true;
      } catch {
        return false;
      }
    });
    expect((await a.get("x"))?.updatedAt).toBe(STORE_T0 + 2);
    expect(h.lost).toEqual([]);
  });

  it("a process that starts again under its instance name takes its actors back at once; another name waits for the lease", async () => {
    const { url, proxied, proxy } = await database();
    const first = await openStore(proxied, { instance: "/srv/gateway-1", leaseMs: 60_000 }, true);
    await first.put([storeRecord("x")]);
    // The first process's host goes dark (it can neither renew nor let go, and its connections stay open).
    proxy.blackHole();
    const other = await openStore(url, { instance: "/srv/gateway-2", leaseMs: 60_000 });
    expect(await other.list("live")).toEqual([]);
    const again = await openStore(url, { instance: "/srv/gateway-1", leaseMs: 60_000 });
    expect(ids(await again.list("live"))).toEqual(["x"]);
    await again.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })]);
    expect(await postgres().query("SELECT count(*)::int AS n FROM a2a.owners", [], dbName(url))).toEqual([
      { n: 2 },
    ]);
    // Its connections reset, close() fails fast instead of waiting out each query's timeout.
    proxy.refuse();
    await first.close();
  });

  it("renews its lease while every application connection waits behind a lock: no other process takes over", async () => {
    const url = await postgres().createDatabase();
    const ha = heard();
    const a = await openStore(url, { heard: ha, leaseMs: 2_000 });
    const hb = heard();
    await openStore(url, { heard: hb, leaseMs: 2_000 });
    await a.put([storeRecord("x")]);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE a2a.actors IN ACCESS EXCLUSIVE MODE");
      // Every connection of a's pool waits on the lock (reads and writes alike), for longer than a lease.
      const stuck = Array.from({ length: 12 }, () => a.get("x").catch(() => undefined));
      await sleep(3_000);
      await locker.query("COMMIT");
      await Promise.all(stuck);
    } finally {
      await locker.end();
    }
    await sleep(300);
    expect(hb.claimed).toEqual([]);
    expect(ha.warnings.join("\n")).not.toMatch(/lapsed/);
    await a.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })]);
  });

  it("renews its lease on a slow connection (150 ms each way) while 40 queries at a time wait for the pool: no other process takes over", async () => {
    const { url, proxied, proxy } = await database();
    const ha = heard();
    const a = await openStore(proxied, { heard: ha, leaseMs: 1_500 });
    const hb = heard();
    await openStore(url, { heard: hb, leaseMs: 1_500 });
    await a.put([storeRecord("x")]);
    proxy.latency(150);
    const until = Date.now() + 4_000;
    const reader = async () => {
      while (Date.now() < until) await a.get("x");
    };
    await Promise.all(Array.from({ length: 40 }, reader));
    proxy.heal();
    await sleep(300);
    expect(hb.claimed).toEqual([]);
    expect(ha.warnings.join("\n")).not.toMatch(/lapsed/);
    await a.put([storeRecord("x", { updatedAt: STORE_T0 + 1 })]);
  });
});
