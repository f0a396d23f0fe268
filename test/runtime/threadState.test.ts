import { describe, expect, it } from "vitest";
import { ThreadState } from "../../src/runtime/ThreadState.js";

const HOUR = 3_600_000;
const limits = {
  threadReuseTTL: 6 * HOUR,
  observerHistoryLimit: 50,
  observerHistoryTTL: 24 * HOUR,
  participantTTL: 24 * HOUR,
};

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
    expect(state.snapshot().participants).toEqual({});
  });

  it("survives a save and load with its last activity, and a stored record's time does not refresh it", () => {
    let now = 10 * HOUR;
    const state = new ThreadState(limits, () => now);
    state.addParticipants("t1", ["ruda", "eden"]);
    const saved = state.snapshot();
    now = 20 * HOUR;
    const again = new ThreadState(limits, () => now);
    again.load(saved);
    again.addParticipants("t1", ["ruda", "eden"], 1 * HOUR); // the collaboration record, older than the save
    now = 34 * HOUR + 1;
    expect(again.participantsOf("t1")).toEqual([]);
  });
});

describe("ThreadState routes", () => {
  it("reports a change only when a route really changes (a start re-reads every route from the records)", () => {
    const state = new ThreadState(limits, () => 0);
    let changes = 0;
    state.onChange = () => (changes += 1);
    const route = {
      fromAgentId: "ruda",
      targetAgentId: "eden",
      threadId: "t1",
      channelId: "c1",
      lastUsedAt: 5,
    };
    state.useRoute(route);
    expect(changes).toBe(2); // the route and the thread's parent
    state.useRoute({ ...route });
    expect(changes).toBe(2);
    state.useRoute({ ...route, lastUsedAt: 4 }); // older: kept as it is
    expect(changes).toBe(2);
    state.useRoute({ ...route, lastUsedAt: 6 });
    expect(changes).toBe(3);
    expect(state.reusableRoute("ruda", "eden", undefined, 6)).toMatchObject({
      threadId: "t1",
      lastUsedAt: 6,
    });
  });
});
