import { describe, expect, it } from "vitest";
import type { AnyEventObject, AnyMachineSnapshot } from "xstate";
import { type PingPongInput, pingPongMachine } from "../../src/index.js";
import { A2AMessageIntent, REPLY_SKIP_TOKEN } from "../../src/policies/entryPoint.js";
import { listTransitions, type AgentStepError, type PingPongContext } from "../../src/machines/index.js";
import { pending } from "../support/fakeActors.js";
import { exerciseModel, replayPath } from "../support/modelBased.js";

// Model-based coverage of pingPongMachine: every transition it defines fires in some enumerated path,
// over several inputs (the `starting` decisions depend on the input).

const REQUESTER = "agent:ruda:a2a:conv-1";
const TARGET = "agent:eden:a2a:conv-1";

const base: PingPongInput = {
  requesterSessionKey: REQUESTER,
  targetSessionKey: TARGET,
  originalMessage: "이 아키텍처 설계 같이 검토하자",
  messageIntent: A2AMessageIntent.COLLABORATION,
  effectiveTurns: 3,
  autoTerminate: true,
  primaryReply: "설계 문서를 읽었습니다. 이벤트 버스와 저장소 계층을 분리하는 방향이 좋아 보입니다.",
  idempotencyKey: "flow-1",
  startedAt: 1_000,
  trace: {
    conversationId: "conv-1",
    fromAgent: "ruda",
    toAgent: "eden",
    requesterSessionKey: REQUESTER,
    targetSessionKey: TARGET,
    messageIntent: A2AMessageIntent.COLLABORATION,
  },
};

/** Substantive replies, one per turn, with few words in common (no repetition between them). */
const SUBSTANTIVE = [
  "저장소 계층은 lowdb 대신 append-only 로그로 두고 스냅샷은 주기적으로 압축하면 어떨까요",
  "좋은 제안입니다만 재시작 시 로그 재생 비용이 커지니 체크포인트 주기를 설정으로 빼 두겠습니다",
  "동의합니다 그러면 체크포인트 간격은 기본 천 건으로 하고 부하 테스트 뒤에 다시 조정하죠",
];
/** An acknowledgement opening, long enough not to be minimal content, without a question: a conclusion. */
const ACKNOWLEDGEMENT = "알겠습니다, 말씀하신 방향으로 설계 문서에 반영하겠습니다 감사합니다";
/** An acknowledgement followed by a question: it keeps the conversation going. */
const ACK_WITH_QUESTION = "알겠습니다. 그런데 캐시 무효화는 어느 계층에서 하나요?";
const SHORT = "좋아요";

/** The backoff's `after` delay, as XState delivers it when it is due. */
const BACKOFF_OVER = { type: "xstate.after.backoffDelay.pingPong.retrying" };

/**
 * Events that reach every guard of `turn`: each termination rule, continuing replies, an error; in
 * `retrying`, the backoff's delay.
 */
function eventsFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  const context = snapshot.context as PingPongContext;
  if (snapshot.matches("retrying")) return [BACKOFF_OVER];
  if (!snapshot.matches("turn")) return [];
  const at = context.lastAt + 1_000;
  const done = (reply?: string) => ({
    type: "xstate.done.actor.agentStep",
    output: reply === undefined ? { at } : { reply, at },
  });
  const events: AnyEventObject[] = [
    done(),
    done("   "),
    done(REPLY_SKIP_TOKEN),
    done(SHORT),
    done(ACKNOWLEDGEMENT),
    done(ACK_WITH_QUESTION),
    done(SUBSTANTIVE[context.turn - 1] ?? SUBSTANTIVE[0]),
    { type: "xstate.error.actor.agentStep", error: new Error("agent step timed out") },
  ];
  const previous = context.replies[context.replies.length - 1];
  if (previous !== undefined) events.push(done(previous));
  // Failed steps on the first turn only: retries on every turn would multiply the graph, not the coverage.
  if (context.turn === 1) {
    const failed = (error: AgentStepError) => ({
      type: "xstate.done.actor.agentStep",
      output: { error, at },
    });
    events.push(
      failed({ source: "wait", status: "timeout" }),
      failed({ source: "wait", status: "error", message: "context_length_exceeded" }),
    );
  }
  return events;
}

const inputs: Array<[string, PingPongInput]> = [
  ["3 turns, autoTerminate on", base],
  [
    "1 turn, failed steps retried",
    { ...base, effectiveTurns: 1, retry: { enabled: true, baseBackoffMs: 2_000, maxBackoffMs: 60_000 } },
  ],
  ["2 turns, autoTerminate off", { ...base, effectiveTurns: 2, autoTerminate: false }],
  ["0 effective turns", { ...base, effectiveTurns: 0 }],
  ["no requester", { ...base, requesterSessionKey: undefined }],
  ["requester is the target", { ...base, requesterSessionKey: TARGET }],
  ["blank primary reply", { ...base, primaryReply: "  \n" }],
  ["no primary reply", { ...base, primaryReply: undefined }],
];

const live = pingPongMachine.provide({ actors: { agentStep: pending() } });

describe("pingPongMachine, enumerated", () => {
  const defined = new Set(listTransitions(pingPongMachine).map((t) => t.key));
  const taken = new Set<string>();
  const pathsPerInput = new Map<string, number>();

  for (const [name, input] of inputs) {
    it(`replays every enumerated path for input "${name}"`, () => {
      const result = exerciseModel(pingPongMachine, live, { input, events: eventsFor });
      // `starting` resolves while the actor is created: an input that ends there has no edges to explore.
      for (const key of [...result.taken, ...replayPath(live, input, [])]) taken.add(key);
      pathsPerInput.set(name, result.paths);
    });
  }

  it("fires every transition it defines, and nothing else (union over the inputs)", () => {
    expect(pathsPerInput.size).toBe(inputs.length);
    expect(pathsPerInput.get("3 turns, autoTerminate on")).toBeGreaterThan(30);
    expect([...defined].filter((key) => !taken.has(key))).toEqual([]);
    expect([...taken].filter((key) => !defined.has(key))).toEqual([]);
    expect(defined.size).toBe(15);
  });

  it("reaches each early termination through its own guard", () => {
    for (const guard of ["explicitSkip", "repetitionDetected", "minimalContent", "conclusionDetected"]) {
      expect(taken.has(`pingPong.turn xstate.done.actor.agentStep [${guard}] → pingPong.done`)).toBe(true);
    }
    expect(taken.has("pingPong.turn xstate.done.actor.agentStep → pingPong.turn")).toBe(true);
    expect(taken.has("pingPong.starting always [pingPongSkipped] → pingPong.done")).toBe(true);
    expect(taken.has("pingPong.starting always [noPrimaryReply] → pingPong.done")).toBe(true);
  });

  it("retries a failed step only when the policy allows, and only once its backoff is due", () => {
    expect(taken.has("pingPong.failing always [retryAllowed] → pingPong.retrying")).toBe(true);
    expect(taken.has("pingPong.failing always → pingPong.done")).toBe(true);
    expect(taken.has("pingPong.retrying xstate.after.backoffDelay.pingPong.retrying → pingPong.turn")).toBe(
      true,
    );
  });
});
