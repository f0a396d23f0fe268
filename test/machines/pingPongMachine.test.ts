import { MachineInputError } from "../../src/machines/MachineInputError.js";
// pingPongMachine: the turn control of a ping-pong. Expectations come from the specification: speakers
// alternate starting with the requester, early termination rules in order, autoTerminate applied by the
// machine, one idempotency key per turn, "Turn N of M" in each prompt.
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AnyEventObject, createActor } from "xstate";
import { type PingPongInput, type PingPongOutput, pingPongMachine } from "../../src/index.js";
import { A2AMessageIntent, REPLY_SKIP_TOKEN } from "../../src/policies/entryPoint.js";
import { pending } from "../support/fakeActors.js";
import {
  eventCollector,
  flush,
  forEachReachableState,
  NEVER,
  scriptedGateway,
  type StepScript,
  valueAndContext,
} from "../support/flowFakes.js";

const REQUESTER = "agent:ruda:a2a:conv-1";
const TARGET = "agent:eden:a2a:conv-1";
const PRIMARY = "설계 문서를 읽었습니다. 이벤트 버스와 저장소 계층을 분리하는 방향이 좋아 보입니다.";

/** Substantive replies with few words in common (no repetition between any two). */
const R = [
  "저장소 계층은 lowdb 대신 append-only 로그로 두고 스냅샷은 주기적으로 압축하면 어떨까요",
  "좋은 제안입니다만 재시작 시 로그 재생 비용이 커지니 체크포인트 주기를 설정으로 빼 두겠습니다",
  "동의합니다 그러면 체크포인트 간격은 기본 천 건으로 하고 부하 테스트 뒤에 다시 조정하죠",
  "부하 테스트 시나리오는 제가 내일까지 작성해서 공유드리고 결과를 보고 함께 정하겠습니다",
] as const;
const ACKNOWLEDGEMENT = "알겠습니다, 말씀하신 방향으로 설계 문서에 반영하겠습니다 감사합니다";

function inputOf(overrides: Partial<PingPongInput> = {}): PingPongInput {
  return {
    requesterSessionKey: REQUESTER,
    targetSessionKey: TARGET,
    originalMessage: "이 아키텍처 설계 같이 검토하자",
    messageIntent: A2AMessageIntent.COLLABORATION,
    effectiveTurns: 4,
    autoTerminate: true,
    primaryReply: PRIMARY,
    idempotencyKey: "flow-1",
    startedAt: 1_000_000,
    trace: {
      conversationId: "conv-1",
      fromAgent: "ruda",
      toAgent: "eden",
      requesterSessionKey: REQUESTER,
      targetSessionKey: TARGET,
      messageIntent: A2AMessageIntent.COLLABORATION,
    },
    ...overrides,
  };
}

/** Runs a ping-pong on scripted steps until it ends; returns its output, the calls and the events. */
async function runPingPong(overrides: Partial<PingPongInput>, steps: StepScript[]) {
  const gateway = scriptedGateway({ steps, startAt: 1_000_000 });
  const collector = eventCollector();
  const actor = createActor(gateway.pingPong, { input: inputOf(overrides), inspect: collector.inspect });
  actor.start();
  await flush();
  const snapshot = actor.getSnapshot();
  expect(snapshot.status, "the ping-pong ended").toBe("done");
  return { output: snapshot.output as PingPongOutput, calls: gateway.calls.agentStep, events: collector };
}

describe("pingPongMachine: turns", () => {
  it("alternates speakers, the requester first, each answering the previous reply, up to the turn limit", async () => {
    const { output, calls, events } = await runPingPong({ effectiveTurns: 4 }, [...R]);
    expect(calls.map((c) => c.sessionKey)).toEqual([REQUESTER, TARGET, REQUESTER, TARGET]);
    expect(calls.map((c) => c.message)).toEqual([PRIMARY, R[0], R[1], R[2]]);
    expect(output).toMatchObject({
      actualTurns: 4,
      terminationReason: "max_turns",
      earlyTermination: false,
      latestReply: R[3],
    });
    const responses = events.parsed().filter((e) => e.type === "a2a.response");
    expect(responses.map((e) => [e.data.turn, e.data.speakerSessionKey, e.data.reply])).toEqual([
      [1, REQUESTER, R[0]],
      [2, TARGET, R[1]],
      [3, REQUESTER, R[2]],
      [4, TARGET, R[3]],
    ]);
    expect(responses.map((e) => e.data.terminationReason)).toEqual([
      undefined,
      undefined,
      undefined,
      "max_turns",
    ]);
    for (const e of responses)
      expect(e.data).toMatchObject({ messageIntent: "collaboration", effectiveTurns: 4 });
    expect(events.types()).toEqual(["a2a.response", "a2a.response", "a2a.response", "a2a.response"]);
  });

  it('tells each step "Turn N of M", the original request, the turns left and the skip token', async () => {
    const { calls } = await runPingPong({ effectiveTurns: 3 }, [R[0], R[1], R[2]]);
    expect(calls).toHaveLength(3);
    calls.forEach((call, i) => {
      const turn = i + 1;
      expect(call.extraSystemPrompt).toContain(`Turn ${turn} of 3`);
      expect(call.extraSystemPrompt).toContain("이 아키텍처 설계 같이 검토하자");
      expect(call.extraSystemPrompt).toContain(`at most ${3 - turn + 1} more turns`);
      expect(call.extraSystemPrompt).toContain(`"${REPLY_SKIP_TOKEN}"`);
    });
  });

  it("gives each step its own idempotency key, the same on every run of the same conversation", async () => {
    const first = await runPingPong({ effectiveTurns: 4 }, [...R]);
    const second = await runPingPong({ effectiveTurns: 4 }, [...R]);
    const keys = first.calls.map((c) => c.idempotencyKey);
    expect(new Set(keys).size).toBe(4);
    for (const key of keys) expect(key).toContain("flow-1");
    expect(second.calls.map((c) => c.idempotencyKey)).toEqual(keys);
    const other = await runPingPong({ effectiveTurns: 4, idempotencyKey: "flow-2" }, [...R]);
    expect(other.calls.map((c) => c.idempotencyKey).filter((k) => keys.includes(k))).toEqual([]);
  });

  it("re-runs an interrupted step after a restore with the same idempotency key and turn", async () => {
    const before = scriptedGateway({ steps: [R[0], NEVER] });
    const actor = createActor(before.pingPong, { input: inputOf({ effectiveTurns: 2 }) }).start();
    await flush();
    expect(before.calls.agentStep).toHaveLength(2);
    const persisted = actor.getPersistedSnapshot();
    actor.stop();

    const after = scriptedGateway({ steps: [R[1]] });
    const restored = createActor(after.pingPong, {
      snapshot: persisted,
      input: inputOf({ effectiveTurns: 2 }),
    }).start();
    await flush();
    expect(after.calls.agentStep.map((c) => [c.sessionKey, c.idempotencyKey, c.message])).toEqual([
      [TARGET, before.calls.agentStep[1]?.idempotencyKey, R[0]],
    ]);
    expect(restored.getSnapshot().status).toBe("done");
    expect(restored.getSnapshot().output).toMatchObject({ actualTurns: 2, terminationReason: "max_turns" });
  });

  it("stamps each a2a.response with the time its step completed and ends at the last one", async () => {
    const { output, events } = await runPingPong({ effectiveTurns: 2 }, [R[0], R[1]]);
    const ts = events.parsed().map((e) => e.ts);
    // The fake clock starts at 1_000_000 and each step takes 1 s.
    expect(ts).toEqual([1_001_000, 1_002_000]);
    expect(output.at).toBe(1_002_000);
  });
});

describe("pingPongMachine: early termination", () => {
  it.each([
    ["explicit_skip", [R[0], REPLY_SKIP_TOKEN], 2],
    ["explicit_skip", [`${REPLY_SKIP_TOKEN}.`], 1],
    ["repetition_detected", [R[0], `${R[0]}`], 2],
    ["minimal_content", ["좋아요"], 1],
    ["minimal_content", [R[0], "네 그렇게 하죠"], 2],
    ["conclusion_detected", [ACKNOWLEDGEMENT], 1],
    ["conclusion_detected", [R[0], R[1], "Sounds good, I will update the design document tonight."], 3],
  ] as const)("ends by %s after %j, counting the steps run", async (reason, steps, turns) => {
    const { output, calls, events } = await runPingPong({ effectiveTurns: 4 }, [...steps]);
    expect(output).toMatchObject({ terminationReason: reason, earlyTermination: true, actualTurns: turns });
    expect(calls).toHaveLength(turns);
    const last = events.parsed().at(-1);
    expect(last?.type).toBe("a2a.response");
    expect(last?.type === "a2a.response" && last.data).toMatchObject({
      turn: turns,
      terminationReason: reason,
    });
  });

  it("keeps the last accepted reply, not the skip token, as the latest reply", async () => {
    const { output } = await runPingPong({ effectiveTurns: 4 }, [R[0], R[1], REPLY_SKIP_TOKEN]);
    expect(output.latestReply).toBe(R[1]);
    expect(output.latestReply).not.toContain(REPLY_SKIP_TOKEN);
  });

  it("compares a reply with the last previous reply only", async () => {
    const { output, calls } = await runPingPong({ effectiveTurns: 3 }, [R[0], R[1], R[0]]);
    expect(calls).toHaveLength(3);
    expect(output).toMatchObject({ terminationReason: "max_turns", earlyTermination: false, actualTurns: 3 });
  });

  it("does not treat a first reply that repeats the primary reply as repetition (previousReplies starts empty)", async () => {
    const { output } = await runPingPong({ effectiveTurns: 2 }, [PRIMARY, R[1]]);
    expect(output).toMatchObject({ terminationReason: "max_turns", actualTurns: 2 });
  });

  it("keeps going after an acknowledgement that asks a question", async () => {
    const { output } = await runPingPong({ effectiveTurns: 2 }, [
      "알겠습니다. 그런데 캐시는 어디서 무효화하나요?",
      R[1],
    ]);
    expect(output).toMatchObject({ terminationReason: "max_turns", earlyTermination: false, actualTurns: 2 });
  });

  it("keeps going after a short question (minimal content needs no question mark)", async () => {
    const { output } = await runPingPong({ effectiveTurns: 2 }, ["캐시는요？", R[1]]);
    expect(output).toMatchObject({ terminationReason: "max_turns", actualTurns: 2 });
  });

  it.each([
    ["no reply", [undefined]],
    ["a blank reply", [" \n "]],
    ["a failed step", [new Error("agent step timed out")]],
  ] as const)("ends with no_reply, not early, on %s", async (_, steps) => {
    const { output, calls } = await runPingPong({ effectiveTurns: 3 }, [R[0], ...steps]);
    expect(calls).toHaveLength(2);
    expect(output).toMatchObject({
      terminationReason: "no_reply",
      earlyTermination: false,
      actualTurns: 2,
      latestReply: R[0],
    });
  });
});

describe("pingPongMachine: autoTerminate false", () => {
  it("ignores repetition, minimal content and acknowledgements, running every turn", async () => {
    const { output, calls } = await runPingPong({ effectiveTurns: 4, autoTerminate: false }, [
      "좋아요",
      ACKNOWLEDGEMENT,
      ACKNOWLEDGEMENT,
      R[3],
    ]);
    expect(calls).toHaveLength(4);
    expect(output).toMatchObject({ terminationReason: "max_turns", earlyTermination: false, actualTurns: 4 });
  });

  it("still stops early on the explicit skip", async () => {
    const { output, calls } = await runPingPong({ effectiveTurns: 4, autoTerminate: false }, [
      "좋아요",
      REPLY_SKIP_TOKEN,
    ]);
    expect(calls).toHaveLength(2);
    expect(output).toMatchObject({
      terminationReason: "explicit_skip",
      earlyTermination: true,
      actualTurns: 2,
    });
  });
});

describe("pingPongMachine: no ping-pong at all", () => {
  it.each([
    ["0 effective turns", { effectiveTurns: 0 }, "skipped"],
    ["no requester session", { requesterSessionKey: undefined }, "skipped"],
    ["the requester is the target", { requesterSessionKey: TARGET }, "skipped"],
    ["no primary reply", { primaryReply: undefined }, "no_reply"],
    ["a blank primary reply", { primaryReply: "   " }, "no_reply"],
  ] as const)("with %s: ends %s without a step", async (_, overrides, reason) => {
    const { output, calls, events } = await runPingPong(overrides, [R[0]]);
    expect(calls).toEqual([]);
    expect(events.events).toEqual([]);
    expect(output).toMatchObject({ terminationReason: reason, actualTurns: 0, earlyTermination: false });
  });
});

describe("pingPongMachine: bad input", () => {
  const valid = inputOf();
  const withoutField = (field: keyof PingPongInput): unknown =>
    Object.fromEntries(Object.entries(valid).filter(([key]) => key !== field));
  it.each([
    ["effectiveTurns", { ...valid, effectiveTurns: 11 }],
    ["effectiveTurns", { ...valid, effectiveTurns: -1 }],
    ["effectiveTurns", { ...valid, effectiveTurns: 1.5 }],
    ["effectiveTurns", withoutField("effectiveTurns")],
    ["targetSessionKey", { ...valid, targetSessionKey: "" }],
    ["targetSessionKey", { ...valid, targetSessionKey: "   " }],
    ["targetSessionKey", withoutField("targetSessionKey")],
    ["idempotencyKey", withoutField("idempotencyKey")],
    ["idempotencyKey", { ...valid, idempotencyKey: "" }],
    ["messageIntent", { ...valid, messageIntent: "chitchat" }],
    ["autoTerminate", withoutField("autoTerminate")],
    ["originalMessage", withoutField("originalMessage")],
    ["startedAt", { ...valid, startedAt: -5 }],
    ["startedAt", { ...valid, startedAt: Number.NaN }],
    ["trace", withoutField("trace")],
    ["trace.conversationId", { ...valid, trace: { ...valid.trace, conversationId: "" } }],
  ])("fails at creation, naming %s", (field, input) => {
    const actor = createActor(pingPongMachine, { input: input as PingPongInput });
    const snapshot = actor.getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
    expect(snapshot.error instanceof Error ? snapshot.error.message : "").toContain(field);
  });

  it("fails at creation without any input", () => {
    const snapshot = createActor(pingPongMachine, {
      input: undefined as unknown as PingPongInput,
    }).getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
  });
});

describe("pingPongMachine: junk events", () => {
  const OTHER_ACTORS = [
    "replyWait",
    "pingPong",
    "announceStep",
    "postAnnouncement",
    "sendMessage",
    "agentWait",
  ];

  function junkFor(running: string[]): AnyEventObject[] {
    return [
      { type: "NOPE" },
      // Another machine's delay: never this one's.
      { type: "xstate.after.backoffDelay.replyWait.retrying" },
      ...[...OTHER_ACTORS, "agentStep"]
        .filter((id) => !running.includes(id))
        .map((id) => ({ type: `xstate.done.actor.${id}`, output: { reply: R[0], at: 5_000_000 } })),
    ];
  }

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("leaves value and context unchanged in every reachable state", () => {
    // XState warns about events sent to an actor that has ended; that is expected here.
    vi.spyOn(console, "warn").mockImplementation(() => {});
    let checks = 0;
    const visited = forEachReachableState(
      pingPongMachine,
      pingPongMachine.provide({ actors: { agentStep: pending() } }),
      {
        input: inputOf({ effectiveTurns: 3 }),
        events: (snapshot) =>
          snapshot.matches("turn")
            ? [
                {
                  type: "xstate.done.actor.agentStep",
                  output: { reply: R[snapshot.context.turn - 1], at: 2e6 },
                },
                { type: "xstate.done.actor.agentStep", output: { reply: REPLY_SKIP_TOKEN, at: 2e6 } },
                { type: "xstate.error.actor.agentStep", error: new Error("down") },
              ]
            : [],
      },
      (actor, before) => {
        for (const junk of junkFor(Object.keys(before.children))) {
          actor.send(junk);
          const after = actor.getSnapshot();
          expect(valueAndContext(after), `${junk.type} in ${JSON.stringify(before.value)}`).toEqual(
            valueAndContext(before),
          );
          expect(after.status).toBe(before.status);
          expect(Object.keys(after.children)).toEqual(Object.keys(before.children));
          checks += 1;
        }
      },
    );
    expect(visited).toBeGreaterThanOrEqual(6);
    expect(checks).toBeGreaterThan(30);
  });
});
