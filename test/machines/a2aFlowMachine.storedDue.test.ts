import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import type { A2AFlowContext, PingPongContext } from "../../src/machines/index.js";
import type { A2AFlowInput } from "../../src/index.js";
import { flush, type GatewayScript, NEVER, scriptedGateway } from "../support/flowFakes.js";
import { simulatedTime } from "../support/simulatedTime.js";
import { storedFixture } from "../support/storedDue.js";

// A flow stored by the release before its waits were `after` delays keeps each wait's due time in a
// context (`due`): its own, for the announce step's backoff and the post's retry, or its ping-pong
// child's, for a failed step's backoff. The runtime still delivers them as BACKOFF_ELAPSED to the flow,
// which passes a child's on. The fixtures are such snapshots, written by that release. Restored, they
// have no XState delay scheduled: each runs its step again on that event at its due time, once.

type Stored = {
  value: string;
  context: A2AFlowContext;
  children: { pingPong?: { snapshot: { value: string; context: PingPongContext } } };
};

function restore(name: string, script: GatewayScript) {
  const stored = storedFixture<Stored>(name);
  const due = (stored.context.due ?? stored.children.pingPong?.snapshot.context.due)?.at ?? Number.NaN;
  const clock = simulatedTime(due - 100);
  const gateway = scriptedGateway({ ...script, startAt: due });
  const actor = createActor(gateway.flow, {
    // XState restores from the snapshot and ignores the input.
    input: {} as A2AFlowInput,
    snapshot: stored as never,
    clock: clock.timers,
  }).start();
  const deliver = async (at: number) => {
    clock.now = Math.max(clock.now, at);
    actor.send({ type: "BACKOFF_ELAPSED", at });
    await flush(6);
  };
  return { stored, due, actor, clock, gateway, deliver };
}

describe("a flow stored while its announce step waits for BACKOFF_ELAPSED", () => {
  it("runs the announce step again once at the due time, not before", async () => {
    const f = restore("a2aFlow.announceRetrying", { announce: "배포 확인 결과: 모두 정상입니다." });
    expect(f.stored.value).toBe("announceRetrying");
    expect(f.stored.context.due?.at).toBe(f.stored.context.lastAt + (f.stored.context.backoffMs ?? 0));
    expect(f.clock.nextDue()).toBeNaN();
    await f.deliver(f.due - 1);
    expect(f.actor.getSnapshot().value).toBe("announceRetrying");
    expect(f.gateway.calls.announceStep).toEqual([]);

    await f.deliver(f.due);
    await f.deliver(f.due);
    expect(f.gateway.calls.announceStep.map((c) => c.idempotencyKey)).toEqual(["flow-1:announce"]);
    expect(f.gateway.calls.postAnnouncement).toHaveLength(1);
    expect(f.actor.getSnapshot().status).toBe("done");
    expect(f.actor.getSnapshot().context).toMatchObject({
      announceRetries: 1,
      retryAttempts: 1,
      announced: true,
      due: undefined,
    });
    f.actor.stop();
  });
});

describe("a flow stored while its announcement's post waits for BACKOFF_ELAPSED", () => {
  it("posts again once at the due time, with the same nonce, not before", async () => {
    const f = restore("a2aFlow.postRetrying", {});
    expect(f.stored.value).toBe("postRetrying");
    await f.deliver(f.due - 1);
    expect(f.actor.getSnapshot().value).toBe("postRetrying");
    expect(f.gateway.calls.postAnnouncement).toEqual([]);

    await f.deliver(f.due);
    await f.deliver(f.due);
    expect(f.gateway.calls.postAnnouncement.map((c) => c.nonce)).toEqual(["flow-1:announce"]);
    expect(f.actor.getSnapshot().status).toBe("done");
    expect(f.actor.getSnapshot().context).toMatchObject({ postRetries: 1, announced: true, due: undefined });
    f.actor.stop();
  });
});

describe("a flow stored while its ping-pong child waits for BACKOFF_ELAPSED", () => {
  it("passes the event on: the child runs its failed step again once at the due time, not before", async () => {
    const f = restore("a2aFlow.pingPongRetrying", { steps: [NEVER] });
    expect(f.stored.children.pingPong?.snapshot.value).toBe("retrying");
    await f.deliver(f.due - 1);
    expect(f.actor.getSnapshot().value).toBe("pingPong");
    expect(f.gateway.calls.agentStep).toEqual([]);

    await f.deliver(f.due);
    await f.deliver(f.due);
    expect(f.gateway.calls.agentStep.map((c) => c.idempotencyKey)).toEqual(["flow-1:turn:1"]);
    const child = f.actor.getSnapshot().children.pingPong?.getSnapshot() as {
      value: string;
      context: PingPongContext;
    };
    expect(child.value).toBe("turn");
    expect(child.context).toMatchObject({ stepRetries: 1, lastAt: f.due, due: undefined });
    f.actor.stop();
  });
});

describe("a flow written by this release", () => {
  it("keeps no due time in any context while it waits: each wait is an after delay", async () => {
    const gateway = scriptedGateway({
      waits: [{ status: "ok" }],
      reply: "설계 문서를 읽었습니다. 이벤트 버스와 저장소 계층을 분리하는 방향이 좋아 보입니다.",
      steps: [{ error: { source: "wait", status: "timeout" } }, NEVER],
    });
    const input = storedFixture<Stored>("a2aFlow.announceRetrying").context;
    const actor = createActor(gateway.flow, {
      input: { ...input, configuredMaxTurns: 2, startedAt: gateway.now() } as unknown as A2AFlowInput,
      clock: gateway.clock,
    }).start();
    await flush(6);
    const child = actor.getSnapshot().children.pingPong?.getSnapshot() as {
      value: string;
      context: PingPongContext;
    };
    expect(child.value).toBe("retrying");
    expect(child.context.due).toBeUndefined();
    expect(JSON.stringify(actor.getPersistedSnapshot())).not.toContain('"due"');
    // The backoff's delay fires when its time comes, on XState's clock, not before.
    const due = child.context.lastAt + (child.context.backoffMs ?? 0);
    gateway.setNow(due - 1);
    await flush();
    expect(gateway.calls.agentStep).toHaveLength(1);
    gateway.setNow(due);
    await flush();
    expect(gateway.calls.agentStep).toHaveLength(2);
    const retried = actor.getSnapshot().children.pingPong?.getSnapshot() as { context: PingPongContext };
    // The retry starts as of its due time, whenever the delay was delivered.
    expect(retried.context).toMatchObject({ stepRetries: 1, lastAt: due });
    actor.stop();
  });
});
