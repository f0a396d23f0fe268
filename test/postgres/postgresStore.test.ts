// The PostgreSQL store on a real server: the SnapshotStore behaviour a host relies on, and what sharing
// one schema between processes adds (ownership, fenced writes, takeover, the inbox, migrations).
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import {
  ActorTakenOverError,
  SnapshotStoreNotOpenError,
  InvalidActorRecordError,
} from "../../src/persistence/index.js";
import { createPostgresStore } from "../../src/persistence/postgres/index.js";
import { usePostgres } from "../support/postgres.js";
import { STORE_T0, storeRecord } from "../support/storeRecords.js";
import { dbName, heard, ids, openStore as store, openOptions, until } from "./fixtures/sharedStores.js";

const postgres = usePostgres();

describe("PostgreSQL store: one process", { timeout: 30_000 }, () => {
  it("round-trips a record with its timers and delayed events, and keeps it across close and open", async () => {
    const url = await postgres().createDatabase();
    const record = storeRecord("a", {
      delayed: [
        {
          id: "d1",
          source: [],
          target: ["child"],
          event: { type: "xstate.after.1000.m.s" },
          dueAt: STORE_T0 + 1_000,
        },
      ],
      meta: { threadId: "t1", nested: { ok: true } },
    });
    const first = await store(url);
    await first.put([record, storeRecord("__proto__")]);
    expect(await first.get("a")).toEqual(record);
    await first.close();
    const second = await store(url);
    expect(ids(await second.list("live"))).toEqual(["__proto__", "a"]);
    expect(await second.get("a")).toEqual(record);
    expect(await second.get("missing")).toBeUndefined();
  });

  it("lands puts in the order they were made: a later change of an actor is never overwritten by an earlier one", async () => {
    const url = await postgres().createDatabase();
    const s = await store(url);
    await s.put([storeRecord("x")]);
    // As a host writes a busy actor: each change put as soon as it happens, without waiting for the last.
    for (let round = 0; round < 20; round += 1) {
      const puts = Array.from({ length: 12 }, (_, i) =>
        s.put([
          storeRecord("x", {
            updatedAt: STORE_T0 + round * 100 + i,
            meta: { big: "x".repeat(i % 2 === 0 ? 50_000 : 10) },
          }),
        ]),
      );
      await Promise.all(puts);
      expect((await s.get("x"))?.updatedAt).toBe(STORE_T0 + round * 100 + 11);
    }
  });

  it("refuses a batch whole when one record is invalid, naming it", async () => {
    const url = await postgres().createDatabase();
    const s = await store(url);
    const bad = { ...storeRecord("bad"), machineVersion: 1 };
    await expect(s.put([storeRecord("ok"), bad])).rejects.toThrow(InvalidActorRecordError);
    await expect(s.put([storeRecord("ok"), bad])).rejects.toThrow(
      /"bad".*version 2, the snapshot is version 1/,
    );
    expect(await s.get("ok")).toBeUndefined();
  });

  it("archives a finished record on put, lists it as archived, and prunes it by age", async () => {
    const url = await postgres().createDatabase();
    const s = await store(url);
    await s.put([storeRecord("old"), storeRecord("new"), storeRecord("live")]);
    await s.put([
      storeRecord("old", { status: "done", updatedAt: STORE_T0 + 1 }),
      storeRecord("new", { status: "error", updatedAt: STORE_T0 + 10 }),
    ]);
    expect(ids(await s.list("live"))).toEqual(["live"]);
    expect(ids(await s.list("archive"))).toEqual(["new", "old"]);
    expect(
      await postgres().query("SELECT actor_id FROM a2a.timers ORDER BY actor_id", [], dbName(url)),
    ).toEqual([{ actor_id: "live" }]);
    expect(await s.prune(STORE_T0 + 5)).toBe(1);
    expect(ids(await s.list("archive"))).toEqual(["new"]);
  });

  it("rejects every call before open and after close, naming the method", async () => {
    const url = await postgres().createDatabase();
    const s = createPostgresStore({ connectionString: url });
    await expect(s.get("a")).rejects.toThrow(SnapshotStoreNotOpenError);
    await s.open(openOptions({}));
    await s.close();
    await expect(s.put([storeRecord("a")])).rejects.toThrow(/put\(\) refused: the store is not open/);
    await s.close();
  });

  it("refuses bad options at once, naming the option", () => {
    expect(() => createPostgresStore({ connectionString: "" })).toThrow(
      /connectionString must be a non-empty string/,
    );
    expect(() => createPostgresStore({ connectionString: "postgresql://x", schema: 'a"; drop' })).toThrow(
      /schema must be a lower-case SQL name/,
    );
    expect(() => createPostgresStore({ connectionString: "postgresql://x", leaseMs: 0 })).toThrow(
      /leaseMs must be a whole number/,
    );
    expect(() => createPostgresStore(undefined as never)).toThrow(/takes an options object/);
    // A poll as long as the lease would leave no lease at all.
    expect(() =>
      createPostgresStore({ connectionString: "postgresql://x", leaseMs: 1_000, pollMs: 500 }),
    ).toThrow(/pollMs must be a whole number from 10 to 250, got 500/);
  });
});

describe("PostgreSQL store: schema and migrations", { timeout: 30_000 }, () => {
  it("creates its tables in the schema it is given, records the version, and migrates once when processes start together", async () => {
    const url = await postgres().createDatabase();
    await Promise.all([
      store(url, { schema: "gw_one" }),
      store(url, { schema: "gw_one" }),
      store(url, { schema: "gw_one" }),
    ]);
    const rows = await postgres().query("SELECT version FROM gw_one.migrations", [], dbName(url));
    expect(rows).toEqual([{ version: 1 }]);
    const tables = await postgres().query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'gw_one' ORDER BY 1",
      [],
      dbName(url),
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      "actors",
      "inbox",
      "migrations",
      "owners",
      "quarantine",
      "timers",
    ]);
  });

  it("refuses a schema a newer package migrated, saying so", async () => {
    const url = await postgres().createDatabase();
    await (await store(url, {}, true)).close();
    await postgres().query(
      "INSERT INTO a2a.migrations (version, name) VALUES (99, 'from the future')",
      [],
      dbName(url),
    );
    await expect(store(url)).rejects.toThrow(
      /schema "a2a" is at version 99, newer than this package knows \(1\): upgrade/,
    );
  });

  it("sets aside a record it cannot use when it claims it, and migrates an older one", async () => {
    const url = await postgres().createDatabase();
    const writer = await store(url, {}, true);
    await writer.put([storeRecord("fine"), storeRecord("odd")]);
    await writer.close();
    await postgres().query(
      `UPDATE a2a.actors SET record = json_build_object('id', 'odd', 'machineId', 'gone', 'machineVersion', 1, 'snapshot', 1, 'status', 'active', 'updatedAt', 1) WHERE id = 'odd'`,
      [],
      dbName(url),
    );
    const h = heard();
    const reader = await store(url, { heard: h });
    expect(ids(await reader.list("live"))).toEqual(["fine"]);
    expect(h.warnings.join("\n")).toMatch(/record "odd" was set aside: unknown machine "gone"/);
    const kept = await postgres().query("SELECT id, problem FROM a2a.quarantine", [], dbName(url));
    expect(kept).toEqual([{ id: "odd", problem: expect.stringMatching(/unknown machine/) }]);
  });
});

describe("PostgreSQL store: several processes on one schema", { timeout: 30_000 }, () => {
  it("fences writes: a put of another process's actor fails whole, naming it, and changes nothing", async () => {
    const url = await postgres().createDatabase();
    const a = await store(url);
    const b = await store(url);
    await a.put([storeRecord("mine")]);
    const error = await b
      .put([storeRecord("theirs"), storeRecord("mine", { updatedAt: STORE_T0 + 1 })])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ActorTakenOverError);
    expect((error as ActorTakenOverError).ids).toEqual(["mine"]);
    expect(await a.get("theirs")).toBeUndefined();
    expect((await a.get("mine"))?.updatedAt).toBe(STORE_T0);
    expect(ids(await a.list("live"))).toEqual(["mine"]);
    expect(ids(await b.list("live"))).toEqual([]);
    expect(ids(await b.listEveryLive())).toEqual(["mine"]);
  });

  it("kept() is a live record while its put is being written: its checked copy, gone once the put lands or is refused", async () => {
    const url = await postgres().createDatabase();
    const a = await store(url);
    const b = await store(url);
    await a.put([storeRecord("mine")]);
    expect(a.kept?.("mine")).toBeUndefined();
    const record = storeRecord("x", { meta: { note: "as put" } });
    const landing = a.put([record, storeRecord("done", { status: "done" })]);
    const kept = a.kept?.("x");
    expect(kept).toEqual(record);
    expect(kept).not.toBe(record); // a copy: the caller may change its own
    expect(a.kept?.("done")).toBeUndefined();
    await landing;
    expect(a.kept?.("x")).toBeUndefined();
    const refused = b.put([storeRecord("mine", { updatedAt: STORE_T0 + 1 })]);
    expect(b.kept?.("mine")?.updatedAt).toBe(STORE_T0 + 1);
    await expect(refused).rejects.toThrow(ActorTakenOverError);
    expect(b.kept?.("mine")).toBeUndefined();
    await a.close();
    expect(() => a.kept?.("x")).toThrow(SnapshotStoreNotOpenError);
  });

  it("listEveryLive finds every process's live records by machine and by what their meta holds", async () => {
    const url = await postgres().createDatabase();
    const a = await store(url);
    const b = await store(url);
    await a.put([
      storeRecord("a1", { meta: { threadId: "t1", n: 1 } }),
      storeRecord("a2", { meta: { threadId: "t2" } }),
    ]);
    await b.put([
      storeRecord("b1", { meta: { threadId: "t1" } }),
      storeRecord("b2", { status: "done", meta: { threadId: "t1" } }),
    ]);
    expect(ids(await a.listEveryLive({ meta: { threadId: "t1" } })).sort()).toEqual(["a1", "b1"]);
    expect(ids(await a.listEveryLive({ machineId: "mention", meta: { threadId: "t2" } }))).toEqual(["a2"]);
    expect(ids(await a.listEveryLive({ machineId: "other", meta: { threadId: "t1" } }))).toEqual([]);
    // Every key must match: a record without one, or with another value, is not listed.
    expect(ids(await b.listEveryLive({ meta: { threadId: "t1", topicId: "x" } }))).toEqual([]);
    expect(ids(await b.listEveryLive({ meta: { threadId: "t3" } }))).toEqual([]);
  });

  it("puts made together go as one statement, and one caller's taken-over actor fails only that caller", async () => {
    const url = await postgres().createDatabase();
    const a = await store(url);
    const b = await store(url);
    await b.put([storeRecord("theirs")]);
    // While the first put is in flight, the next two wait and go together.
    const first = a.put([storeRecord("z")]);
    const refused = a.put([storeRecord("theirs", { updatedAt: STORE_T0 + 1 })]);
    const fine = a.put([storeRecord("y")]);
    await first;
    await expect(refused).rejects.toBeInstanceOf(ActorTakenOverError);
    await fine;
    expect(ids(await a.list("live"))).toEqual(["y", "z"]);
    expect((await b.get("theirs"))?.updatedAt).toBe(STORE_T0);
  });

  it("gets made while one runs go together as the next statement: 200 at once cost two round trips", async () => {
    const url = await postgres().createDatabase();
    const s = await store(url);
    await s.put([storeRecord("used")]);
    const query = vi.spyOn(pg.Pool.prototype, "query");
    const found = await Promise.all(
      Array.from({ length: 200 }, (_, i) => s.get(i === 7 ? "used" : `new${i}`)),
    );
    const gets = query.mock.calls.filter(([config]) =>
      String((config as { name?: unknown }).name).endsWith(" get"),
    );
    query.mockRestore();
    expect(found.filter((r) => r !== undefined).map((r) => r?.id)).toEqual(["used"]);
    expect(gets).toHaveLength(2);
  });

  it("a finished actor stays finished: no process brings it back with a live put", async () => {
    const url = await postgres().createDatabase();
    const a = await store(url);
    await a.put([storeRecord("x")]);
    await a.put([storeRecord("x", { status: "done", updatedAt: STORE_T0 + 1 })]);
    await expect(a.put([storeRecord("x", { updatedAt: STORE_T0 + 2 })])).rejects.toThrow(ActorTakenOverError);
    // The same finished record again (a retried write that had landed) is accepted.
    await a.put([storeRecord("x", { status: "done", updatedAt: STORE_T0 + 1 })]);
  });

  it("hands a stopped process's actors to another, soonest due first", async () => {
    const url = await postgres().createDatabase();
    const a = await store(url);
    const h = heard();
    const b = await store(url, { heard: h });
    await a.put([
      storeRecord("late", {
        delayed: [{ id: "t", source: [], target: [], event: { type: "T" }, dueAt: STORE_T0 + 9_000 }],
      }),
      storeRecord("soon", {
        delayed: [{ id: "t", source: [], target: [], event: { type: "T" }, dueAt: STORE_T0 + 1_000 }],
      }),
      storeRecord("never", { delayed: [] }),
    ]);
    await a.close();
    await until("b to claim a's actors", () => h.claimed.length === 3);
    expect(h.claimed).toEqual(["soon", "late", "never"]);
    expect(ids(await b.list("live"))).toEqual(["late", "never", "soon"]);
  });

  it("keeps an event quietly while the owner cannot take it yet, and delivers it once it can", async () => {
    const url = await postgres().createDatabase();
    let ready = false;
    let tries = 0;
    const ha = heard();
    const a = await store(url, {
      heard: ha,
      deliver: async () => {
        tries += 1;
        return ready;
      },
    });
    await a.put([storeRecord("x")]);
    await a.sendTo({ id: "x", event: { type: "PING" } });
    await until("a to be offered the event twice", () => tries >= 2);
    expect(ha.delivered).toEqual([]);
    expect(ha.warnings).toEqual([]);
    ready = true;
    await until("a to get the event", () => ha.delivered.length === 1);
  });

  it("delivers an event sent through the inbox to the actor's owner, and deletes it only once delivered", async () => {
    const url = await postgres().createDatabase();
    let failing = true;
    const ha = heard();
    const a = await store(url, {
      heard: ha,
      deliver: async () => {
        if (failing) throw new Error("not yet");
        return true;
      },
    });
    const b = await store(url);
    await a.put([storeRecord("x")]);
    await b.sendTo({ id: "x", event: { type: "RESPONSE_RECEIVED", authorId: "u1", at: 5, messageId: "m1" } });
    await until("a to try the delivery", () => ha.warnings.some((w) => w.includes("not yet")));
    expect(await postgres().query("SELECT actor_id FROM a2a.inbox", [], dbName(url))).toEqual([
      { actor_id: "x" },
    ]);
    failing = false;
    await until("a to get the event", () => ha.delivered.length === 1);
    expect(ha.delivered).toEqual([
      { id: "x", event: { type: "RESPONSE_RECEIVED", authorId: "u1", at: 5, messageId: "m1" } },
    ]);
    await until(
      "the inbox to empty",
      async () => (await postgres().query("SELECT 1 FROM a2a.inbox", [], dbName(url))).length === 0,
    );
  });
});
