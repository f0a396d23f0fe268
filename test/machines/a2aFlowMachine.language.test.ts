// a2aFlowMachine with a `language` in its input: the ping-pong and announce prompts, the error
// messages and the no-reply outcome are written with that catalog; without one, in the default.
import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import { type A2AEvent, type A2AFlowInput, type A2AFlowOutput } from "../../src/index.js";
import { driveFlow, eventCollector, type GatewayScript, scriptedGateway } from "../support/flowFakes.js";

const T0 = 1_700_000_000_000;
const CHANNEL = "1400000000000000500";

function input(language?: A2AFlowInput["language"]): A2AFlowInput {
  return {
    conversationId: "conv-1",
    requesterSessionKey: "agent:ruda:a2a:conv-1",
    targetSessionKey: "agent:eden:a2a:conv-1",
    message: "이 아키텍처 설계 같이 검토하자",
    configuredMaxTurns: 2,
    autoTerminate: false,
    announceTarget: { channel: "discord", to: `channel:${CHANNEL}` },
    retry: { enabled: false, baseBackoffMs: 2_000, maxBackoffMs: 60_000 },
    maxWaitMs: 60_000,
    chunkMs: 30_000,
    idempotencyKey: "flow-1",
    mode: "async",
    fromAgent: "ruda",
    toAgent: "eden",
    startedAt: T0,
    allowedChannels: [CHANNEL],
    ...(language === undefined ? {} : { language }),
  };
}

async function run(language: A2AFlowInput["language"] | undefined, script: GatewayScript) {
  const gateway = scriptedGateway({ startAt: T0, ...script });
  const collector = eventCollector();
  const actor = createActor(gateway.flow, {
    input: input(language),
    inspect: collector.inspect,
    clock: gateway.clock,
  });
  actor.start();
  await driveFlow(actor, gateway);
  const events: A2AEvent[] = collector.parsed();
  return { output: actor.getSnapshot().output as A2AFlowOutput, calls: gateway.calls, events };
}

const talk: GatewayScript = {
  waits: [{ status: "ok" }],
  reply: "첫 번째 답변입니다, 설계를 읽어 보았고 의견을 정리하겠습니다",
  steps: [
    "두 번째 답변으로 저장소 계층을 분리하는 방안을 제안합니다",
    "세 번째 답변으로 체크포인트 간격을 설정으로 빼 두겠습니다",
  ],
  announce: "합의했습니다",
};

describe("a2aFlowMachine's language", () => {
  it("writes the ping-pong and announce prompts with the catalog's templates", async () => {
    const { calls } = await run(
      {
        locale: "en",
        messages: {
          replyContext: "Turn {turn} of {maxTurns} as {role}. Skip: {skipToken}",
          replyRoleRequester: "asker",
          replyRoleTarget: "answerer",
          announceContext: "Announce? {latestReply} / {skipToken}",
          announceStepMessage: "Your turn to announce.",
        },
      },
      talk,
    );
    expect(calls.agentStep.map((c) => c.extraSystemPrompt)).toEqual([
      "Turn 1 of 2 as asker. Skip: REPLY_SKIP",
      "Turn 2 of 2 as answerer. Skip: REPLY_SKIP",
    ]);
    expect(calls.announceStep.map((c) => c.message)).toEqual(["Your turn to announce."]);
    expect(calls.announceStep.map((c) => c.extraSystemPrompt)).toEqual([
      `Announce? ${talk.steps?.[1] as string} / ANNOUNCE_SKIP`,
    ]);
  });

  it.each([
    [
      undefined,
      "실행 상태를 찾을 수 없음",
      "[outcome] blocked: 응답을 받지 못했습니다 (실행 상태를 찾을 수 없음)",
    ],
    [{ locale: "en" as const }, "run not found", "[outcome] blocked: no reply received (run not found)"],
  ])("language %o: a blocked flow's error and outcome", async (language, message, outcome) => {
    const { output, events } = await run(language, { waits: [{ status: "not_found" }] });
    expect(output).toMatchObject({ status: "blocked", error: { code: "session_not_found", message } });
    expect(events.find((e) => e.type === "a2a.response")?.data).toMatchObject({ reply: outcome });
  });
});
