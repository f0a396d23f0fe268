import { describe, expect, it } from "vitest";
import type { AnyEventObject, AnyMachineSnapshot } from "xstate";
import type { ReplyWaitContext } from "../../src/machines/index.js";
import { type ReplyWaitInput, replyWaitMachine } from "../../src/index.js";
import { pending } from "../support/fakeActors.js";
import { exerciseModel } from "../support/modelBased.js";

const input: ReplyWaitInput = {
  sessionKey: "agent:eden:a2a:c1",
  message: "인증 모듈 코드 리뷰 해줘",
  idempotencyKey: "flow-1",
  maxWaitMs: 60_000,
  chunkMs: 30_000,
  retry: { enabled: true, baseBackoffMs: 2_000, maxBackoffMs: 60_000 },
  startedAt: 1_000,
  seed: 7,
  trace: {
    conversationId: "conv-1",
    fromAgent: "ruda",
    toAgent: "eden",
    targetSessionKey: "agent:eden:a2a:c1",
    messageIntent: "question",
  },
};

const live = replyWaitMachine.provide({
  actors: { sendMessage: pending(), agentWait: pending(), readReply: pending() },
});

/** Events that reach every guard of each state: every wait status and each class of wait error. */
function eventsFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const context = snapshot.context as ReplyWaitContext;
  const at = context.lastAt + 1_000;
  const gatewayDown = { type: "xstate.error.actor.agentWait", error: new Error("socket hang up") };
  if (snapshot.matches("sending")) {
    return [
      { type: "xstate.done.actor.sendMessage", output: { runId: `run-${context.retryAttempts + 1}`, at } },
      { type: "xstate.error.actor.sendMessage", error: new Error("ECONNREFUSED") },
    ];
  }
  if (snapshot.matches("waiting")) {
    const done = (output: object) => ({ type: "xstate.done.actor.agentWait", output: { at, ...output } });
    return [
      done({ status: "ok" }),
      done({ status: "timeout", waitedMs: context.chunkMs }),
      done({ status: "not_found" }),
      done({ status: "error", error: "429 Too Many Requests: retry after 3s" }),
      done({ status: "error", error: "context_length_exceeded" }),
      done({ status: "error", error: "HTTP 503 overloaded" }),
      done({ status: "error", error: "tool crashed" }),
      gatewayDown,
    ];
  }
  if (snapshot.matches("reading")) {
    return [
      { type: "xstate.done.actor.readReply", output: { reply: "리뷰 완료: 두 군데 고쳐 주세요", at } },
      { type: "xstate.error.actor.readReply", error: new Error("history unavailable") },
    ];
  }
  // The backoff's end as XState delivers it.
  if (snapshot.matches("retrying")) return [{ type: "xstate.after.backoffDelay.replyWait.retrying" }];
  return [];
}

describe("replyWaitMachine, enumerated", () => {
  it("fires every transition it defines, guarded self-transitions included", () => {
    const { defined, taken, paths } = exerciseModel(replyWaitMachine, live, { input, events: eventsFor });
    expect(paths).toBeGreaterThan(20);
    expect([...defined].filter((key) => !taken.has(key))).toEqual([]);
    expect([...taken].filter((key) => !defined.has(key))).toEqual([]);
    expect(
      taken.has("replyWait.waiting xstate.done.actor.agentWait [waitTimeLeft] → replyWait.waiting"),
    ).toBe(true);
    expect(
      taken.has("replyWait.retrying xstate.after.backoffDelay.replyWait.retrying → replyWait.waiting"),
    ).toBe(true);
    // CPU-bound (thousands of replayed paths): seconds on a busy CI runner, beyond the 5 s default.
  }, 30_000);
});
