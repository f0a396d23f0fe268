import { MachineInputError } from "../../src/machines/MachineInputError.js";
import { describe, expect, it, vi } from "vitest";
import { type AnyEventObject, createActor, fromPromise, SimulatedClock } from "xstate";
import {
  A2AEventSchema,
  type ReplyWaitInput,
  type ReplyWaitOutput,
  replyWaitMachine,
} from "../../src/index.js";
import {
  type AgentWaitInput,
  type AgentWaitOutput,
  type ReadReplyInput,
  type ReadReplyOutput,
  type SendMessageInput,
  type SendMessageOutput,
} from "../../src/machines/index.js";
import { pending, sendRaw } from "../support/fakeActors.js";

const baseInput: ReplyWaitInput = {
  sessionKey: "agent:eden:a2a:c1",
  message: "이 파일 어디 있어?",
  idempotencyKey: "flow-1",
  maxWaitMs: 300_000,
  chunkMs: 30_000,
  retry: { enabled: true, baseBackoffMs: 2_000, maxBackoffMs: 60_000 },
  startedAt: 0,
  trace: {
    conversationId: "conv-1",
    fromAgent: "ruda",
    toAgent: "eden",
    targetSessionKey: "agent:eden:a2a:c1",
    messageIntent: "question",
  },
};

type WaitScript = Array<Omit<AgentWaitOutput, "at"> | Error>;

/**
 * Runs the machine against a scripted gateway on a simulated clock: each agentWait takes the
 * timeout it was given (or what the script says), and each backoff (an `after` delay) passes on
 * XState's simulated clock when the machine waits in `retrying`.
 */
function run(input: ReplyWaitInput, waits: WaitScript, reply = "src/auth/index.ts 에 있어요") {
  let clock = input.startedAt;
  const sends: Array<{ idempotencyKey: string; at: number }> = [];
  const waitCalls: AgentWaitInput[] = [];
  const emitted: AnyEventObject[] = [];
  const machine = replyWaitMachine.provide({
    actors: {
      sendMessage: fromPromise<SendMessageOutput, SendMessageInput>(async ({ input: p }) => {
        clock += 100;
        sends.push({ idempotencyKey: p.idempotencyKey, at: clock });
        return { runId: `run-${sends.length}`, at: clock };
      }),
      agentWait: fromPromise<AgentWaitOutput, AgentWaitInput>(async ({ input: p }) => {
        waitCalls.push(p);
        const next = waits.shift() ?? { status: "ok" as const };
        if (next instanceof Error) throw next;
        clock += next.waitedMs ?? (next.status === "timeout" ? p.timeoutMs : 1_000);
        return { ...next, at: clock };
      }),
      readReply: fromPromise<ReadReplyOutput, ReadReplyInput>(async () => ({ reply, at: (clock += 10) })),
    },
  });
  const timers = new SimulatedClock();
  const actor = createActor(machine, { input, clock: timers });
  actor.on("*", (event) => emitted.push(event));
  return {
    actor,
    sends,
    waitCalls,
    emitted,
    async finish(): Promise<ReplyWaitOutput> {
      actor.start();
      for (;;) {
        await vi.waitFor(() => {
          const s = actor.getSnapshot();
          if (s.status !== "done" && !s.matches("retrying")) throw new Error("still working");
        });
        const snapshot = actor.getSnapshot();
        if (snapshot.status === "done") return snapshot.output as ReplyWaitOutput;
        const { backoffMs, lastAt } = snapshot.context;
        if (backoffMs === undefined) throw new Error("retrying without a backoff");
        clock = Math.max(clock, lastAt + backoffMs);
        timers.increment(backoffMs);
      }
    },
  };
}

describe("replyWaitMachine", () => {
  it("a rate limit is retried on the same run after the server's wait, then replied", async () => {
    const r = run(baseInput, [
      { status: "error", error: "429 rate limit exceeded, retry after 2s" },
      { status: "ok" },
    ]);
    const output = await r.finish();
    expect(output).toMatchObject({
      outcome: "replied",
      reply: "src/auth/index.ts 에 있어요",
      retryAttempts: 1,
    });
    expect(r.sends).toHaveLength(1);
    expect(r.emitted.map((e) => e.type)).toEqual(["a2a.send", "a2a.retry"]);
    const retry = A2AEventSchema.parse(r.emitted[1]);
    expect(retry.type === "a2a.retry" && retry.data).toMatchObject({
      errorCode: "rate_limit",
      errorCategory: "transient",
      attempt: 1,
      maxAttempts: 3,
      backoffMs: 2_000,
      conversationId: "conv-1",
      fromAgent: "ruda",
      toAgent: "eden",
    });
    for (const event of r.emitted) expect(() => A2AEventSchema.parse(event)).not.toThrow();
  });

  it("waits in chunks up to maxWaitMs, then resends once as a new run with the same idempotency key", async () => {
    const input = { ...baseInput, maxWaitMs: 90_000 };
    const timeouts = Array.from({ length: 6 }, () => ({ status: "timeout" as const }));
    const r = run(input, timeouts);
    const output = await r.finish();
    // wait_timeout allows one retry (maxAttempts 2): 3 chunks, resend, 3 chunks, blocked.
    expect(r.waitCalls.map((c) => c.timeoutMs)).toEqual([30_000, 30_000, 30_000, 30_000, 30_000, 30_000]);
    expect(r.waitCalls.map((c) => c.runId)).toEqual(["run-1", "run-1", "run-1", "run-2", "run-2", "run-2"]);
    expect(r.sends.map((s) => s.idempotencyKey)).toEqual(["flow-1", "flow-1"]);
    expect(output).toMatchObject({
      outcome: "blocked",
      retryAttempts: 1,
      error: { code: "wait_timeout", attempt: 1, maxAttempts: 2 },
      outcomeMessage: "[outcome] blocked: 응답을 받지 못했습니다 (대기 시간 90초 초과)",
    });
    expect(r.emitted.filter((e) => e.type === "a2a.send")).toHaveLength(1);
  });

  it("cuts the last chunk to the wait time left and never counts a backoff as waiting", async () => {
    const input = { ...baseInput, maxWaitMs: 70_000 };
    const r = run(input, [
      { status: "timeout" },
      { status: "error", error: "server overloaded (529)" },
      { status: "timeout" },
      { status: "timeout" },
      { status: "timeout" },
    ]);
    await r.finish();
    // After the backoff the same run gets a fresh 70 s: 30 + 30 + 10.
    expect(r.waitCalls.map((c) => c.timeoutMs)).toEqual([30_000, 30_000, 30_000, 30_000, 10_000]);
  });

  it("applies the per-agent timeouts it is given (a slow agent with a 10-minute wait)", async () => {
    const input = { ...baseInput, maxWaitMs: 600_000, chunkMs: 60_000 };
    const r = run(input, [
      ...Array.from({ length: 9 }, () => ({ status: "timeout" as const })),
      { status: "ok" },
    ]);
    const output = await r.finish();
    expect(output.outcome).toBe("replied");
    expect(r.waitCalls).toHaveLength(10);
    expect(r.waitCalls.every((c) => c.timeoutMs === 60_000)).toBe(true);
  });

  it("with retry.enabled false, the first failure blocks (the behaviour before retries)", async () => {
    const input = { ...baseInput, retry: { ...baseInput.retry, enabled: false } };
    const r = run(input, [{ status: "error", error: "rate limit" }]);
    const output = await r.finish();
    expect(output).toMatchObject({ outcome: "blocked", retryAttempts: 0, error: { code: "rate_limit" } });
    expect(r.emitted.map((e) => e.type)).toEqual(["a2a.send"]);
  });

  it("a permanent error blocks at once, with its error in the outcome text", async () => {
    const r = run(baseInput, [{ status: "error", error: "context_length_exceeded" }]);
    expect(await r.finish()).toMatchObject({
      outcome: "blocked",
      error: { code: "context_exceeded", retryable: false },
      outcomeMessage: "[outcome] blocked: 응답을 받지 못했습니다 (context_length_exceeded)",
    });
  });

  it("not_found resends once (session_not_found), and a second not_found blocks: no retries are left", async () => {
    const r = run(baseInput, [{ status: "not_found" }, { status: "not_found" }]);
    const output = await r.finish();
    expect(r.sends).toHaveLength(2);
    expect(output).toMatchObject({
      outcome: "blocked",
      retryAttempts: 1,
      error: { code: "session_not_found" },
    });
  });

  it("a gateway that throws is a transient gateway_connection failure: backoff, then wait again", async () => {
    const r = run(baseInput, [new Error("socket hang up"), { status: "ok" }]);
    const output = await r.finish();
    expect(output).toMatchObject({ outcome: "replied", retryAttempts: 1 });
    expect(r.sends).toHaveLength(1);
    const retry = r.emitted.find((e) => e.type === "a2a.retry");
    expect(retry?.data).toMatchObject({
      errorCode: "gateway_connection",
      errorMessage: "Gateway 연결 실패: socket hang up",
    });
  });

  it("draws its jitter from the seed: the same seed gives the same backoff, another seed another", async () => {
    const backoffOf = async (seed: number) => {
      const r = run({ ...baseInput, seed }, [{ status: "error", error: "HTTP 502" }, { status: "ok" }]);
      await r.finish();
      return r.emitted.find((e) => e.type === "a2a.retry")?.data.backoffMs as number;
    };
    const first = await backoffOf(1);
    expect(await backoffOf(1)).toBe(first);
    expect(first).toBeGreaterThanOrEqual(1_500);
    expect(first).toBeLessThanOrEqual(2_500);
    const others = await Promise.all([2, 3, 4, 5].map(backoffOf));
    expect(new Set([first, ...others]).size).toBeGreaterThan(1);
  });
});

describe("replyWaitMachine: a bounded number of chunks per run", () => {
  // A gateway that answers "timeout" at once: a dead run, or a proxy that returns early.
  const instantTimeouts = (n: number) =>
    Array.from({ length: n }, () => ({ status: "timeout" as const, waitedMs: 0 }));

  it("counts an instant timeout as the chunk it asked for: ceil(maxWaitMs/chunkMs) chunks a run, then blocks", async () => {
    // More instant timeouts than the bound allows: the ones past it would be answered if asked.
    const r = run(baseInput, instantTimeouts(40));
    const output = await r.finish();
    // 10 chunks of 30 s on run-1, one resend (wait_timeout allows 2 attempts), 10 chunks on run-2.
    expect(r.waitCalls).toHaveLength(20);
    expect(r.waitCalls.map((c) => c.runId)).toEqual([
      ...Array.from({ length: 10 }, () => "run-1"),
      ...Array.from({ length: 10 }, () => "run-2"),
    ]);
    expect(output).toMatchObject({
      outcome: "blocked",
      retryAttempts: 1,
      error: { code: "wait_timeout", attempt: 1, maxAttempts: 2 },
      outcomeMessage: "[outcome] blocked: 응답을 받지 못했습니다 (대기 시간 300초 초과)",
    });
  });

  it("rounds a partial last chunk up: 70 s in 30 s chunks is 3 chunks (30, 30, 10) even when each returns early", async () => {
    const r = run(
      { ...baseInput, maxWaitMs: 70_000, retry: { ...baseInput.retry, maxAttempts: 1 } },
      Array.from({ length: 10 }, () => ({ status: "timeout" as const, waitedMs: 3 })),
    );
    expect(await r.finish()).toMatchObject({ outcome: "blocked", error: { code: "wait_timeout" } });
    expect(r.waitCalls.map((c) => c.timeoutMs)).toEqual([30_000, 30_000, 10_000]);
  });

  it("counts a chunk that took longer than asked as the time it took", async () => {
    const r = run(
      { ...baseInput, maxWaitMs: 90_000, retry: { ...baseInput.retry, maxAttempts: 1 } },
      Array.from({ length: 10 }, () => ({ status: "timeout" as const, waitedMs: 45_000 })),
    );
    await r.finish();
    expect(r.waitCalls).toHaveLength(2);
  });
});

describe("retry.maxAttempts caps each error class's limit", () => {
  const capped = (maxAttempts: number | undefined): ReplyWaitInput => ({
    ...baseInput,
    retry: { ...baseInput.retry, ...(maxAttempts === undefined ? {} : { maxAttempts }) },
  });
  const rateLimited = () =>
    Array.from({ length: 4 }, () => ({ status: "error" as const, error: "429 rate limit, retry after 1s" }));

  it("1 retries nothing: a rate limit (3 attempts by class) blocks at once, and reports 1", async () => {
    const r = run(capped(1), rateLimited());
    const output = await r.finish();
    expect(output).toMatchObject({
      outcome: "blocked",
      retryAttempts: 0,
      error: { code: "rate_limit", attempt: 0, maxAttempts: 1 },
    });
    expect(r.emitted.map((e) => e.type)).toEqual(["a2a.send"]);
    expect(r.waitCalls).toHaveLength(1);
  });

  it("1 retries nothing either where the class allows 2: a wait timeout is not resent", async () => {
    const r = run({ ...capped(1), maxWaitMs: 30_000 }, [{ status: "timeout" }, { status: "ok" }]);
    expect(await r.finish()).toMatchObject({
      outcome: "blocked",
      retryAttempts: 0,
      error: { code: "wait_timeout", maxAttempts: 1 },
    });
    expect(r.sends).toHaveLength(1);
  });

  it("2 allows one retry of a class that allows 3, and a2a.retry says 2", async () => {
    const r = run(capped(2), rateLimited());
    const output = await r.finish();
    expect(output).toMatchObject({
      outcome: "blocked",
      retryAttempts: 1,
      error: { code: "rate_limit", attempt: 1, maxAttempts: 2 },
    });
    const retries = r.emitted.filter((e) => e.type === "a2a.retry").map((e) => A2AEventSchema.parse(e));
    expect(retries.map((e) => e.type === "a2a.retry" && [e.data.attempt, e.data.maxAttempts])).toEqual([
      [1, 2],
    ]);
  });

  it.each([
    ["3 (the default) changes nothing", 3],
    ["10 never raises a class's limit", 10],
    ["absent (an input from before the setting) is no cap", undefined],
  ])("%s", async (_label, maxAttempts) => {
    const limited = run(capped(maxAttempts), rateLimited());
    expect(await limited.finish()).toMatchObject({
      outcome: "blocked",
      retryAttempts: 2,
      error: { code: "rate_limit", maxAttempts: 3 },
    });
    const timeouts = run({ ...capped(maxAttempts), maxWaitMs: 30_000 }, [
      { status: "timeout" },
      { status: "timeout" },
      { status: "timeout" },
    ]);
    expect(await timeouts.finish()).toMatchObject({
      outcome: "blocked",
      retryAttempts: 1,
      error: { code: "wait_timeout", maxAttempts: 2 },
    });
  });

  it("a snapshot persisted before the setting existed resumes without a cap", async () => {
    const { maxAttempts: _none, ...olderRetry } = capped(1).retry;
    const older = { ...baseInput, retry: olderRetry };
    const first = createActor(
      replyWaitMachine.provide({
        actors: {
          sendMessage: fromPromise<SendMessageOutput, SendMessageInput>(async () => ({
            runId: "run-1",
            at: 100,
          })),
          agentWait: pending(),
          readReply: pending(),
        },
      }),
      { input: older },
    ).start();
    await vi.waitFor(() => expect(first.getSnapshot().value).toBe("waiting"));
    expect(first.getSnapshot().context.retry).not.toHaveProperty("maxAttempts");
    const persisted = first.getPersistedSnapshot();
    first.stop();

    let clock = 100;
    const waits = rateLimited();
    const timers = new SimulatedClock();
    const restored = createActor(
      replyWaitMachine.provide({
        actors: {
          sendMessage: pending(),
          agentWait: fromPromise<AgentWaitOutput, AgentWaitInput>(async () => ({
            ...(waits.shift() ?? { status: "ok" as const }),
            at: (clock += 1_000),
          })),
          readReply: pending(),
        },
      }),
      { input: older, snapshot: persisted, clock: timers },
    ).start();
    for (;;) {
      await vi.waitFor(() => {
        const s = restored.getSnapshot();
        if (s.status !== "done" && !s.matches("retrying")) throw new Error("still working");
      });
      const snapshot = restored.getSnapshot();
      if (snapshot.status === "done") break;
      clock += snapshot.context.backoffMs ?? 0;
      timers.increment(snapshot.context.backoffMs ?? 0);
    }
    expect(restored.getSnapshot().output).toMatchObject({
      outcome: "blocked",
      retryAttempts: 2,
      error: { code: "rate_limit", maxAttempts: 3 },
    });
  });
});

describe("replyWaitMachine, bad input and junk events", () => {
  it.each([
    ["maxWaitMs", { maxWaitMs: 0 }],
    ["chunkMs", { chunkMs: -5 }],
    ["sessionKey", { sessionKey: "" }],
    ["retry", { retry: undefined }],
    ["trace.conversationId", { trace: { ...baseInput.trace, conversationId: "" } }],
  ])("fails at creation naming %s", (field, patch) => {
    const actor = createActor(replyWaitMachine, { input: { ...baseInput, ...patch } as ReplyWaitInput });
    const snapshot = actor.getSnapshot();
    expect(snapshot.status).toBe("error");
    expect(snapshot.error).toBeInstanceOf(MachineInputError);
    expect((snapshot.error as Error).message).toContain(`replyWaitMachine: invalid input: ${field}`);
  });

  it("ignores events it does not expect, in every state", async () => {
    const junk: AnyEventObject[] = [
      { type: "NOPE" },
      { type: "xstate.done.actor.readReply", output: { reply: "x", at: 1 } },
    ];
    const timers = new SimulatedClock();
    const actor = createActor(
      replyWaitMachine.provide({
        actors: { sendMessage: pending(), agentWait: pending(), readReply: pending() },
      }),
      { input: baseInput, clock: timers },
    ).start();
    const states: string[] = [];
    const check = () => {
      const before = actor.getSnapshot();
      for (const event of junk) {
        if (before.matches("reading") && event.type === "xstate.done.actor.readReply") continue;
        sendRaw(actor, event);
        expect(actor.getSnapshot().value).toEqual(before.value);
        expect(actor.getSnapshot().context).toEqual(before.context);
      }
      states.push(String(before.value));
    };
    check();
    sendRaw(actor, { type: "xstate.done.actor.sendMessage", output: { runId: "run-1", at: 10 } });
    check();
    sendRaw(actor, {
      type: "xstate.done.actor.agentWait",
      output: { status: "error", error: "rate limit", at: 20 },
    });
    check();
    // The backoff is XState's own delay: only the delay ends it.
    timers.increment(actor.getSnapshot().context.backoffMs ?? 0);
    sendRaw(actor, { type: "xstate.done.actor.agentWait", output: { status: "ok", at: 30 } });
    check();
    expect(states).toEqual(["sending", "waiting", "retrying", "reading"]);
  });
});
