// a2aFlowMachine: failed ping-pong and announce steps, failed announcement posts and the announce
// channel allowlist. Every side effect is scripted on a fake clock; the test moves it to each delay as
// it falls due, as the host would.
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import type { A2AEvent, A2AFlowInput, A2AFlowOutput } from "../../src/index.js";
import {
  driveFlow,
  eventCollector,
  flowDue,
  type GatewayScript,
  scriptedGateway,
} from "../support/flowFakes.js";

const T0 = 1_700_000_000_000;
const CHANNEL = "1400000000000000500";
const PRIMARY = "설계 문서를 읽었습니다. 이벤트 버스와 저장소 계층을 분리하는 방향이 좋아 보입니다.";
const R1 = "저장소 계층은 lowdb 대신 append-only 로그로 두고 스냅샷은 주기적으로 압축하면 어떨까요";
const R2 = "좋은 제안입니다만 재시작 시 로그 재생 비용이 커지니 체크포인트 주기를 설정으로 빼 두겠습니다";
const ANNOUNCEMENT = "eden과 ruda가 저장소 계층을 append-only 로그로 분리하기로 합의했습니다.";
const discordTarget = { channel: "discord", to: `channel:${CHANNEL}` };

function inputOf(overrides: Partial<A2AFlowInput> = {}): A2AFlowInput {
  return {
    conversationId: "conv-1",
    requesterSessionKey: "agent:ruda:a2a:conv-1",
    targetSessionKey: "agent:eden:a2a:conv-1",
    message: "이 아키텍처 설계 같이 검토하자",
    configuredMaxTurns: 3,
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

async function runFlow(overrides: Partial<A2AFlowInput>, script: GatewayScript) {
  const gateway = scriptedGateway({ startAt: T0, waits: [{ status: "ok" }], reply: PRIMARY, ...script });
  const collector = eventCollector();
  const actor = createActor(gateway.flow, {
    input: inputOf(overrides),
    inspect: collector.inspect,
    clock: gateway.clock,
  });
  const dues: Array<{ at: number; after: number }> = [];
  actor.subscribe(() => {
    const due = flowDue(actor);
    if (due !== undefined && dues.at(-1)?.at !== due.at) dues.push({ at: due.at, after: gateway.now() });
  });
  actor.start();
  const timers = await driveFlow(actor, gateway);
  expect(actor.getSnapshot().status).toBe("done");
  const events = collector.parsed();
  const complete = events.filter((e) => e.type === "a2a.complete");
  expect(complete).toHaveLength(1);
  return {
    output: actor.getSnapshot().output as A2AFlowOutput,
    calls: gateway.calls,
    complete: complete[0]?.data as Extract<A2AEvent, { type: "a2a.complete" }>["data"],
    retries: events.filter((e) => e.type === "a2a.retry").map((e) => e.data),
    /** Each backoff the flow itself holds (announce and post retries): due time minus the failure's time. */
    waits: dues.map((d) => d.at - d.after),
    timers,
  };
}

describe("a2aFlowMachine: a failed ping-pong step", () => {
  it("is classified and retried after a backoff: a rate-limited step runs again and the conversation goes on", async () => {
    const run = await runFlow(
      {},
      {
        steps: [
          { error: { source: "wait", status: "error", message: "429 rate limit, retry after 3s" } },
          R1,
          R2,
          "알겠습니다, 그렇게 진행하겠습니다. 문서에 반영할게요 감사합니다",
        ],
      },
    );
    // The same turn is run again, with the same idempotency key.
    expect(run.calls.agentStep.map((c) => c.idempotencyKey)).toEqual([
      "flow-1:turn:1",
      "flow-1:turn:1",
      "flow-1:turn:2",
      "flow-1:turn:3",
    ]);
    expect(run.retries).toEqual([
      expect.objectContaining({ errorCode: "rate_limit", attempt: 1, maxAttempts: 3, backoffMs: 3_000 }),
    ]);
    expect(run.output).toMatchObject({ status: "ok", retryAttempts: 1, actualTurns: 3 });
    expect(run.output.error).toBeUndefined();
    expect(run.complete.errorCode).toBeUndefined();
  });

  it("ends the conversation no_reply once its retries run out, keeping the reply and reporting the error", async () => {
    const timedOut = { error: { source: "wait" as const, status: "timeout" } };
    const run = await runFlow({}, { steps: [R1, timedOut, timedOut] });
    // wait_timeout allows 2 attempts: turn 2 runs twice, then the conversation ends.
    expect(run.calls.agentStep.map((c) => c.idempotencyKey)).toEqual([
      "flow-1:turn:1",
      "flow-1:turn:2",
      "flow-1:turn:2",
    ]);
    expect(run.retries).toHaveLength(1);
    expect(run.output).toMatchObject({
      status: "ok",
      reply: R1,
      terminationReason: "no_reply",
      actualTurns: 2,
      retryAttempts: 1,
      error: { code: "wait_timeout", category: "transient", attempt: 1, maxAttempts: 2 },
    });
    expect(run.complete).toMatchObject({
      terminationReason: "no_reply",
      errorCode: "wait_timeout",
      errorCategory: "transient",
      retryAttempts: 1,
    });
    expect(run.complete.errorMessage).toEqual(expect.any(String));
  });

  it("reports a gateway that throws while starting the step as gateway_connection", async () => {
    const down = { error: { source: "gateway" as const, message: "ECONNREFUSED" } };
    const run = await runFlow(
      { retry: { enabled: true, maxAttempts: 2, baseBackoffMs: 2_000, maxBackoffMs: 60_000 } },
      { steps: [down, down] },
    );
    expect(run.calls.agentStep).toHaveLength(2);
    expect(run.output).toMatchObject({
      status: "ok",
      reply: PRIMARY,
      terminationReason: "no_reply",
      error: { code: "gateway_connection", maxAttempts: 2 },
    });
    expect(run.output.error?.message).toContain("ECONNREFUSED");
  });

  it("does not retry a permanent error, nor anything with retry.enabled false", async () => {
    const contextExceeded = {
      error: { source: "wait" as const, status: "error", message: "context_length_exceeded" },
    };
    const permanent = await runFlow({}, { steps: [contextExceeded] });
    expect(permanent.calls.agentStep).toHaveLength(1);
    expect(permanent.retries).toEqual([]);
    expect(permanent.output.error).toMatchObject({ code: "context_exceeded", category: "permanent" });

    const disabled = await runFlow(
      { retry: { enabled: false, baseBackoffMs: 2_000, maxBackoffMs: 60_000 } },
      { steps: [{ error: { source: "read", message: "history unavailable" } }] },
    );
    expect(disabled.calls.agentStep).toHaveLength(1);
    expect(disabled.output).toMatchObject({
      terminationReason: "no_reply",
      error: { code: "gateway_connection" },
    });
  });
});

describe("a2aFlowMachine: a failed announce step", () => {
  it("is retried, and once its retries run out the flow is not announced and says why", async () => {
    const timedOut = { error: { source: "wait" as const, status: "timeout" } };
    const run = await runFlow(
      { announceTarget: discordTarget, skipPingPong: true },
      { announce: [timedOut, timedOut] },
    );
    expect(run.calls.announceStep.map((c) => c.idempotencyKey)).toEqual([
      "flow-1:announce",
      "flow-1:announce",
    ]);
    expect(run.calls.postAnnouncement).toEqual([]);
    expect(run.retries).toEqual([expect.objectContaining({ errorCode: "wait_timeout", attempt: 1 })]);
    expect(run.complete).toMatchObject({
      announced: false,
      announceSkipped: true,
      announceSkipReason: "announce_failed",
      announceError: expect.any(String),
      errorCode: "wait_timeout",
    });
    expect(run.output).toMatchObject({ status: "ok", reply: PRIMARY, announced: false });
  });

  it("announces once a retried announce step answers", async () => {
    const run = await runFlow(
      { announceTarget: discordTarget, skipPingPong: true },
      { announce: [{ error: { source: "gateway", message: "socket hang up" } }, ANNOUNCEMENT] },
    );
    expect(run.calls.postAnnouncement).toHaveLength(1);
    expect(run.output).toMatchObject({
      status: "ok",
      announced: true,
      announceText: ANNOUNCEMENT,
      retryAttempts: 1,
    });
  });
});

describe("a2aFlowMachine: posting the announcement", () => {
  it("retries a transient failure after 1 s, 2 s and 4 s, then reports post_failed", async () => {
    const down = () => Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" });
    const run = await runFlow(
      { announceTarget: discordTarget, skipPingPong: true },
      { announce: ANNOUNCEMENT, postFailures: [down(), down(), down(), down()] },
    );
    expect(run.calls.postAnnouncement).toHaveLength(4);
    expect(run.waits).toEqual([1_000, 2_000, 4_000]);
    expect(run.calls.postAnnouncement.every((p) => p.nonce === "flow-1:announce")).toBe(true);
    expect(run.complete).toMatchObject({
      announced: false,
      announceSkipReason: "post_failed",
      announceError: "connect ETIMEDOUT",
      announceText: ANNOUNCEMENT,
    });
  });

  it("honours Retry-After on a 429 and announces once the post goes through", async () => {
    const run = await runFlow(
      { announceTarget: discordTarget, skipPingPong: true },
      {
        announce: ANNOUNCEMENT,
        postFailures: [{ status: 429, message: "You are being rate limited.", retry_after: 2.5 }],
      },
    );
    expect(run.calls.postAnnouncement).toHaveLength(2);
    expect(run.waits).toEqual([2_500]);
    expect(run.complete).toMatchObject({ announced: true, announceText: ANNOUNCEMENT });
    expect(run.complete.announceSkipReason).toBeUndefined();
  });
});

describe("a2aFlowMachine: the announce channel allowlist", () => {
  it.each([
    ["a channel that is not allowed", { channel: "discord", to: "channel:1400000000000000999" }],
    ["a channel id that is not a snowflake", { channel: "discord", to: "general" }],
  ])("does not post to %s, but keeps the text for the gateway", async (_, announceTarget) => {
    const run = await runFlow({ announceTarget, skipPingPong: true }, { announce: ANNOUNCEMENT });
    expect(run.calls.announceStep).toHaveLength(1);
    expect(run.calls.postAnnouncement).toEqual([]);
    expect(run.complete).toMatchObject({
      announced: false,
      announceSkipped: true,
      announceSkipReason: "channel_not_allowed",
      announceText: ANNOUNCEMENT,
    });
  });

  it("allows nothing when the flow was given no allowlist", async () => {
    const run = await runFlow(
      { announceTarget: { channel: "discord", to: CHANNEL }, skipPingPong: true, allowedChannels: undefined },
      { announce: ANNOUNCEMENT },
    );
    expect(run.calls.postAnnouncement).toEqual([]);
    expect(run.complete.announceSkipReason).toBe("channel_not_allowed");
  });

  it("posts to an allowed channel, with or without the channel: prefix", async () => {
    for (const to of [CHANNEL, `channel:${CHANNEL}`]) {
      const run = await runFlow(
        { announceTarget: { channel: "discord", to }, skipPingPong: true },
        { announce: ANNOUNCEMENT },
      );
      expect(run.calls.postAnnouncement).toHaveLength(1);
      expect(run.complete.announced).toBe(true);
    }
  });
});
