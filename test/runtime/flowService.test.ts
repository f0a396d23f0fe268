// createFlowService (sessionsSend) on its own: over the runtime's actors on a real durable host and the
// memory store, a scripted gateway, in simulated time.
import { describe, expect, it, vi } from "vitest";
import { createMemoryStore } from "../../src/durable/index.js";
import { GLOBAL_TIMERS } from "../../src/durable/timers.js";
import { createFlowService } from "../../src/runtime/flowService.js";
import { MissingPortError } from "../../src/runtime/MissingPortError.js";
import type { SessionsSendParams } from "../../src/runtime/ports.js";
import { InvalidInputError, type A2AEvent } from "../../src/policies/index.js";
import { callLoosely } from "../support/badInput.js";
import { ScriptedGateway, type ScriptedTurn } from "../../src/testing/index.js";
import { drain, waitUntil } from "../support/runtimeFakes.js";
import {
  deferred,
  HoldingStore,
  type RuntimeParts,
  runtimeParts,
  settledState,
  usePartsHarness,
} from "../support/runtimeParts.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const EDEN = "agent:eden:main";
const keep = usePartsHarness(T0);

// These tests poll rather than await actors.idle(): each holds a gateway call open (a held `agent`, or
// a run that hangs), a side effect in flight that idle() would wait for until the test lets it go.

/** A gateway whose `agent` call (the message leaving) waits until the test lets it go. */
class HeldGateway extends ScriptedGateway {
  readonly sent = deferred();
  override async agent(p: Parameters<ScriptedGateway["agent"]>[0]) {
    const run = await super.agent(p);
    await this.sent.promise;
    return run;
  }
}

async function flowService(
  o: {
    gateway?: ScriptedGateway;
    store?: ReturnType<typeof createMemoryStore>;
    /** Whether the route's conversation is kept from the flows' events, as the runtime does. */
    conversations?: boolean;
    running?: boolean;
  } = {},
) {
  const parts = runtimeParts({
    store: o.store ?? createMemoryStore(),
    ...(o.gateway && { gateway: o.gateway }),
  });
  await parts.actors.start();
  keep(parts);
  if (o.conversations === true)
    parts.onEmit = (event) => {
      const { routeKey, conversationId, ts } = event as A2AEvent;
      if (routeKey && conversationId) parts.threads.noteConversation(routeKey, conversationId, ts);
    };
  const sessionsSend = createFlowService({
    config: parts.config,
    hasGateway: o.gateway !== undefined,
    actors: parts.actors,
    conversationOf: (routeKey) => parts.threads.conversationOf(routeKey),
    requireStarted: (method) => {
      if (o.running === false) throw new Error(`A2ARuntime.${method}: the runtime is not running`);
    },
    now: () => Date.now(),
    random: () => 0.5,
    scheduler: GLOBAL_TIMERS,
  });
  return { parts, sessionsSend };
}

const hosted = (parts: RuntimeParts) => parts.actors.list();
/** EDEN's first `runs` runs never end (a long LLM run). */
const hanging = (runs = 1): Record<string, ScriptedTurn[]> => ({
  [EDEN]: Array.from({ length: runs }, () => ({ hangs: true })),
});

describe("createFlowService: refusals before any actor", () => {
  it.each([
    ["input", null],
    ["targetSessionKey", { targetSessionKey: "", message: "안녕" }],
    ["message", { targetSessionKey: EDEN, message: "  " }],
    ["timeoutSeconds", { targetSessionKey: EDEN, message: "안녕", timeoutSeconds: -1 }],
    ["announceTarget.channel", { targetSessionKey: EDEN, message: "안녕", announceTarget: { channel: 5 } }],
  ])("a bad %s rejects with an InvalidInputError naming it, and starts no flow", async (field, params) => {
    const gateway = new ScriptedGateway();
    const { parts, sessionsSend } = await flowService({ gateway });
    const error: unknown = await callLoosely(sessionsSend, params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ param: field });
    expect((error as Error).message).toContain(`sessionsSend: ${field} must be`);
    expect(await hosted(parts)).toEqual([]);
    expect(gateway.calls).toEqual([]);
  });

  it("without a gateway throws MissingPortError naming the option, and starts no flow", async () => {
    const { parts, sessionsSend } = await flowService();
    const call = sessionsSend({ targetSessionKey: EDEN, message: "안녕" });
    await expect(call).rejects.toBeInstanceOf(MissingPortError);
    await expect(call).rejects.toMatchObject({ method: "sessionsSend", option: "gateway" });
    expect(await hosted(parts)).toEqual([]);
  });

  it("refuses while the runtime is not running, and starts no flow", async () => {
    const gateway = new ScriptedGateway();
    const { parts, sessionsSend } = await flowService({ gateway, running: false });
    await expect(sessionsSend({ targetSessionKey: EDEN, message: "안녕" })).rejects.toThrow(
      /sessionsSend: the runtime is not running/,
    );
    expect(await hosted(parts)).toEqual([]);
  });
});

describe("createFlowService: timeoutSeconds 0 answers accepted", () => {
  it("once the message has left, not before", async () => {
    const gateway = new HeldGateway(hanging());
    const { sessionsSend } = await flowService({ gateway });
    const answer = sessionsSend({ targetSessionKey: EDEN, message: "이 파일 어디 있어?" });
    const state = settledState(answer);
    await waitUntil(() => gateway.calls.length === 1, "the message sent");
    await drain();
    expect(state()).toBe("pending");
    gateway.sent.resolve();
    expect(await answer).toEqual({
      status: "accepted",
      conversationId: expect.any(String),
      retryAttempts: 0,
      actualTurns: 0,
      announced: false,
    });
  });

  it("only once the snapshot showing the message sent is durable: a held write holds the answer", async () => {
    const store = new HoldingStore(createMemoryStore());
    const gateway = new HeldGateway(hanging());
    const { parts, sessionsSend } = await flowService({ gateway, store });
    const answer = sessionsSend({ targetSessionKey: EDEN, message: "이 파일 어디 있어?" });
    const state = settledState(answer);
    await waitUntil(() => gateway.calls.length === 1, "the message sent");
    await drain();
    try {
      // From here the write of "sent" (the run id) is held back.
      store.hold();
      const puts = store.puts;
      gateway.sent.resolve();
      await waitUntil(() => store.puts > puts, "the held write");
      await drain();
      expect(state()).toBe("pending");
    } finally {
      // Also when an expectation failed: the host's stop waits for the held write.
      store.release();
    }
    expect(await answer).toMatchObject({ status: "accepted" });
    const [entry] = await hosted(parts);
    expect(await store.get(entry?.id ?? "")).toMatchObject({ status: "active" });
  });

  it("tells the host of its new actor, whose id is the gateway's idempotency key", async () => {
    const store = createMemoryStore();
    const gateway = new ScriptedGateway(hanging());
    const { parts, sessionsSend } = await flowService({ gateway, store });
    await sessionsSend({ targetSessionKey: EDEN, message: "안녕" });
    const entries = await hosted(parts);
    expect(entries.map((e) => e.kind)).toEqual(["a2aFlow"]);
    const id = entries[0]?.id ?? "";
    expect(id).toMatch(/^flow-/);
    // Stable across restarts: a send re-run after a crash is deduplicated by the gateway.
    expect(gateway.calls).toEqual([expect.objectContaining({ sessionKey: EDEN, idempotencyKey: id })]);
    expect(await store.get(id)).toMatchObject({ machineId: "a2aFlow", status: "active" });
  });
});

describe("createFlowService: the host stops while a caller waits", () => {
  it("the call rejects naming the actor, rather than hang", async () => {
    const gateway = new HeldGateway(hanging());
    const { parts, sessionsSend } = await flowService({ gateway });
    const answer = sessionsSend({ targetSessionKey: EDEN, message: "안녕" });
    await waitUntil(() => gateway.calls.length === 1, "the message sent");
    const id = (await hosted(parts))[0]?.id ?? "";
    await parts.stop();
    await expect(answer).rejects.toThrow(`stopped before actor ${id} reached what its caller waits for`);
  });
});

describe("createFlowService: timeoutSeconds > 0", () => {
  it("answers with the flow's result once it ended, and its record is archived", async () => {
    const store = createMemoryStore();
    const gateway = new ScriptedGateway({ [EDEN]: ["src/auth/index.ts 에 있어요"] });
    const { parts, sessionsSend } = await flowService({ gateway, store });
    const result = await sessionsSend({
      targetSessionKey: EDEN,
      message: "이 파일 어디 있어?",
      timeoutSeconds: 30,
    });
    expect(result).toEqual({
      status: "ok",
      conversationId: expect.any(String),
      reply: "src/auth/index.ts 에 있어요",
      retryAttempts: 0,
      actualTurns: 0,
      terminationReason: "skipped",
      announced: false,
    });
    expect(await hosted(parts)).toEqual([]);
    const archived = await store.list("archive");
    expect(archived.map((r) => [r.machineId, r.status])).toEqual([["a2aFlow", "done"]]);
  });

  it("answers timeout when timeoutSeconds pass first, not a moment sooner", async () => {
    const gateway = new ScriptedGateway(hanging());
    const { parts, sessionsSend } = await flowService({ gateway });
    const answer = sessionsSend({ targetSessionKey: EDEN, message: "뭐가 문제야?", timeoutSeconds: 5 });
    const state = settledState(answer);
    await waitUntil(() => gateway.waits.length === 1, "the wait for the run");
    await vi.advanceTimersByTimeAsync(4_999);
    expect(state()).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(await answer).toMatchObject({ status: "timeout", retryAttempts: 0, actualTurns: 0 });
    // The flow goes on as an actor.
    expect((await hosted(parts)).map((e) => e.kind)).toEqual(["a2aFlow"]);
  });
});

describe("createFlowService: conversations by route", () => {
  it("the same routeKey continues its conversation; another route starts its own", async () => {
    const gateway = new ScriptedGateway(hanging(3));
    const { parts, sessionsSend } = await flowService({ gateway, conversations: true });
    const send = (p: Partial<SessionsSendParams>) =>
      sessionsSend({ targetSessionKey: EDEN, message: "[NOTIFICATION] 배포 완료", ...p });

    const first = await send({ routeKey: "deploys" });
    // Accepted means sent, and the send is kept as it is reported.
    expect(parts.threads.conversationOf("deploys")).toBe(first.conversationId);
    const again = await send({ routeKey: "deploys" });
    const other = await send({ routeKey: "reviews" });
    expect(again.conversationId).toBe(first.conversationId);
    expect(other.conversationId).not.toBe(first.conversationId);
  });

  it("without a routeKey the route is requester:target (external when no requester)", async () => {
    const { parts, sessionsSend } = await flowService({
      gateway: new ScriptedGateway(hanging(2)),
      conversations: true,
    });
    const external = await sessionsSend({ targetSessionKey: EDEN, message: "[NOTIFICATION] 1" });
    const fromRuda = await sessionsSend({
      requesterSessionKey: "agent:ruda:main",
      targetSessionKey: EDEN,
      message: "[NOTIFICATION] 2",
    });
    expect(parts.threads.conversationOf(`external:${EDEN}`)).toBe(external.conversationId);
    expect(parts.threads.conversationOf(`agent:ruda:main:${EDEN}`)).toBe(fromRuda.conversationId);
    expect(fromRuda.conversationId).not.toBe(external.conversationId);
  });
});
