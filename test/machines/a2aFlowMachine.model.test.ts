import { describe, expect, it } from "vitest";
import type { AnyEventObject, AnyMachineSnapshot } from "xstate";
import { type A2AFlowContext, listTransitions } from "../../src/machines/index.js";
import {
  type A2AFlowInput,
  a2aFlowMachine,
  type PingPongOutput,
  type ReplyWaitOutput,
} from "../../src/index.js";
import { A2AErrorCategory, type A2AErrorInfo, ANNOUNCE_SKIP_TOKEN } from "../../src/policies/entryPoint.js";
import { pendingChildrenFlow } from "../support/flowFakes.js";
import { exerciseModel } from "../support/modelBased.js";

// Model-based coverage of a2aFlowMachine: every transition it defines fires in some enumerated path.
// Children are faked: their done and error events are sent by the paths.

const REQUESTER = "agent:ruda:a2a:conv-1";
const TARGET = "agent:eden:a2a:conv-1";

const collaboration: A2AFlowInput = {
  conversationId: "conv-1",
  routeKey: "ruda:eden",
  requesterSessionKey: REQUESTER,
  targetSessionKey: TARGET,
  message: "이 아키텍처 설계 같이 검토하자",
  announceTarget: { channel: "discord", to: "channel:1400000000000000500" },
  allowedChannels: ["1400000000000000500"],
  configuredMaxTurns: 3,
  autoTerminate: true,
  retry: { enabled: true, baseBackoffMs: 2_000, maxBackoffMs: 60_000 },
  maxWaitMs: 60_000,
  chunkMs: 30_000,
  idempotencyKey: "flow-1",
  seed: 3,
  mode: "async",
  fromAgent: "ruda",
  toAgent: "eden",
  startedAt: 1_000,
};

/** Announces to a channel outside the allowlist: the text is kept, nothing is posted. */
const elsewhere: A2AFlowInput = {
  ...collaboration,
  conversationId: "conv-3",
  announceTarget: { channel: "discord", to: "1400000000000000999" },
};

const notification: A2AFlowInput = {
  ...collaboration,
  conversationId: "conv-2",
  message: "[NOTIFICATION] 배포 파이프라인을 새 러너로 옮겼습니다",
  skipPingPong: true,
  announceTarget: null,
  mode: "sync",
};

const WAIT_TIMEOUT: A2AErrorInfo = {
  category: A2AErrorCategory.TRANSIENT,
  code: "wait_timeout",
  message: "응답 대기 시간 초과",
  retryable: true,
  attempt: 1,
  maxAttempts: 2,
};

function eventsFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const context = snapshot.context as A2AFlowContext;
  const at = context.lastAt + 1_000;
  if (snapshot.matches("awaitingReply")) {
    const waitDone = (output: ReplyWaitOutput) => ({ type: "xstate.done.actor.replyWait", output });
    return [
      waitDone({
        outcome: "replied",
        reply: "설계 문서 확인했습니다. 저장소 계층 분리가 필요해 보입니다.",
        retryAttempts: 0,
        at,
      }),
      waitDone({ outcome: "replied", retryAttempts: 1, at }),
      waitDone({
        outcome: "blocked",
        error: WAIT_TIMEOUT,
        retryAttempts: 1,
        outcomeMessage: "[outcome] blocked: 응답을 받지 못했습니다 (대기 시간 60초 초과)",
        at,
      }),
      { type: "xstate.error.actor.replyWait", error: new Error("reply wait crashed") },
    ];
  }
  if (snapshot.matches("pingPong")) {
    const pingPongDone = (output: PingPongOutput) => ({ type: "xstate.done.actor.pingPong", output });
    return [
      pingPongDone({
        actualTurns: 3,
        terminationReason: "max_turns",
        earlyTermination: false,
        latestReply: "체크포인트 간격은 부하 테스트 뒤에 다시 조정하죠",
        replies: ["a", "b", "체크포인트 간격은 부하 테스트 뒤에 다시 조정하죠"],
        retryAttempts: 0,
        at,
      }),
      pingPongDone({
        actualTurns: 2,
        terminationReason: "no_reply",
        earlyTermination: false,
        latestReply: "a",
        replies: ["a"],
        retryAttempts: 1,
        error: { ...WAIT_TIMEOUT, attempt: 1 },
        at,
      }),
      pingPongDone({
        actualTurns: 1,
        terminationReason: "explicit_skip",
        earlyTermination: true,
        replies: [],
        retryAttempts: 0,
        at,
      }),
      pingPongDone({
        actualTurns: 0,
        terminationReason: "skipped",
        earlyTermination: false,
        replies: [],
        retryAttempts: 0,
        at,
      }),
      { type: "xstate.error.actor.pingPong", error: new Error("ping-pong crashed") },
    ];
  }
  // Failures and retries of the announce and its post are explored from one path into announcing only:
  // every path multiplied by every retry would explode the graph without covering more transitions.
  const canonical = context.terminationReason === "max_turns" && context.retryAttempts === 0;
  if (snapshot.matches("announcing") && !canonical) {
    return [{ type: "xstate.done.actor.announceStep", output: { reply: "합의했습니다.", at } }];
  }
  if (snapshot.matches("posting") && !canonical) {
    return [{ type: "xstate.done.actor.postAnnouncement", output: { at } }];
  }
  if (snapshot.matches("announcing")) {
    const announced = (reply?: string) => ({
      type: "xstate.done.actor.announceStep",
      output: reply === undefined ? { at } : { reply, at },
    });
    return [
      announced("eden과 ruda가 저장소 계층 분리에 합의했습니다."),
      announced(ANNOUNCE_SKIP_TOKEN),
      announced(),
      {
        type: "xstate.done.actor.announceStep",
        output: { error: { source: "wait", status: "timeout" }, at },
      },
      {
        type: "xstate.done.actor.announceStep",
        output: { error: { source: "wait", status: "error", error: "context_length_exceeded" }, at },
      },
      { type: "xstate.error.actor.announceStep", error: new Error("announce timed out") },
    ];
  }
  // The wait's delay, as XState delivers it when it is due.
  if (snapshot.matches("announceRetrying")) {
    return [{ type: "xstate.after.backoffDelay.a2aFlow.announceRetrying" }];
  }
  if (snapshot.matches("postRetrying")) return [{ type: "xstate.after.retryDelay.a2aFlow.postRetrying" }];
  if (snapshot.matches("posting")) {
    return [
      { type: "xstate.done.actor.postAnnouncement", output: { at } },
      { type: "xstate.error.actor.postAnnouncement", error: new Error("socket hang up") },
      { type: "xstate.error.actor.postAnnouncement", error: { status: 403, message: "Missing Permissions" } },
    ];
  }
  return [];
}

const live = pendingChildrenFlow();

describe("a2aFlowMachine, enumerated", () => {
  const defined = new Set(listTransitions(a2aFlowMachine).map((t) => t.key));
  const taken = new Set<string>();
  const pathsPerInput = new Map<string, number>();

  for (const [name, input] of [
    ["a collaboration with an announce target", collaboration],
    ["a collaboration announcing outside the allowed channels", elsewhere],
    ["a notification with skipPingPong and no announce target", notification],
  ] as const) {
    it(`replays every enumerated path for ${name}`, () => {
      const result = exerciseModel(a2aFlowMachine, live, { input, events: eventsFor });
      for (const key of result.taken) taken.add(key);
      pathsPerInput.set(name, result.paths);
      expect(result.paths).toBeGreaterThan(10);
    });
  }

  it("fires every transition it defines, and nothing else (union over the inputs)", () => {
    expect(pathsPerInput.size).toBe(3);
    expect([...defined].filter((key) => !taken.has(key))).toEqual([]);
    expect([...taken].filter((key) => !defined.has(key))).toEqual([]);
  });

  it("decides the announce both ways", () => {
    expect(taken.has("a2aFlow.deciding always [announceWanted] → a2aFlow.announcing")).toBe(true);
    expect(taken.has("a2aFlow.deciding always → a2aFlow.completed")).toBe(true);
  });

  it("retries the announce step after its backoff and the post after its delay", () => {
    for (const [state, delay, next] of [
      ["announceRetrying", "backoffDelay", "announcing"],
      ["postRetrying", "retryDelay", "posting"],
    ]) {
      expect(taken).toContain(`a2aFlow.${state} xstate.after.${delay}.a2aFlow.${state} → a2aFlow.${next}`);
    }
  });
});
