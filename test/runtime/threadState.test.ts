import { describe, expect, it, vi } from "vitest";
import type { ObserverRecord } from "../../src/policies/entryPoint.js";
import { ThreadState } from "../../src/runtime/ThreadState.js";

const parentKeys = (state: ThreadState) => state.entries().flatMap((e) => (e.c === "parent" ? [e.k] : []));

/** Collects the entries `onChange` names from now on; `take()` hands them over (each once, as they are now). */
function watch(state: ThreadState) {
  const ids = new Set<string>();
  let calls = 0;
  state.onChange = (id) => {
    calls += 1;
    ids.add(id);
  };
  return {
    get calls() {
      return calls;
    },
    take() {
      const changed = [...ids].map((id) => state.entry(id));
      ids.clear();
      return changed;
    },
  };
}

const HOUR = 3_600_000;
const limits = {
  threadReuseTTL: 6 * HOUR,
  observerHistoryLimit: 50,
  observerHistoryTTL: 24 * HOUR,
  participantTTL: 24 * HOUR,
  cleanupMaxAgeMs: 48 * HOUR,
};

function record(channelId: string, messageId: string, ts: number): ObserverRecord {
  return {
    messageId,
    sender: "eden",
    summary: "요약",
    ts,
    channelId,
    extractedTokens: { mentions: [], urls: [], prNumbers: [], codeRefs: [] },
  };
}

const route = (threadId: string, lastUsedAt: number) => ({
  fromAgentId: "ruda",
  targetAgentId: "eden",
  threadId,
  channelId: "c1",
  lastUsedAt,
});

describe("ThreadState participants (participantTTL)", () => {
  it("expire participantTTL after the thread's last activity, and activity keeps them", () => {
    let now = 0;
    const state = new ThreadState(limits, () => now);
    state.addParticipants("t1", ["ruda", "eden"]);
    now = 23 * HOUR;
    state.touch("t1");
    now = 46 * HOUR;
    expect(state.participantsOf("t1").sort()).toEqual(["eden", "ruda"]);
    now = 47 * HOUR + 1;
    expect(state.participantsOf("t1")).toEqual([]);
  });

  it("survives a save and load with its last activity, and a stored record's time does not refresh it", () => {
    let now = 10 * HOUR;
    const state = new ThreadState(limits, () => now);
    state.addParticipants("t1", ["ruda", "eden"]);
    const saved = state.entries();
    now = 20 * HOUR;
    const again = new ThreadState(limits, () => now);
    again.load(saved);
    again.addParticipants("t1", ["ruda", "eden"], 1 * HOUR); // the collaboration record, older than the save
    now = 34 * HOUR + 1;
    expect(again.participantsOf("t1")).toEqual([]);
  });

  it("adds only who is new to a known thread, and reports a change only then", () => {
    const state = new ThreadState(limits, () => 0);
    state.addParticipants("t1", ["ruda", "eden"]);
    const changes = watch(state);
    state.addParticipants("t1", ["eden", "ruda"]);
    state.addParticipants("t1", ["ruda"]);
    expect(changes.calls).toBe(0);
    state.addParticipants("t1", ["eden", "mori", "mori"]);
    expect(changes.take()).toEqual([
      { c: "participants", k: "t1", v: { agentIds: ["ruda", "eden", "mori"], seenAt: 0 } },
    ]);
    expect(state.participantsOf("t1")).toEqual(["ruda", "eden", "mori"]);
  });
});

describe("ThreadState routes", () => {
  it("reports a change only when a route really changes (a start re-reads every route from the records)", () => {
    const state = new ThreadState(limits, () => 0);
    const changes = watch(state);
    state.useRoute(route("t1", 5));
    expect(changes.calls).toBe(2); // the route and the thread's parent
    state.useRoute(route("t1", 5));
    expect(changes.calls).toBe(2);
    state.useRoute(route("t1", 4)); // older: kept as it is
    expect(changes.calls).toBe(2);
    state.useRoute(route("t1", 6));
    expect(changes.calls).toBe(3);
    expect(state.reusableRoute("ruda", "eden", undefined, 6)).toMatchObject({
      threadId: "t1",
      lastUsedAt: 6,
    });
    expect(changes.take().map((e) => `${e.c} ${e.k}`)).toEqual(["route ruda:eden", "parent t1"]);
  });
});

describe("ThreadState.restoreRoute (a start re-reading its live collaborations)", () => {
  it("keeps a route already known for that thread, even when the record's post time is later", () => {
    const state = new ThreadState(limits, () => 0);
    state.useRoute(route("t1", 5));
    const changes = watch(state);
    // The post's time (Discord's) is 40 ms after the runtime last used the route (its own clock).
    state.restoreRoute(route("t1", 45));
    expect(changes.calls).toBe(0);
    expect(state.reusableRoute("ruda", "eden", undefined, 50)).toMatchObject({
      threadId: "t1",
      lastUsedAt: 5,
    });
    // Another thread for the pair, used later: the record's thread is the current one.
    state.restoreRoute(route("t2", 60));
    expect(state.reusableRoute("ruda", "eden", undefined, 60)).toMatchObject({
      threadId: "t2",
      lastUsedAt: 60,
    });
  });
});

describe("ThreadState.expire (bounded while running)", () => {
  it("drops a route unused for threadReuseTTL, and only then", () => {
    const state = new ThreadState(limits, () => 0);
    state.useRoute(route("t1", 0));
    const changes = watch(state);
    expect(state.expire(6 * HOUR - 1).removed).toBe(0);
    expect(state.expire(6 * HOUR).removed).toBe(1);
    expect(state.reusableRoute("ruda", "eden", undefined, 0)).toBeUndefined();
    expect(changes.take()).toEqual([{ c: "route", k: "ruda:eden" }]);
  });

  it("drops participants and their activity participantTTL after the last activity", () => {
    let now = 0;
    const state = new ThreadState(limits, () => now);
    state.addParticipants("t1", ["ruda", "eden"]);
    now = 10 * HOUR;
    state.touch("t1");
    expect(state.expire(34 * HOUR).removed).toBe(0);
    expect(state.expire(34 * HOUR + 1).removed).toBe(1);
    expect(state.entries().filter((e) => e.c === "participants")).toEqual([]);
    // Touching an expired thread does not bring it back.
    state.touch("t1", 35 * HOUR);
    now = 35 * HOUR;
    expect(state.participantsOf("t1")).toEqual([]);
  });

  it("drops observer records past observerHistoryTTL, and a channel left with none", () => {
    const state = new ThreadState(limits, () => 0);
    state.observe(record("c1", "m1", 0), 0);
    state.observe(record("c1", "m2", 2 * HOUR), 2 * HOUR);
    state.observe(record("c2", "m3", 1 * HOUR), 1 * HOUR);
    const changes = watch(state);
    expect(state.expire(25 * HOUR).removed).toBe(2);
    expect(state.observerHistory("c1", 25 * HOUR).map((r) => r.messageId)).toEqual(["m2"]);
    expect(
      state
        .entries()
        .filter((e) => e.c === "observed")
        .map((e) => e.k),
    ).toEqual(["c1 m2"]);
    expect(changes.take()).toEqual([
      { c: "observed", k: "c1 m1" },
      { c: "observed", k: "c2 m3" },
    ]);
  });

  it("drops system-message ids older than cleanupMaxAgeMs", () => {
    const state = new ThreadState(limits, () => 0);
    state.markSystemMessage("m1", 0);
    state.markSystemMessage("m2", HOUR);
    expect(state.expire(48 * HOUR + 1).removed).toBe(1);
    expect(state.isSystemMessage("m1")).toBe(false);
    expect(state.isSystemMessage("m2")).toBe(true);
  });

  it("keeps a parent while its thread matters (participants, a route, a sink thread, a live collaboration), drops it after cleanupMaxAgeMs otherwise", () => {
    const live = new Set(["live"]);
    const state = new ThreadState(
      { ...limits, participantTTL: 48 * HOUR },
      () => 0,
      (id) => live.has(id),
    );
    for (const id of ["idle", "live", "sink", "joined"]) state.setParent(id, "c1", 0);
    state.markSinkThread("sink");
    state.addParticipants("joined", ["ruda"], 40 * HOUR);
    expect(state.expire(48 * HOUR).removed).toBe(0);
    expect(state.expire(48 * HOUR + 1).removed).toBe(1);
    expect(parentKeys(state).sort()).toEqual(["joined", "live", "sink"]);
    // The participants expire at 88 h; the parent goes with the next expiry after that.
    expect(state.expire(88 * HOUR + 1).removed).toBe(2);
    expect(parentKeys(state).sort()).toEqual(["live", "sink"]);
    live.clear();
    expect(state.expire(88 * HOUR + 2).removed).toBe(1);
    expect(parentKeys(state)).toEqual(["sink"]);
    expect(state.isSinkThread("sink")).toBe(true);
  });

  it("a parent no thread needs goes after participantTTL when cleanupMaxAgeMs is longer (a month of finished threads is not kept)", () => {
    const live = new Set(["live"]);
    const state = new ThreadState(
      limits, // participantTTL 24 h, cleanupMaxAgeMs 48 h
      () => 0,
      (id) => live.has(id),
    );
    for (const id of ["finished", "live"]) state.setParent(id, "c1", 0);
    state.markSystemMessage("m1", 0);
    expect(state.expire(24 * HOUR).removed).toBe(0);
    expect(state.expire(24 * HOUR + 1).removed).toBe(1);
    expect(parentKeys(state)).toEqual(["live"]);
    // System-message ids still follow cleanupMaxAgeMs.
    expect(state.isSystemMessage("m1")).toBe(true);
    expect(state.expire(48 * HOUR + 1).removed).toBe(1);
    expect(state.isSystemMessage("m1")).toBe(false);
  });

  it("a route's thread keeps its parent until the route expires", () => {
    const state = new ThreadState({ ...limits, threadReuseTTL: 72 * HOUR }, () => 0);
    state.useRoute(route("t1", 0));
    expect(state.expire(60 * HOUR).removed).toBe(0);
    expect(state.parentOf("t1")).toBe("c1");
    expect(state.expire(72 * HOUR).removed).toBe(2);
    expect(state.parentOf("t1")).toBeUndefined();
  });

  it("a start re-reading old records does not bring back a route or participants that expired", () => {
    const state = new ThreadState(limits, () => 30 * HOUR);
    const changes = watch(state);
    state.useRoute(route("t1", 0));
    state.addParticipants("t1", ["ruda", "eden"], 0);
    expect(state.entries()).toEqual([]);
    expect(changes.take()).toEqual([]);
  });

  it("a record pushed out by observerHistoryLimit is saved as removed", () => {
    const state = new ThreadState({ ...limits, observerHistoryLimit: 2 }, () => 0);
    const changes = watch(state);
    for (const id of ["m1", "m2", "m3"]) state.observe(record("c1", id, 0), 0);
    expect(changes.take()).toEqual([
      { c: "observed", k: "c1 m1" },
      { c: "observed", k: "c1 m2", v: record("c1", "m2", 0) },
      { c: "observed", k: "c1 m3", v: record("c1", "m3", 0) },
    ]);
  });

  it("looks for no record in a channel's list: an observe() with thousands kept does not scan them each", () => {
    const state = new ThreadState({ ...limits, observerHistoryLimit: 100_000 }, () => 0);
    // Every linear search of an array counted by the elements it may scan.
    let scanned = 0;
    const originals = { includes: Array.prototype.includes, indexOf: Array.prototype.indexOf };
    const searches = (["includes", "indexOf"] as const).map((name) =>
      vi.spyOn(Array.prototype, name).mockImplementation(function (this: unknown[], ...args: unknown[]) {
        scanned += this.length;
        return Reflect.apply(originals[name], this, args) as never;
      }),
    );
    try {
      for (let i = 0; i < 2_000; i++) state.observe(record("c1", `m${i}`, i), i);
    } finally {
      for (const spy of searches) spy.mockRestore();
    }
    expect(state.observerHistory("c1", 2_000)).toHaveLength(2_000);
    expect(scanned).toBeLessThan(2_000);
  });
});

describe("ThreadState.size", () => {
  it("counts the persisted entries ids() names, observer records one by one", () => {
    const state = new ThreadState(limits, () => 0);
    expect(state.size).toBe(0);
    state.useRoute(route("t1", 0)); // a route and its thread's parent
    state.addParticipants("t1", ["ruda"]);
    state.markSinkThread("s1");
    state.markSystemMessage("m9");
    for (const id of ["m1", "m2"]) state.observe(record("c1", id, 0), 0);
    state.observe(record("c2", "m3", 0), 0);
    expect(state.size).toBe(8);
    expect(state.size).toBe([...state.ids()].length);
  });
});

describe("ThreadState conversations (a sessionsSend route's latest)", () => {
  it("keeps the route's latest conversation; an older event changes nothing, one as old replaces it", () => {
    const state = new ThreadState(limits, () => 0);
    expect(state.conversationOf("deploys")).toBeUndefined();
    state.noteConversation("deploys", "conv-1", 10);
    state.noteConversation("deploys", "conv-2", 20);
    state.noteConversation("deploys", "conv-0", 5);
    expect(state.conversationOf("deploys")).toBe("conv-2");
    state.noteConversation("deploys", "conv-3", 20);
    expect(state.conversationOf("deploys")).toBe("conv-3");
    state.noteConversation("__proto__", "conv-p", 1);
    expect(state.conversationOf("__proto__")).toBe("conv-p");
  });

  it("is bounded to 10,000 routes: the least recently updated goes first, also after a save and load", () => {
    const state = new ThreadState(limits, () => 0);
    const changes = watch(state);
    for (let i = 0; i < 10_000; i++) state.noteConversation(`route-${i}`, `conv-${i}`, i);
    state.noteConversation("route-0", "conv-0b", 10_000); // route-0 is now the latest
    state.noteConversation("new", "conv-new", 10_001); // evicts route-1
    expect(state.conversationOf("route-0")).toBe("conv-0b");
    expect(state.conversationOf("route-1")).toBeUndefined();
    expect(state.conversationOf("new")).toBe("conv-new");
    expect(changes.take().filter((e) => e.c === "conversation" && e.v === undefined)).toEqual([
      { c: "conversation", k: "route-1" },
    ]);

    // Read back in another order (as a store may hand them), the order of updates comes back.
    const again = new ThreadState(limits, () => 0);
    again.load(state.entries().reverse());
    expect(again.conversationOf("new")).toBe("conv-new");
    again.noteConversation("newer", "conv-newer", 10_002); // evicts route-2
    again.noteConversation("route-3", "conv-3b", 10_003);
    again.noteConversation("newest", "conv-newest", 10_004); // evicts route-4, not route-3
    expect(again.conversationOf("route-2")).toBeUndefined();
    expect(again.conversationOf("route-3")).toBe("conv-3b");
    expect(again.conversationOf("route-4")).toBeUndefined();
    expect(again.conversationOf("route-0")).toBe("conv-0b");
    // Conversations do not expire by age.
    expect(again.expire(Number.MAX_SAFE_INTEGER).removed).toBe(0);
    expect(again.conversationOf("route-5")).toBe("conv-5");
  });
});

describe("ThreadState.load: observer records", () => {
  it("keeps each key's last entry, a removal drops it, and each channel's records come back in time order", () => {
    const state = new ThreadState(limits, () => 0);
    state.load([
      { c: "observed", k: "c1 m2", v: record("c1", "m2", 20) },
      { c: "observed", k: "c1 m1", v: record("c1", "m1", 30) },
      { c: "observed", k: "c2 m3", v: record("c2", "m3", 5) },
      { c: "observed", k: "c1 m1", v: record("c1", "m1", 10) },
      { c: "observed", k: "c2 m3" },
    ]);
    expect(state.observerHistory("c1", 40).map((r) => [r.messageId, r.ts])).toEqual([
      ["m1", 10],
      ["m2", 20],
    ]);
    expect(state.observerHistory("c2", 40)).toEqual([]);
    expect([...state.ids()].filter((id) => id.startsWith("observed"))).toEqual([
      "observed c1 m1",
      "observed c1 m2",
    ]);
  });

  it("reads each record a number of times that does not grow with how many its channel holds", () => {
    // The fields read of each record loaded, counted: the work of a start per record.
    const readsPerRecord = (n: number) => {
      let reads = 0;
      const counted = (r: ObserverRecord) =>
        new Proxy(r, {
          get: (target, key, receiver) => {
            reads += 1;
            return Reflect.get(target, key, receiver) as unknown;
          },
        });
      const entries = Array.from({ length: n }, (_, i) => ({
        c: "observed" as const,
        k: `c1 m${i}`,
        v: counted(record("c1", `m${i}`, (i * 7_919) % n)),
      }));
      new ThreadState({ ...limits, observerHistoryLimit: n }, () => 0).load(entries);
      return reads / n;
    };
    const small = readsPerRecord(500);
    // A sort reads each record log n times: 2,000 records may cost a little more each, not 4× as much.
    expect(readsPerRecord(2_000)).toBeLessThan(small * 1.5);
  });
});
