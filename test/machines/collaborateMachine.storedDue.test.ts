import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { type CollaborateContext } from "../../src/machines/index.js";
import { type CollaborateInput, collaborateMachine, mentionMachine } from "../../src/index.js";
import { fakeCreateThread, IDS, postingAt } from "../support/discordFakes.js";
import { simulatedTime } from "../support/simulatedTime.js";
import { storedFixture } from "../support/storedDue.js";

// A collaboration stored by the release before its retries were `after` delays keeps the retry's due
// time in its context (`due`), which the runtime still delivers as RETRY_DUE. The fixtures are such
// snapshots, written by that release: a failed starter post, thread creation, mention post (a 429)
// and failure notice (a 503 after a 403), each waiting in `retrying` or `noticeRetrying`. Restored,
// they have no XState delay scheduled: each runs the failed step again on that event at its due
// time, once.

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

type Stored = { value: string; context: CollaborateContext };

function restore(name: string) {
  const stored = storedFixture<Stored>(name);
  const due = stored.context.due?.at ?? Number.NaN;
  const clock = simulatedTime(due - 100);
  const fakes = {
    postStarter: postingAt(clock, "starter"),
    createThread: fakeCreateThread(() => ({ ok: { threadId: IDS.newThread, at: clock.now } })),
    postMention: postingAt(clock, "mention"),
    postNotice: postingAt(clock, "notice"),
  };
  const machine = collaborateMachine.provide({
    actors: {
      postStarter: fakes.postStarter.logic,
      createThread: fakes.createThread.logic,
      postMention: fakes.postMention.logic,
      postNotice: fakes.postNotice.logic,
      mention: mentionMachine.provide({
        actors: { postReminder: postingAt(clock).logic, postEscalation: postingAt(clock).logic },
      }),
    },
  });
  const actor = createActor(machine, {
    // XState restores from the snapshot and ignores the input.
    input: {} as CollaborateInput,
    snapshot: stored as never,
    clock: clock.timers,
  }).start();
  const deliver = async (at: number) => {
    clock.now = Math.max(clock.now, at);
    // A finished collaboration takes no more events (XState would warn).
    if (actor.getSnapshot().status === "active") actor.send({ type: "RETRY_DUE", at });
    await settle();
  };
  const calls = () => ({
    postStarter: fakes.postStarter.inputs.length,
    createThread: fakes.createThread.inputs.length,
    postMention: fakes.postMention.inputs.length,
    postNotice: fakes.postNotice.inputs.length,
  });
  return { stored, due, actor, clock, deliver, calls };
}

const NONE = { postStarter: 0, createThread: 0, postMention: 0, postNotice: 0 };

describe("a collaboration stored while a failed step waits for RETRY_DUE at its due time", () => {
  it.each([
    ["collaborate.retryingStarter", "retrying", { ...NONE, postStarter: 1, createThread: 1, postMention: 1 }],
    ["collaborate.retryingThread", "retrying", { ...NONE, createThread: 1, postMention: 1 }],
    ["collaborate.retryingMention", "retrying", { ...NONE, postMention: 1 }],
    ["collaborate.noticeRetrying", "noticeRetrying", { ...NONE, postNotice: 1 }],
  ] as const)("%s: runs the failed step again once at that time, not before", async (name, state, calls) => {
    const c = restore(name);
    expect(c.stored.value).toBe(state);
    expect(c.clock.nextDue()).toBeNaN();
    await c.deliver(c.due - 1);
    expect(c.actor.getSnapshot().value).toBe(state);
    expect(c.calls()).toEqual(NONE);

    await c.deliver(c.due);
    await c.deliver(c.due);
    expect(c.calls()).toEqual(calls);
    expect(c.actor.getSnapshot().value).toBe(state === "retrying" ? "awaitingResponse" : "failed");
    expect(c.actor.getSnapshot().context).toMatchObject({ due: undefined });
    c.actor.stop();
  });

  it("delivered late (a restart after the due time), retries once, as of the delivery", async () => {
    const c = restore("collaborate.retryingMention");
    await c.deliver(c.due + 60_000);
    expect(c.calls()).toEqual({ ...NONE, postMention: 1 });
    expect(c.actor.getSnapshot().context).toMatchObject({ retries: 0, sentAt: c.due + 60_000 });
    c.actor.stop();
  });
});
