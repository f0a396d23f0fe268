// createDurableHost on the PostgreSQL store, as two processes would use it for their own machines:
// list() shows the other's actors, send() reaches an actor the other runs, and an `after` delay of an
// actor whose process stopped fires in the one that took it over, at its original time.
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { assign, setup } from "xstate";
import { createDurableHost, type DurableHost } from "../../src/durable/index.js";
import { ActorTakenOverError, createPostgresStore } from "../../src/persistence/postgres/index.js";
import { ManualClock } from "../fixtures/manualClock.js";
import { usePostgres } from "../support/postgres.js";
import { waitUntil } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);
const postgres = usePostgres();

const ticket = setup({
  types: { context: {} as { notes: string[] }, events: {} as { type: "NOTE"; text: string } },
  delays: { expiry: 60_000 },
}).createMachine({
  id: "ticket",
  context: { notes: [] },
  initial: "open",
  states: {
    open: {
      on: { NOTE: { actions: assign({ notes: ({ context, event }) => [...context.notes, event.text] }) } },
      after: { expiry: "expired" },
    },
    expired: { type: "final" },
  },
});

const hosts: DurableHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.stop();
});

function hostOn(url: string, clock: ManualClock, warn: (message: string) => void = () => {}): DurableHost {
  const host = createDurableHost({
    store: createPostgresStore({ connectionString: url, leaseMs: 1_000, pollMs: 20 }),
    machines: { ticket: { machine: ticket, version: 1 } },
    now: clock.now,
    timers: clock,
    logger: { warn },
  });
  hosts.push(host);
  return host;
}

async function startedOn(
  url: string,
  clock: ManualClock,
  warn?: (message: string) => void,
): Promise<DurableHost> {
  const host = hostOn(url, clock, warn);
  await host.start();
  return host;
}

describe("durable hosts of two processes on one PostgreSQL schema", { timeout: 30_000 }, () => {
  it("list() and send() reach the other process's actors; its `after` fires in the process that took it over", async () => {
    const url = await postgres().createDatabase();
    const clock = new ManualClock(T0);
    const a = await startedOn(url, clock);
    const b = await startedOn(url, clock);
    await a.spawn("ticket", "t1");
    expect(await b.list()).toEqual([{ id: "t1", kind: "ticket", status: "active", value: "open" }]);

    // b does not run t1: the event goes through the store to a, which runs it.
    const note = { type: "NOTE", text: "from b" };
    await b.send("t1", note);
    await waitUntil(async () => {
      const got = await a.get("t1");
      return (got?.context as { notes: string[] } | undefined)?.notes.length === 1;
    }, "a to apply b's event");

    await clock.advance(30_000, () => a.idle());
    await a.stop();
    hosts.splice(hosts.indexOf(a), 1);
    await waitUntil(
      async () => (await b.get("t1"))?.value === "open" && (await b.list()).length === 1,
      "b to list t1",
    );
    await waitUntil(async () => {
      const rows = await postgres().query<{ owner: string | null }>(
        "SELECT owner FROM a2a.actors WHERE id = 't1'",
        [],
        new URL(url).pathname.slice(1),
      );
      return rows[0]?.owner != null;
    }, "b to take t1 over");
    await clock.advance(29_999, () => b.idle());
    expect((await b.get("t1"))?.value).toBe("open");
    await clock.advance(1, () => b.idle());
    expect(await b.get("t1")).toMatchObject({
      status: "done",
      value: "expired",
      context: { notes: ["from b"] },
    });
  });
});

/** Holds every write to the actors table (reads go on) until the returned function is called. */
async function holdWrites(url: string): Promise<() => Promise<void>> {
  const locker = new pg.Client({ connectionString: url });
  // A failed test's database is dropped under it: that ends its connection, which is no error here.
  locker.on("error", () => undefined);
  await locker.connect();
  await locker.query("BEGIN");
  await locker.query("LOCK TABLE a2a.actors IN EXCLUSIVE MODE");
  return async () => {
    await locker.query("COMMIT");
    await locker.end();
  };
}

describe("a spawned actor that only waits, on the PostgreSQL store", { timeout: 30_000 }, () => {
  it("is its record while its first write is in flight: a burst of spawns holds no XState actors", async () => {
    const url = await postgres().createDatabase();
    const a = await startedOn(url, new ManualClock(T0));
    const release = await holdWrites(url);
    let resolved = 0;
    const spawns = ["t1", "t2", "t3"].map((id) => a.spawn("ticket", id).then(() => (resolved += 1)));
    const here = (host: DurableHost) => host.counts().live + host.counts().dormant;
    await waitUntil(() => here(a) === 3, "the three spawns to be made");
    expect(a.counts()).toMatchObject({ live: 0, dormant: 3 });
    expect(a.counts().writesPending).toBeGreaterThan(0);
    expect(resolved).toBe(0);
    expect(await a.get("t2")).toMatchObject({ status: "active", value: "open", context: { notes: [] } });
    await release();
    await Promise.all(spawns);
    const note = { type: "NOTE", text: "after" };
    await a.send("t1", note);
    const rows = await postgres().query<{ id: string }>(
      "SELECT id FROM a2a.actors ORDER BY id",
      [],
      new URL(url).pathname.slice(1),
    );
    expect(rows.map((r) => r.id)).toEqual(["t1", "t2", "t3"]);
    expect(await a.get("t1")).toMatchObject({ context: { notes: ["after"] } });
  });

  it("its first write failing (connections cut): woken from that record, put again, and spawn() resolves once it lands", async () => {
    const url = await postgres().createDatabase();
    const clock = new ManualClock(T0);
    const warnings: string[] = [];
    const a = await startedOn(url, clock, (message) => void warnings.push(message));
    const release = await holdWrites(url);
    let resolved = false;
    const spawned = a.spawn("ticket", "t1").then(() => (resolved = true));
    await waitUntil(() => a.counts().dormant === 1, "the spawn to be made");
    // Every connection ends, the lock's too: the write waiting on it fails, and is retried 100 ms later.
    await postgres().terminateConnections(new URL(url).pathname.slice(1));
    await release().catch(() => undefined);
    await waitUntil(() => warnings.some((w) => /could not be written/.test(w)), "the write to fail");
    expect(resolved).toBe(false);
    expect(a.counts()).toMatchObject({ live: 0, dormant: 1 });
    for (let i = 0; i < 50 && !resolved; i += 1) await clock.advance(100);
    await spawned;
    const note = { type: "NOTE", text: "after" };
    await a.send("t1", note);
    await clock.advance(60_000, () => a.idle());
    expect(await a.get("t1")).toMatchObject({
      status: "done",
      value: "expired",
      context: { notes: ["after"] },
    });
  });

  it("spawned in two processes at once: the one whose write is refused keeps nothing of it", async () => {
    const url = await postgres().createDatabase();
    const clock = new ManualClock(T0);
    const a = await startedOn(url, clock);
    const b = await startedOn(url, clock);
    const release = await holdWrites(url);
    const spawns = [a, b].map((host) =>
      host.spawn("ticket", "t1").then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    const here = (host: DurableHost) => host.counts().live + host.counts().dormant;
    await waitUntil(() => here(a) === 1 && here(b) === 1, "both spawns to be made");
    expect([a.counts().dormant, b.counts().dormant]).toEqual([1, 1]);
    await release();
    const [errorOfA, errorOfB] = await Promise.all(spawns);
    const refused = errorOfA === undefined ? b : a;
    const owner = refused === a ? b : a;
    expect([errorOfA, errorOfB].filter((e) => e !== undefined)).toEqual([expect.any(ActorTakenOverError)]);
    expect(refused.counts()).toMatchObject({ live: 0, dormant: 0 });
    expect(owner.counts()).toMatchObject({ live: 0, dormant: 1 });
    await clock.advance(60_000, async () => {
      await a.idle();
      await b.idle();
    });
    expect(await owner.get("t1")).toMatchObject({ status: "done", value: "expired" });
    expect(refused.counts()).toMatchObject({ live: 0, dormant: 0 });
  });
});

describe("fractional times on the PostgreSQL store", { timeout: 30_000 }, () => {
  // XState takes any number of milliseconds for a delay; PostgreSQL's bigint columns take whole ones.
  const blink = setup({}).createMachine({
    id: "blink",
    initial: "on",
    states: { on: { after: { 1234.5: "off" } }, off: { type: "final" } },
  });

  it("an `after` of 1234.5 ms is stored, survives a restart and fires at its time", async () => {
    const url = await postgres().createDatabase();
    const clock = new ManualClock(T0 + 0.25);
    const warnings: string[] = [];
    const hostHere = () => {
      const host = createDurableHost({
        store: createPostgresStore({ connectionString: url, leaseMs: 1_000, pollMs: 20 }),
        machines: { blink: { machine: blink, version: 1 } },
        now: clock.now,
        timers: clock,
        logger: { warn: (message) => void warnings.push(message) },
      });
      hosts.push(host);
      return host;
    };
    const first = hostHere();
    await first.start();
    await first.spawn("blink", "b1");
    await first.stop();
    hosts.splice(hosts.indexOf(first), 1);
    const second = hostHere();
    await second.start();
    await clock.advance(1234, () => second.idle());
    expect((await second.get("b1"))?.value).toBe("on");
    await clock.advance(1, () => second.idle());
    expect(await second.get("b1")).toMatchObject({ status: "done", value: "off" });
    // The manual clock is years from the server's: the store says so, and nothing else.
    expect(warnings.filter((w) => !/clock is \d+ ms behind/.test(w))).toEqual([]);
  });
});
