import { afterEach, describe, expect, it } from "vitest";
import { createTestRuntime, ScriptedGateway, type TestRuntime } from "../../src/testing/index.js";
import type { RecordingDiscord } from "../../src/testing/index.js";
import { BOTS, runtimeConfig } from "../support/runtimeFakes.js";

// The two retry switches of the config, through the runtime: session.agentToAgent.retry.maxAttempts
// caps each error class's attempts, discord.a2aRetry.enabled turns the mention's reminders and
// escalation off. On the testing kit: only logical time is involved.

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;
const EDEN = "agent:eden:main";

const started: Array<TestRuntime<RecordingDiscord, ScriptedGateway>> = [];
afterEach(async () => {
  for (const t of started.splice(0)) await t.stop();
});

async function kit(o: { config?: unknown; gateway?: ScriptedGateway } = {}) {
  const t = await createTestRuntime({ config: runtimeConfig, now: T0, ...o });
  started.push(t);
  return t;
}

function withRetry(retry: { maxAttempts?: number }) {
  return { ...runtimeConfig, session: { agentToAgent: { retry } } };
}

describe("session.agentToAgent.retry.maxAttempts", () => {
  it("1: a run not found (2 attempts by class) is not resent; the flow is blocked and says 1", async () => {
    const gateway = new ScriptedGateway({ [EDEN]: [{ waits: [{ status: "not_found" }] }] });
    const t = await kit({ gateway, config: withRetry({ maxAttempts: 1 }) });
    const result = await t.runtime.sessionsSend({
      targetSessionKey: EDEN,
      message: "이 파일 어디 있어?",
      timeoutSeconds: 30,
    });
    expect(result).toMatchObject({
      status: "blocked",
      retryAttempts: 0,
      error: { code: "session_not_found", retryable: true, maxAttempts: 1 },
    });
    expect(gateway.calls).toHaveLength(1);
    expect(t.events.map((e) => e.type)).not.toContain("a2a.retry");
  });

  it("the default (3) leaves the class's 2 attempts: the same run not found is resent once, about 2 s later", async () => {
    const gateway = new ScriptedGateway({
      [EDEN]: [{ reply: "src/auth/index.ts 에 있어요", waits: [{ status: "not_found" }] }],
    });
    const t = await kit({ gateway });
    const pending = t.runtime.sessionsSend({
      targetSessionKey: EDEN,
      message: "이 파일 어디 있어?",
      timeoutSeconds: 60,
    });
    await t.runtime.idle();
    const retry = t.events.find((e) => e.type === "a2a.retry");
    expect(retry?.type === "a2a.retry" && retry.data).toMatchObject({ attempt: 1, maxAttempts: 2 });
    await t.advance(5_000);
    expect(await pending).toMatchObject({ status: "ok", retryAttempts: 1 });
    // Resent with the same idempotency key after the 2 s backoff with its jitter (±25%), drawn from a
    // seed the kit's fixed `random` (0.5) decides: the same 2119 ms on every run.
    expect(gateway.calls.map((c) => [c.idempotencyKey, c.at - T0])).toEqual([
      [gateway.calls[0]?.idempotencyKey, 0],
      [gateway.calls[0]?.idempotencyKey, 2_119],
    ]);
  });

  it("2: a rate limit (3 attempts by class) is retried once; a2a.retry and the result both say 2", async () => {
    const limited = { status: "error" as const, error: "429 rate limit: retry after 1s" };
    const gateway = new ScriptedGateway({ [EDEN]: [{ waits: [limited, limited, limited] }] });
    const t = await kit({ gateway, config: withRetry({ maxAttempts: 2 }) });
    const pending = t.runtime.sessionsSend({
      targetSessionKey: EDEN,
      message: "리뷰 부탁",
      timeoutSeconds: 60,
    });
    await t.advance(1_000);
    expect(await pending).toMatchObject({
      status: "blocked",
      retryAttempts: 1,
      error: { code: "rate_limit", attempt: 1, maxAttempts: 2 },
    });
    const retries = t.events.filter((e) => e.type === "a2a.retry");
    expect(retries.map((e) => e.type === "a2a.retry" && [e.data.attempt, e.data.maxAttempts])).toEqual([
      [1, 2],
    ]);
    expect(gateway.waits.map((w) => [w.runId, w.at - T0])).toEqual([
      ["run-1", 0],
      ["run-1", 1_000],
    ]);
  });
});

describe("discord.a2aRetry.enabled false", () => {
  const config = {
    ...runtimeConfig,
    discord: { ...runtimeConfig.discord, a2aRetry: { ...runtimeConfig.discord.a2aRetry, enabled: false } },
  };

  it("posts the mention and tracks it, but no reminder or escalation in 20 minutes; the reply still ends it responded", async () => {
    const t = await kit({ config });
    const sent = await t.runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    expect(t.discord.in(sent.threadId).map((m) => m.content)).toEqual([`<@${BOTS.eden}> 코드 리뷰 해줘`]);

    await t.advance(20 * MINUTE);
    expect(t.discord.in(sent.threadId)).toHaveLength(1);
    expect(t.events.filter((e) => e.type.startsWith("a2a.mention."))).toEqual([]);
    expect(await t.runtime.mentions()).toEqual([
      { id: sent.mentionId, threadId: sent.threadId, targetAgentId: "eden", status: "pending", attempts: 1 },
    ]);

    await t.discord.answer(sent.mentionId, "eden", "확인했습니다");
    await t.runtime.idle();
    expect(await t.runtime.mentions()).toEqual([
      expect.objectContaining({ status: "responded", attempts: 1 }),
    ]);
    expect(t.discord.in(sent.threadId).filter((m) => m.asAgentId === "ruda")).toHaveLength(1);
  });
});
