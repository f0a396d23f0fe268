import { describe, expect, it } from "vitest";
import { ScriptedGateway, VirtualClock } from "../../src/testing/index.js";

const call = (idempotencyKey: string) => ({ sessionKey: "agent:eden:main", message: "hi", idempotencyKey });

describe("ScriptedGateway", () => {
  it("plays a session's turns in order: waits before ok, the reply once ok, a throw that uses its turn up", async () => {
    let now = 100;
    const gateway = new ScriptedGateway(
      {
        "agent:eden:main": [
          { reply: "첫째", waits: [{ status: "error", error: "429 rate limit, retry after 30s" }] },
          { throws: new Error("connect ECONNREFUSED") },
          "셋째",
        ],
      },
      { now: () => now },
    );
    const first = await gateway.agent(call("k1"));
    expect(await gateway.agentWait({ runId: first.runId, timeoutMs: 1 })).toEqual({
      status: "error",
      error: "429 rate limit, retry after 30s",
    });
    now = 200;
    // A resend with the same key is the same run: it takes no new turn.
    expect(await gateway.agent(call("k1"))).toEqual(first);
    expect(await gateway.agentWait({ runId: first.runId, timeoutMs: 1 })).toEqual({ status: "ok" });
    expect(await gateway.readLatestAssistantReply({ sessionKey: "agent:eden:main" })).toBe("첫째");
    await expect(gateway.agent(call("k2"))).rejects.toThrow("connect ECONNREFUSED");
    const third = await gateway.agent(call("k3"));
    await gateway.agentWait({ runId: third.runId, timeoutMs: 1 });
    expect(await gateway.readLatestAssistantReply({ sessionKey: "agent:eden:main" })).toBe("셋째");
    expect(gateway.calls.map((c) => [c.idempotencyKey, c.runId, c.at])).toEqual([
      ["k1", "run-1", 100],
      ["k1", "run-1", 200],
      ["k3", "run-2", 200],
    ]);
    expect(gateway.callsOf("agent:other:main")).toEqual([]);
  });

  it("answers not_found for a run it never started, and a session without turns replies nothing", async () => {
    const gateway = new ScriptedGateway();
    expect(await gateway.agentWait({ runId: "run-9", timeoutMs: 1 })).toMatchObject({ status: "not_found" });
    const run = await gateway.agent(call("k"));
    expect(await gateway.agentWait({ runId: run.runId, timeoutMs: 1 })).toEqual({ status: "ok" });
    expect(await gateway.readLatestAssistantReply({ sessionKey: "agent:eden:main" })).toBeUndefined();
  });

  it("a turn that hangs answers its waits, then never answers; the session's next run plays on", async () => {
    const gateway = new ScriptedGateway({
      "agent:eden:main": [{ reply: "늦은 답", waits: [{ status: "timeout" }], hangs: true }, "다음"],
    });
    const run = await gateway.agent(call("k1"));
    expect(await gateway.agentWait({ runId: run.runId, timeoutMs: 1 })).toEqual({ status: "timeout" });
    let answered = false;
    void gateway.agentWait({ runId: run.runId, timeoutMs: 1 }).then(() => (answered = true));
    // A resend is the same run: it hangs too.
    expect(await gateway.agent(call("k1"))).toEqual(run);
    void gateway.agentWait({ runId: run.runId, timeoutMs: 1 }).then(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answered).toBe(false);
    expect(await gateway.readLatestAssistantReply({ sessionKey: "agent:eden:main" })).toBeUndefined();
    const next = await gateway.agent(call("k2"));
    expect(await gateway.agentWait({ runId: next.runId, timeoutMs: 1 })).toEqual({ status: "ok" });
    expect(await gateway.readLatestAssistantReply({ sessionKey: "agent:eden:main" })).toBe("다음");
    expect(gateway.waits.map((w) => w.runId)).toEqual(["run-1", "run-1", "run-1", "run-2"]);
  });

  it("thinks thinkMs on its timers before each agentWait answers, at most the wait's timeout", async () => {
    const clock = new VirtualClock(0);
    const gateway = new ScriptedGateway(
      { "agent:eden:main": ["답"] },
      { now: clock.now, timers: clock, thinkMs: 4_000 },
    );
    const run = await gateway.agent(call("k"));
    let answered: unknown;
    void gateway.agentWait({ runId: run.runId, timeoutMs: 3_000 }).then((outcome) => (answered = outcome));
    await clock.advance(2_999, async () => {});
    expect(answered).toBeUndefined();
    await clock.advance(1, async () => {});
    expect(answered).toEqual({ status: "ok" });
    expect(gateway.waits).toEqual([{ runId: run.runId, timeoutMs: 3_000, at: 0 }]);
    expect(() => new ScriptedGateway({}, { thinkMs: -1 })).toThrow(/thinkMs/);
  });
});
