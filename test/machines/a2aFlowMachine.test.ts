import { MachineInputError } from "../../src/machines/MachineInputError.js";
// a2aFlowMachine: one sessions_send from start to end (reply wait and retries, ping-pong, announce,
// events), with every side effect scripted on a fake clock. The test delivers each `after` delay when
// it is due, as the host's clock would; nothing waits on real time.
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AnyEventObject, type AnyMachineSnapshot, createActor } from "xstate";
import { type A2AEvent, type A2AFlowInput, type A2AFlowOutput, a2aFlowMachine } from "../../src/index.js";
import { ANNOUNCE_SKIP_TOKEN, REPLY_SKIP_TOKEN } from "../../src/policies/entryPoint.js";
import {
  driveFlow,
  eventCollector,
  flush,
  forEachReachableState,
  type GatewayScript,
  pendingChildrenFlow,
  replyWaitDue,
  BACKOFF_OVER,
  scriptedGateway,
  valueAndContext,
} from "../support/flowFakes.js";

const REQUESTER = "agent:ruda:a2a:conv-1";
const TARGET = "agent:eden:a2a:conv-1";
const T0 = 1_700_000_000_000;
const PRIMARY = "설계 문서를 읽었습니다. 이벤트 버스와 저장소 계층을 분리하는 방향이 좋아 보입니다.";
const R = [
  "저장소 계층은 lowdb 대신 append-only 로그로 두고 스냅샷은 주기적으로 압축하면 어떨까요",
  "좋은 제안입니다만 재시작 시 로그 재생 비용이 커지니 체크포인트 주기를 설정으로 빼 두겠습니다",
  "동의합니다 그러면 체크포인트 간격은 기본 천 건으로 하고 부하 테스트 뒤에 다시 조정하죠",
] as const;
const CHANNEL = "1400000000000000500";
const ANNOUNCEMENT = "eden과 ruda가 저장소 계층을 append-only 로그로 분리하기로 합의했습니다.";

function inputOf(overrides: Partial<A2AFlowInput> = {}): A2AFlowInput {
  return {
    conversationId: "conv-1",
    routeKey: "ruda:eden",
    requesterSessionKey: REQUESTER,
    targetSessionKey: TARGET,
    message: "이 아키텍처 설계 같이 검토하자",
    configuredMaxTurns: 5,
    autoTerminate: true,
    retry: { enabled: true, baseBackoffMs: 2_000, maxBackoffMs: 60_000 },
    maxWaitMs: 60_000,
    chunkMs: 30_000,
    idempotencyKey: "flow-1",
    seed: 11,
    mode: "async",
    fromAgent: "ruda",
    toAgent: "eden",
    startedAt: T0,
    allowedChannels: [CHANNEL],
    ...overrides,
  };
}

/** Starts a flow on a scripted gateway; the caller drives it. */
function startFlow(overrides: Partial<A2AFlowInput>, script: GatewayScript) {
  const gateway = scriptedGateway({ startAt: T0, ...script });
  const collector = eventCollector();
  const actor = createActor(gateway.flow, {
    input: inputOf(overrides),
    inspect: collector.inspect,
    clock: gateway.clock,
  });
  actor.start();
  return { actor, gateway, collector };
}

/** Runs a flow to its end, its delays firing when due; returns the output, the calls and the events. */
async function runFlow(overrides: Partial<A2AFlowInput>, script: GatewayScript) {
  const { actor, gateway, collector } = startFlow(overrides, script);
  const timers = await driveFlow(actor, gateway);
  const snapshot = actor.getSnapshot();
  expect(snapshot.status, `the flow ended (value ${JSON.stringify(snapshot.value)})`).toBe("done");
  const events = collector.parsed();
  const complete = events.filter((e) => e.type === "a2a.complete");
  expect(complete, "exactly one a2a.complete").toHaveLength(1);
  return {
    output: snapshot.output as A2AFlowOutput,
    calls: gateway.calls,
    events,
    types: events.map((e) => e.type),
    complete: dataOf(events, "a2a.complete")[0],
    responses: dataOf(events, "a2a.response"),
    retries: dataOf(events, "a2a.retry"),
    timers,
    /** The fake clock at the end: when the last side effect completed. */
    endedAt: gateway.now(),
  };
}

function dataOf<T extends A2AEvent["type"]>(events: A2AEvent[], type: T) {
  return events.filter((e) => e.type === type).map((e) => e.data as Extract<A2AEvent, { type: T }>["data"]);
}

const replied = (reply = PRIMARY): GatewayScript => ({ waits: [{ status: "ok" }], reply });

describe("a2aFlowMachine: the retry timeline of a rate-limited send", () => {
  it("send → rate limit → a2a.retry (attempt 1, 2 s) → backoff → reply → a2a.response → a2a.complete", async () => {
    const { actor, gateway, collector } = startFlow(
      { message: "인증 모듈 코드 어디에 있어?", skipPingPong: true },
      {
        waits: [{ status: "error", error: "rate limit exceeded (429): retry after 2s" }, { status: "ok" }],
        reply: "src/auth/module.ts 에 있습니다. 토큰 검증은 verify.ts 가 맡습니다.",
      },
    );
    await flush();

    // Failed, classified, retry announced, and now backing off: nothing more happens until the timer.
    expect(actor.getSnapshot().value).toBe("awaitingReply");
    expect(collector.types()).toEqual(["a2a.send", "a2a.retry"]);
    const failedAt = gateway.now();
    const due = replyWaitDue(actor);
    expect(due).toMatchObject({ event: BACKOFF_OVER, at: failedAt + 2_000 });
    await flush();
    expect(gateway.calls.agentWait).toHaveLength(1);

    const [retry] = collector.parsed().filter((e) => e.type === "a2a.retry");
    expect(retry).toMatchObject({
      type: "a2a.retry",
      conversationId: "conv-1",
      fromAgent: "ruda",
      toAgent: "eden",
      data: {
        errorCode: "rate_limit",
        errorCategory: "transient",
        attempt: 1,
        maxAttempts: 3,
        backoffMs: 2_000,
        conversationId: "conv-1",
        fromAgent: "ruda",
        toAgent: "eden",
      },
    });

    gateway.setNow(failedAt + 2_000);
    due?.to?.send({ type: BACKOFF_OVER });
    await flush();

    expect(actor.getSnapshot().status).toBe("done");
    // A rate limit waits again on the same run: one send, two waits on run-1.
    expect(gateway.calls.sendMessage).toHaveLength(1);
    expect(gateway.calls.agentWait.map((c) => c.runId)).toEqual(["run-1", "run-1"]);

    const events = collector.parsed();
    expect(events.map((e) => e.type)).toEqual(["a2a.send", "a2a.retry", "a2a.response", "a2a.complete"]);
    const [send, , response, complete] = events;
    expect(send).toMatchObject({
      conversationId: "conv-1",
      data: { targetSessionKey: TARGET, message: "인증 모듈 코드 어디에 있어?" },
    });
    expect(response).toMatchObject({
      data: {
        turn: 0,
        outcome: "ok",
        reply: "src/auth/module.ts 에 있습니다. 토큰 검증은 verify.ts 가 맡습니다.",
      },
    });
    expect(complete).toMatchObject({ data: { retryAttempts: 1, actualTurns: 0, announced: false } });
    expect(complete?.type === "a2a.complete" && complete.data.errorCode).toBeUndefined();
    // Time comes from the side effects: the events are stamped in order, the response after the backoff.
    const ts = events.map((e) => e.ts);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    expect(response?.ts).toBeGreaterThanOrEqual(failedAt + 2_000);
    for (const e of events) expect(e.conversationId).toBe("conv-1");

    expect(actor.getSnapshot().output).toMatchObject({
      status: "ok",
      retryAttempts: 1,
      conversationId: "conv-1",
    });
  });

  it("backs off with jitter after a gateway hiccup and waits again on the same run", async () => {
    const { actor, gateway, collector } = startFlow(
      { skipPingPong: true },
      { waits: [new Error("socket hang up"), { status: "ok" }], reply: PRIMARY },
    );
    await flush();
    const failedAt = gateway.now();
    const [retry] = dataOf(collector.parsed(), "a2a.retry");
    expect(retry).toMatchObject({ errorCode: "gateway_connection", errorCategory: "transient", attempt: 1 });
    // calculateBackoffMs(0): 2000 ms ± 25%.
    const backoffMs = retry?.backoffMs ?? 0;
    expect(backoffMs).toBeGreaterThanOrEqual(1_500);
    expect(backoffMs).toBeLessThanOrEqual(2_500);
    expect(replyWaitDue(actor)).toMatchObject({ event: BACKOFF_OVER, at: failedAt + backoffMs });

    expect(await driveFlow(actor, gateway)).toBe(1);
    expect(actor.getSnapshot().output).toMatchObject({ status: "ok", retryAttempts: 1, reply: PRIMARY });
    expect(gateway.calls.sendMessage).toHaveLength(1);
    expect(gateway.calls.agentWait.map((c) => c.runId)).toEqual(["run-1", "run-1"]);
  });

  it("numbers successive retries from 1 and blocks when the error's attempts run out", async () => {
    const overloaded = { status: "error" as const, error: "529 overloaded_error" };
    const run = await runFlow({ skipPingPong: true }, { waits: [overloaded, overloaded, overloaded] });
    // server_overload: maxAttempts 3, so two retries (attempt 0 and 1 may retry), then blocked.
    expect(run.retries.map((r) => [r.errorCode, r.attempt, r.maxAttempts])).toEqual([
      ["server_overload", 1, 3],
      ["server_overload", 2, 3],
    ]);
    // Exponential backoff with ±25% jitter: 2 s, then 4 s.
    const [first, second] = run.retries.map((r) => r.backoffMs);
    expect(first).toBeGreaterThanOrEqual(1_500);
    expect(first).toBeLessThanOrEqual(2_500);
    expect(second).toBeGreaterThanOrEqual(3_000);
    expect(second).toBeLessThanOrEqual(5_000);
    expect(run.types).toEqual(["a2a.send", "a2a.retry", "a2a.retry", "a2a.response", "a2a.complete"]);
    expect(run.complete).toMatchObject({
      retryAttempts: 2,
      errorCode: "server_overload",
      errorCategory: "transient",
    });
    expect(run.timers).toBe(2);
  });
});

describe("a2aFlowMachine: a2a.complete in sync and async mode alike", () => {
  describe.each(["sync", "async"] as const)("%s mode", (mode) => {
    it("emits send, response and complete when the reply comes", async () => {
      const run = await runFlow({ mode, skipPingPong: true }, replied());
      expect(run.types).toEqual(["a2a.send", "a2a.response", "a2a.complete"]);
      expect(dataOf(run.events, "a2a.send")[0]?.mode).toBe(mode);
      expect(run.complete).toMatchObject({ retryAttempts: 0 });
      expect(run.complete?.errorCode).toBeUndefined();
      expect(run.output.status).toBe("ok");
    });

    it("emits complete with errorCode and errorCategory when every chunk times out and the retries run out", async () => {
      const timeout = { status: "timeout" as const };
      const run = await runFlow(
        { mode, skipPingPong: true },
        { waits: [timeout, timeout, timeout, timeout] },
      );
      // 60 s of 30 s chunks, wait_timeout (maxAttempts 2): one resend, then blocked.
      expect(run.types).toEqual(["a2a.send", "a2a.retry", "a2a.response", "a2a.complete"]);
      expect(run.retries).toEqual([
        expect.objectContaining({
          errorCode: "wait_timeout",
          errorCategory: "transient",
          attempt: 1,
          maxAttempts: 2,
        }),
      ]);
      expect(run.timers).toBe(1);
      expect(run.complete).toMatchObject({
        retryAttempts: 1,
        errorCode: "wait_timeout",
        errorCategory: "transient",
        actualTurns: 0,
        announced: false,
        announceSkipped: true,
      });
      expect(run.responses[0]).toMatchObject({ turn: 0, outcome: "blocked" });
      expect(run.responses[0]?.reply).toContain("[outcome] blocked: 응답을 받지 못했습니다");
      expect(run.responses[0]?.reply).toContain("60초 초과");
      // wait_timeout resends the message: a new run with the same idempotency key.
      expect(run.calls.sendMessage.map((c) => c.idempotencyKey)).toEqual(["flow-1", "flow-1"]);
      expect(run.calls.agentWait.map((c) => [c.runId, c.timeoutMs])).toEqual([
        ["run-1", 30_000],
        ["run-1", 30_000],
        ["run-2", 30_000],
        ["run-2", 30_000],
      ]);
      expect(run.calls.agentStep).toEqual([]);
      expect(run.output).toMatchObject({
        status: "blocked",
        retryAttempts: 1,
        error: { code: "wait_timeout" },
      });
    });
  });

  it("blocks on the first failure when retries are disabled (the behaviour before retries)", async () => {
    const run = await runFlow(
      { retry: { enabled: false, baseBackoffMs: 2_000, maxBackoffMs: 60_000 } },
      { waits: [{ status: "error", error: "HTTP 503 overloaded" }] },
    );
    expect(run.types).toEqual(["a2a.send", "a2a.response", "a2a.complete"]);
    expect(run.complete).toMatchObject({
      retryAttempts: 0,
      errorCode: "server_overload",
      errorCategory: "transient",
    });
    expect(run.timers).toBe(0);
  });

  it("blocks without a retry on a permanent error", async () => {
    const run = await runFlow(
      {},
      { waits: [{ status: "error", error: "context_length_exceeded: 210000 tokens" }] },
    );
    expect(run.retries).toEqual([]);
    expect(run.complete).toMatchObject({
      retryAttempts: 0,
      errorCode: "context_exceeded",
      errorCategory: "permanent",
    });
    expect(run.calls.agentStep).toEqual([]);
    expect(run.output.status).toBe("blocked");
  });
});

describe("a2aFlowMachine: ping-pong by intent, with early termination", () => {
  it("a collaboration with 5 configured turns stops early when a reply repeats the previous one", async () => {
    const run = await runFlow(
      { message: "이 아키텍처 설계 같이 검토하자", configuredMaxTurns: 5 },
      { ...replied(), steps: [R[0], R[1], `${R[1]} 네`] },
    );
    expect(run.calls.agentStep.map((c) => c.sessionKey)).toEqual([REQUESTER, TARGET, REQUESTER]);
    expect(run.complete).toMatchObject({
      messageIntent: "collaboration",
      configuredMaxTurns: 5,
      effectiveTurns: 5,
      actualTurns: 3,
      earlyTermination: true,
      terminationReason: "repetition_detected",
      announced: false,
      announceSkipped: true,
      announceSkipReason: "no_target",
    });
    expect(run.responses.map((r) => r.turn)).toEqual([0, 1, 2, 3]);
    expect(run.calls.agentStep.map((c) => c.extraSystemPrompt.match(/Turn \d+ of \d+/)?.[0])).toEqual([
      "Turn 1 of 5",
      "Turn 2 of 5",
      "Turn 3 of 5",
    ]);
    expect(run.calls.announceStep).toEqual([]);
    expect(run.output).toMatchObject({
      status: "ok",
      actualTurns: 3,
      terminationReason: "repetition_detected",
    });
  });

  it("a question gets one turn, then ends by max_turns", async () => {
    const run = await runFlow(
      { message: "인증 모듈 파일 어디에 있어?", configuredMaxTurns: 5 },
      { ...replied("src/auth/module.ts 에 있고, 토큰 검증은 verify.ts 에 있습니다."), steps: [R[0]] },
    );
    expect(run.calls.agentStep).toHaveLength(1);
    expect(run.calls.agentStep[0]?.sessionKey).toBe(REQUESTER);
    expect(run.calls.agentStep[0]?.extraSystemPrompt).toContain("Turn 1 of 1");
    expect(run.complete).toMatchObject({
      messageIntent: "question",
      configuredMaxTurns: 5,
      effectiveTurns: 1,
      actualTurns: 1,
      earlyTermination: false,
      terminationReason: "max_turns",
    });
  });

  it("a notification skips the ping-pong and, without an announce target, makes no LLM call after the reply", async () => {
    const run = await runFlow(
      { message: "[NOTIFICATION] 배포 파이프라인을 새 러너로 옮겼습니다", announceTarget: null },
      { ...replied("확인했습니다."), steps: [R[0]] },
    );
    expect(run.calls.agentStep).toEqual([]);
    expect(run.calls.announceStep).toEqual([]);
    expect(run.calls.postAnnouncement).toEqual([]);
    expect(run.complete).toMatchObject({
      messageIntent: "notification",
      effectiveTurns: 0,
      actualTurns: 0,
      earlyTermination: false,
      terminationReason: "skipped",
      announced: false,
      announceSkipped: true,
      announceSkipReason: "no_target",
    });
    expect(run.types).toEqual(["a2a.send", "a2a.response", "a2a.complete"]);
  });

  it.each([
    ["skipPingPong", { skipPingPong: true }],
    ["configuredMaxTurns 0", { configuredMaxTurns: 0 }],
    ["no requester session", { requesterSessionKey: undefined }],
  ] as const)("a collaboration with %s is skipped", async (_, overrides) => {
    const run = await runFlow(overrides, { ...replied(), steps: [R[0]] });
    expect(run.calls.agentStep).toEqual([]);
    expect(run.complete).toMatchObject({
      actualTurns: 0,
      terminationReason: "skipped",
      earlyTermination: false,
    });
  });

  it("with autoTerminate false only the explicit skip ends the conversation early", async () => {
    const run = await runFlow(
      { autoTerminate: false, configuredMaxTurns: 5 },
      {
        ...replied(),
        steps: ["좋아요", "알겠습니다, 말씀하신 방향으로 반영하겠습니다 감사합니다", REPLY_SKIP_TOKEN],
      },
    );
    expect(run.calls.agentStep).toHaveLength(3);
    expect(run.complete).toMatchObject({
      actualTurns: 3,
      earlyTermination: true,
      terminationReason: "explicit_skip",
    });
  });

  it("gives each ping-pong step its own idempotency key, and the announce another", async () => {
    const run = await runFlow(
      { configuredMaxTurns: 3, announceTarget: { channel: "discord", to: "channel:42" } },
      { ...replied(), steps: [R[0], R[1], R[2]], announce: ANNOUNCEMENT },
    );
    const keys = [...run.calls.agentStep, ...run.calls.announceStep].map((c) => c.idempotencyKey);
    expect(keys).toHaveLength(4);
    expect(new Set(keys).size).toBe(4);
    expect(keys).not.toContain("flow-1");
    const again = await runFlow(
      { configuredMaxTurns: 3, announceTarget: { channel: "discord", to: "channel:42" } },
      { ...replied(), steps: [R[0], R[1], R[2]], announce: ANNOUNCEMENT },
    );
    expect([...again.calls.agentStep, ...again.calls.announceStep].map((c) => c.idempotencyKey)).toEqual(
      keys,
    );
  });
});

describe("a2aFlowMachine: conditional announce", () => {
  const discord = { channel: "discord", to: `channel:${CHANNEL}` };

  it("runs the announce step and posts its text once when there is a target and a reply", async () => {
    const run = await runFlow(
      { announceTarget: discord, configuredMaxTurns: 3 },
      { ...replied(), steps: [R[0], REPLY_SKIP_TOKEN], announce: ANNOUNCEMENT },
    );
    expect(run.calls.announceStep).toHaveLength(1);
    const announce = run.calls.announceStep[0];
    expect(announce?.sessionKey).toBe(TARGET);
    expect(announce?.extraSystemPrompt).toContain("이 아키텍처 설계 같이 검토하자");
    expect(announce?.extraSystemPrompt).toContain(PRIMARY);
    expect(announce?.extraSystemPrompt).toContain(R[0]);
    expect(announce?.extraSystemPrompt).toContain(ANNOUNCE_SKIP_TOKEN);
    expect(run.calls.postAnnouncement).toEqual([
      expect.objectContaining({ text: ANNOUNCEMENT, announceTarget: discord, targetSessionKey: TARGET }),
    ]);
    expect(run.complete).toMatchObject({
      announced: true,
      announceSkipped: false,
      announceText: ANNOUNCEMENT,
    });
    expect(run.complete?.announceSkipReason).toBeUndefined();
    expect(run.output).toMatchObject({ announced: true, announceText: ANNOUNCEMENT });
    expect(run.types.at(-1)).toBe("a2a.complete");
  });

  it("stamps a2a.complete no earlier than the post of the announcement completed", async () => {
    const run = await runFlow(
      { announceTarget: discord, skipPingPong: true },
      { ...replied(), announce: ANNOUNCEMENT },
    );
    // Machines know the time only from their side effects' outputs (each carries `at`); the post
    // completes last, 100 ms after the announce step on the fake clock.
    expect(run.calls.postAnnouncement).toHaveLength(1);
    const complete = run.events.find((e) => e.type === "a2a.complete");
    expect(complete?.ts).toBeGreaterThanOrEqual(run.endedAt);
  });

  it("does not announce when the announce step answers ANNOUNCE_SKIP", async () => {
    const run = await runFlow(
      { announceTarget: discord },
      { ...replied(), steps: [R[0], REPLY_SKIP_TOKEN], announce: ANNOUNCE_SKIP_TOKEN },
    );
    expect(run.calls.announceStep).toHaveLength(1);
    expect(run.calls.postAnnouncement).toEqual([]);
    expect(run.complete).toMatchObject({
      announced: false,
      announceSkipped: true,
      announceSkipReason: "announce_skip",
    });
    expect(run.complete?.announceText).toBeUndefined();
  });

  it.each<[string, Partial<A2AFlowInput>, GatewayScript, string]>([
    ["an internal channel", { announceTarget: { channel: "internal" } }, replied(), "internal_channel"],
    ["no target", { announceTarget: null }, replied(), "no_target"],
    ["an empty reply", { announceTarget: discord }, { waits: [{ status: "ok" as const }] }, "empty_reply"],
    ["the requester as target", { announceTarget: discord, requesterSessionKey: TARGET }, replied(), "self"],
  ])("skips the announce without an LLM call for %s", async (_, overrides, script, reason) => {
    const run = await runFlow(overrides, { ...script, steps: [R[0], REPLY_SKIP_TOKEN] });
    expect(run.calls.announceStep).toEqual([]);
    expect(run.calls.postAnnouncement).toEqual([]);
    expect(run.complete).toMatchObject({
      announced: false,
      announceSkipped: true,
      announceSkipReason: reason,
    });
  });

  it("announces an escalation at once, without ping-pong", async () => {
    const run = await runFlow(
      { message: "[URGENT] 프로덕션 DB 연결이 끊겼습니다", announceTarget: discord },
      { ...replied("DB 페일오버를 시작했습니다. 5분 안에 복구 예정입니다."), announce: ANNOUNCEMENT },
    );
    expect(run.calls.agentStep).toEqual([]);
    expect(run.calls.announceStep).toHaveLength(1);
    expect(run.complete).toMatchObject({ messageIntent: "escalation", actualTurns: 0, announced: true });
  });

  it("still completes, reporting the text, when posting the announcement fails for good: not announced, and why", async () => {
    const run = await runFlow(
      { announceTarget: discord, skipPingPong: true },
      {
        ...replied(),
        announce: ANNOUNCEMENT,
        postFailures: [{ status: 403, message: "Missing Permissions" }],
      },
    );
    // A permission failure is not retried.
    expect(run.calls.postAnnouncement).toHaveLength(1);
    expect(run.complete).toMatchObject({
      announced: false,
      announceSkipped: true,
      announceSkipReason: "post_failed",
      announceError: "Missing Permissions",
      announceText: ANNOUNCEMENT,
    });
    expect(run.output).toMatchObject({ status: "ok", announced: false, announceText: ANNOUNCEMENT });
  });

  it("still completes when the announce step fails", async () => {
    const run = await runFlow(
      { announceTarget: discord, skipPingPong: true },
      { ...replied(), announce: new Error("announce step timed out") },
    );
    expect(run.calls.postAnnouncement).toEqual([]);
    expect(run.complete).toMatchObject({ announced: false, announceSkipped: true });
  });
});

describe("a2aFlowMachine: bad input", () => {
  const valid = inputOf();
  const without = (field: keyof A2AFlowInput): unknown =>
    Object.fromEntries(Object.entries(valid).filter(([key]) => key !== field));
  it.each([
    ["configuredMaxTurns", { ...valid, configuredMaxTurns: -1 }],
    ["configuredMaxTurns", { ...valid, configuredMaxTurns: 11 }],
    ["configuredMaxTurns", { ...valid, configuredMaxTurns: 2.5 }],
    ["configuredMaxTurns", without("configuredMaxTurns")],
    ["targetSessionKey", { ...valid, targetSessionKey: "" }],
    ["targetSessionKey", without("targetSessionKey")],
    ["conversationId", { ...valid, conversationId: " " }],
    ["message", { ...valid, message: "" }],
    ["message", without("message")],
    ["mode", { ...valid, mode: "later" }],
    ["mode", without("mode")],
    ["maxWaitMs", { ...valid, maxWaitMs: 0 }],
    ["chunkMs", { ...valid, chunkMs: -30_000 }],
    ["retry", without("retry")],
    ["retry.baseBackoffMs", { ...valid, retry: { ...valid.retry, baseBackoffMs: 0 } }],
    ["idempotencyKey", without("idempotencyKey")],
    ["fromAgent", { ...valid, fromAgent: "" }],
    ["toAgent", without("toAgent")],
    ["autoTerminate", without("autoTerminate")],
    ["startedAt", { ...valid, startedAt: -1 }],
    ["announceTarget.channel", { ...valid, announceTarget: { channel: "" } }],
  ])("fails at creation, naming %s", (field, input) => {
    const snapshot = createActor(a2aFlowMachine, { input: input as A2AFlowInput }).getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
    expect(snapshot.error instanceof Error ? snapshot.error.message : "").toContain(field);
  });
});

describe("a2aFlowMachine: junk events", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const ACTOR_IDS = [
    "replyWait",
    "pingPong",
    "announceStep",
    "postAnnouncement",
    "agentStep",
    "agentWait",
    "sendMessage",
  ];

  function junkFor(snapshot: AnyMachineSnapshot): AnyEventObject[] {
    const running = Object.keys(snapshot.children);
    return [
      { type: "NOPE" },
      { type: "NOPE", at: 9e12 },
      // Another state's delay: stale, never this state's.
      ...(snapshot.matches("announceRetrying")
        ? []
        : [{ type: "xstate.after.backoffDelay.a2aFlow.announceRetrying" }]),
      ...(snapshot.matches("postRetrying") ? [] : [{ type: "xstate.after.retryDelay.a2aFlow.postRetrying" }]),
      ...ACTOR_IDS.filter((id) => !running.includes(id)).map((id) => ({
        type: `xstate.done.actor.${id}`,
        output: {
          outcome: "replied",
          reply: R[0],
          actualTurns: 9,
          terminationReason: "max_turns",
          retryAttempts: 0,
          at: 9e12,
        },
      })),
    ];
  }

  function modelEvents(snapshot: AnyMachineSnapshot): AnyEventObject[] {
    const at = T0 + 1_000;
    if (snapshot.matches("awaitingReply")) {
      return [
        {
          type: "xstate.done.actor.replyWait",
          output: { outcome: "replied", reply: PRIMARY, retryAttempts: 0, at },
        },
        { type: "xstate.error.actor.replyWait", error: new Error("crash") },
      ];
    }
    if (snapshot.matches("pingPong")) {
      return [
        {
          type: "xstate.done.actor.pingPong",
          output: {
            actualTurns: 1,
            terminationReason: "max_turns",
            earlyTermination: false,
            latestReply: R[0],
            replies: [R[0]],
            at,
          },
        },
      ];
    }
    if (snapshot.matches("announcing")) {
      return [
        { type: "xstate.done.actor.announceStep", output: { reply: ANNOUNCEMENT, at } },
        { type: "xstate.done.actor.announceStep", output: { reply: ANNOUNCE_SKIP_TOKEN, at } },
        {
          type: "xstate.done.actor.announceStep",
          output: { error: { source: "wait", status: "timeout" }, at },
        },
      ];
    }
    if (snapshot.matches("posting")) {
      return [
        { type: "xstate.done.actor.postAnnouncement", output: { at } },
        { type: "xstate.error.actor.postAnnouncement", error: new Error("socket hang up") },
      ];
    }
    return [];
  }

  it("leaves value and context unchanged in every reachable state", () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const states = new Set<string>();
    const visited = forEachReachableState(
      a2aFlowMachine,
      pendingChildrenFlow(),
      { input: inputOf({ announceTarget: { channel: "discord", to: CHANNEL } }), events: modelEvents },
      (actor, before) => {
        states.add(JSON.stringify(before.value));
        for (const junk of junkFor(before)) {
          actor.send(junk);
          const after = actor.getSnapshot();
          expect(valueAndContext(after), `${junk.type} in ${JSON.stringify(before.value)}`).toEqual(
            valueAndContext(before),
          );
          expect(after.status).toBe(before.status);
          expect(Object.keys(after.children)).toEqual(Object.keys(before.children));
        }
      },
    );
    expect([...states].sort()).toEqual([
      '"announceRetrying"',
      '"announcing"',
      '"awaitingReply"',
      '"completed"',
      '"pingPong"',
      '"postRetrying"',
      '"posting"',
    ]);
    expect(visited).toBeGreaterThanOrEqual(7);
  });
});
