import { describe, expect, it, vi } from "vitest";
import type { A2AEvent } from "../../src/index.js";
import {
  BOTS,
  drain,
  FakeDiscord,
  FakeGateway,
  runtimeConfig,
  tempStateDir,
  useRuntimeHarness,
  waitUntil,
} from "../support/runtimeFakes.js";

// The two retry switches of the config, through the runtime: session.agentToAgent.retry.maxAttempts
// (design 000 §8.1) caps each error class's attempts, discord.a2aRetry.enabled (design 004 §10) turns
// the mention's reminders and escalation off.

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;
const runtime = useRuntimeHarness(T0);

function withRetry(retry: { maxAttempts?: number }) {
  return { ...runtimeConfig, session: { agentToAgent: { retry } } };
}

describe("session.agentToAgent.retry.maxAttempts", () => {
  it("1: a run not found (2 attempts by class) is not resent; the flow is blocked and says 1", async () => {
    const gateway = new FakeGateway({ waits: [{ status: "not_found" }] });
    const r = runtime({ stateDir: tempStateDir(), gateway, config: withRetry({ maxAttempts: 1 }) });
    await r.start();
    const events: A2AEvent[] = [];
    r.onEvent((e) => events.push(e));
    const result = await r.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "이 파일 어디 있어?",
      timeoutSeconds: 30,
    });
    expect(result).toMatchObject({
      status: "blocked",
      retryAttempts: 0,
      error: { code: "session_not_found", retryable: true, maxAttempts: 1 },
    });
    expect(gateway.agentCalls).toHaveLength(1);
    expect(events.map((e) => e.type)).not.toContain("a2a.retry");
  });

  it("the default (3) leaves the class's 2 attempts: the same run not found is resent once", async () => {
    const gateway = new FakeGateway({
      waits: [{ status: "not_found" }],
      replies: { "agent:eden:main": ["src/auth/index.ts 에 있어요"] },
    });
    const r = runtime({ stateDir: tempStateDir(), gateway });
    await r.start();
    const events: A2AEvent[] = [];
    r.onEvent((e) => events.push(e));
    const pending = r.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "이 파일 어디 있어?",
      timeoutSeconds: 60,
    });
    await waitUntil(() => events.some((e) => e.type === "a2a.retry"), "a2a.retry");
    const retry = events.find((e) => e.type === "a2a.retry");
    expect(retry?.type === "a2a.retry" && retry.data).toMatchObject({ attempt: 1, maxAttempts: 2 });
    await drain();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await pending).toMatchObject({ status: "ok", retryAttempts: 1 });
    // Resent as a new run with the same idempotency key.
    const [first, second] = gateway.agentCalls.map((c) => c.idempotencyKey);
    expect(gateway.agentCalls).toHaveLength(2);
    expect(second).toBe(first);
  });

  it("2: a rate limit (3 attempts by class) is retried once; a2a.retry and the result both say 2", async () => {
    const limited = { status: "error" as const, error: "429 rate limit: retry after 1s" };
    const gateway = new FakeGateway({ waits: [limited, limited, limited] });
    const r = runtime({ stateDir: tempStateDir(), gateway, config: withRetry({ maxAttempts: 2 }) });
    await r.start();
    const events: A2AEvent[] = [];
    r.onEvent((e) => events.push(e));
    const pending = r.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "리뷰 부탁",
      timeoutSeconds: 60,
    });
    await waitUntil(() => events.some((e) => e.type === "a2a.retry"), "a2a.retry");
    await drain();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await pending).toMatchObject({
      status: "blocked",
      retryAttempts: 1,
      error: { code: "rate_limit", attempt: 1, maxAttempts: 2 },
    });
    const retries = events.filter((e) => e.type === "a2a.retry");
    expect(retries.map((e) => e.type === "a2a.retry" && [e.data.attempt, e.data.maxAttempts])).toEqual([
      [1, 2],
    ]);
    expect(gateway.waitCalls.map((c) => c.runId)).toEqual(["run-1", "run-1"]);
  });
});

describe("discord.a2aRetry.enabled false", () => {
  const config = {
    ...runtimeConfig,
    discord: { ...runtimeConfig.discord, a2aRetry: { ...runtimeConfig.discord.a2aRetry, enabled: false } },
  };

  it("posts the mention and tracks it, but no reminder or escalation in 20 minutes; the reply still ends it responded", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: tempStateDir(), discord, config });
    await r.start();
    const events: string[] = [];
    r.onEvent((e) => events.push(e.type));
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    expect(discord.in(sent.threadId).map((m) => m.content)).toEqual([`<@${BOTS.eden}> 코드 리뷰 해줘`]);

    for (let minute = 1; minute <= 20; minute += 1) {
      await drain(20);
      await vi.advanceTimersByTimeAsync(MINUTE);
    }
    await drain();
    expect(discord.in(sent.threadId)).toHaveLength(1);
    expect(events.filter((type) => type.startsWith("a2a.mention."))).toEqual([]);
    expect(await r.mentions()).toEqual([
      { id: sent.mentionId, threadId: sent.threadId, targetAgentId: "eden", status: "pending", attempts: 1 },
    ]);

    await r.handleDiscordMessage({
      messageId: "1400000000000000777",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: BOTS.eden,
      authorIsBot: true,
      content: "확인했습니다",
      mentionUserIds: [],
      ts: Date.now(),
    });
    await waitUntil(async () => (await r.mentions())[0]?.status === "responded", "responded");
    expect(await r.mentions()).toEqual([expect.objectContaining({ status: "responded", attempts: 1 })]);
    expect(discord.in(sent.threadId)).toHaveLength(1);
  });
});
