import { describe, expect, it } from "vitest";
import { createActor, fromPromise } from "xstate";
import { type AgentStepInput, type AgentStepOutput, type PingPongContext } from "../../src/machines/index.js";
import { type PingPongInput, pingPongMachine } from "../../src/index.js";
import { flush } from "../support/flowFakes.js";
import { simulatedTime } from "../support/simulatedTime.js";
import { storedFixture } from "../support/storedDue.js";

// A ping-pong stored by the release before its step retry's backoff was an `after` delay keeps the
// backoff's due time in its context (`due`), which the runtime still delivers as BACKOFF_ELAPSED. The
// fixture is such a snapshot, written by that release (one failed step, waiting in `retrying`).
// Restored, it has no XState delay scheduled: it runs the step again on that event at its due time, once.

type Stored = { value: string; context: PingPongContext };

function restore(stored: Stored, now: number) {
  const clock = simulatedTime(now);
  const steps: AgentStepInput[] = [];
  const agentStep = fromPromise<AgentStepOutput, AgentStepInput>(({ input }) => {
    steps.push(input);
    return new Promise<never>(() => {});
  });
  const actor = createActor(pingPongMachine.provide({ actors: { agentStep } }), {
    // XState restores from the snapshot and ignores the input.
    input: {} as PingPongInput,
    snapshot: stored as never,
    clock: clock.timers,
  }).start();
  const deliver = async (at: number) => {
    clock.now = Math.max(clock.now, at);
    actor.send({ type: "BACKOFF_ELAPSED", at });
    await flush();
  };
  return { actor, clock, steps, deliver };
}

describe("a ping-pong stored in retrying, waiting for BACKOFF_ELAPSED at its due time", () => {
  const stored = storedFixture<Stored>("pingPong.retrying");
  const due = stored.context.due?.at ?? Number.NaN;

  it("runs the failed step again once at that time, not before", async () => {
    expect(stored.value).toBe("retrying");
    expect(stored.context.due).toEqual({
      event: "BACKOFF_ELAPSED",
      at: stored.context.lastAt + (stored.context.backoffMs ?? Number.NaN),
    });
    const p = restore(stored, stored.context.lastAt + 100);
    // No delay was scheduled for it: time alone does not end the stored wait, nor an early event.
    expect(p.clock.nextDue()).toBeNaN();
    await p.deliver(due - 1);
    expect(p.actor.getSnapshot().value).toBe("retrying");
    expect(p.steps).toEqual([]);

    await p.deliver(due);
    await p.deliver(due);
    expect(p.actor.getSnapshot().value).toBe("turn");
    expect(p.steps.map((s) => s.idempotencyKey)).toEqual(["flow-1:turn:1"]);
    expect(p.actor.getSnapshot().context).toMatchObject({
      stepRetries: 1,
      retryAttempts: 1,
      lastAt: due,
      due: undefined,
    });
    p.actor.stop();
  });

  it("delivered late (a restart after the due time), runs the step once, as of the delivery", async () => {
    const p = restore(stored, due + 60_000);
    await p.deliver(due + 60_000);
    expect(p.steps).toHaveLength(1);
    expect(p.actor.getSnapshot().context).toMatchObject({ stepRetries: 1, lastAt: due + 60_000 });
    p.actor.stop();
  });
});
