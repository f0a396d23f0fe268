import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  createTestRuntime,
  discordRateLimit,
  RecordingDiscord,
  ScriptedGateway,
  type TestRuntime,
} from "../../src/testing/index.js";
import { BOTS, CHANNEL, HUMAN, runtimeConfig } from "../support/runtimeFakes.js";
import { tempDir } from "../support/tempDir.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;

const started: Array<TestRuntime<RecordingDiscord, ScriptedGateway>> = [];
afterEach(async () => {
  for (const t of started.splice(0)) await t.stop();
});

async function kit(o: { gateway?: ScriptedGateway } = {}) {
  const t = await createTestRuntime({ config: runtimeConfig, now: T0, ...o });
  started.push(t);
  return t;
}

describe("createTestRuntime: a runtime on a virtual clock", () => {
  it("plays the 5/10/15-minute mention timeline in one advance: reminders 1/3 and 2/3, then the escalation", async () => {
    const t = await kit();
    const sent = await t.runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error(`not sent: ${JSON.stringify(sent)}`);

    await t.advance(15 * MINUTE);

    const posts = t.discord.in(sent.threadId);
    expect(posts.map((p) => [p.at - T0, p.asAgentId, p.content.split("\n")[0]])).toEqual([
      [0, "ruda", `<@${BOTS.eden}> 코드 리뷰 해줘`],
      [5 * MINUTE, "ruda", `[리마인더 1/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`],
      [10 * MINUTE, "ruda", `[리마인더 2/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`],
      [15 * MINUTE, "ruda", "⚠️ 응답 없음 (3회 시도, 15분 경과)"],
    ]);
    expect(posts[3]?.mentionUserIds).toEqual([HUMAN]);
    expect(t.now()).toBe(T0 + 15 * MINUTE);
    expect(await t.runtime.mentions()).toEqual([
      expect.objectContaining({ status: "escalated", attempts: 3 }),
    ]);
  });

  it("stops short of a due time by one millisecond, and the reminder comes at exactly 5 minutes", async () => {
    const t = await kit();
    const sent = await t.runtime.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "봐줘" });
    if (sent.status !== "sent") throw new Error("not sent");
    await t.advance(5 * MINUTE - 1);
    expect(t.discord.in(sent.threadId)).toHaveLength(1);
    await t.advance(1);
    expect(t.discord.in(sent.threadId).map((p) => p.at - T0)).toEqual([0, 5 * MINUTE]);
  });

  it("an answer from the target's bot ends the mention: no reminder after it", async () => {
    const t = await kit();
    const sent = await t.runtime.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "봐줘" });
    if (sent.status !== "sent") throw new Error("not sent");
    await t.advance(2 * MINUTE);
    const decision = await t.discord.answer(sent.mentionId, "eden", "봤어요", ["ruda"]);
    expect(decision).toMatchObject({ action: "handle", agentId: "ruda" });
    await t.advance(20 * MINUTE);
    expect(t.discord.in(sent.threadId).map((p) => [p.at - T0, p.asAgentId])).toEqual([
      [0, "ruda"],
      [2 * MINUTE, "eden"],
    ]);
    expect(await t.runtime.mentions()).toEqual([
      expect.objectContaining({ status: "responded", attempts: 1 }),
    ]);
  });

  it("a sessionsSend hit by a 429 is retried after the server's Retry-After and ends ok", async () => {
    const gateway = new ScriptedGateway({
      "agent:eden:main": [
        { reply: "리뷰 완료", waits: [{ status: "error", error: "429 rate limit, retry after 30s" }] },
      ],
    });
    const t = await kit({ gateway });
    const pending = t.runtime.sessionsSend({
      requesterSessionKey: "agent:ruda:main",
      targetSessionKey: "agent:eden:main",
      message: "[NO_REPLY_NEEDED] 리뷰 부탁",
      timeoutSeconds: 300,
    });
    await t.advance(0);
    expect(gateway.waits.map((w) => [w.runId, w.at - T0])).toEqual([["run-1", 0]]);
    await t.advance(60_000);
    expect(await pending).toMatchObject({
      status: "ok",
      reply: "리뷰 완료",
      retryAttempts: 1,
      actualTurns: 0,
    });
    expect(gateway.waits.map((w) => [w.runId, w.at - T0])).toEqual([
      ["run-1", 0],
      ["run-1", 30_000],
    ]);
    expect(gateway.calls).toHaveLength(1);
    const retry = t.events.find((e) => e.type === "a2a.retry");
    expect(retry?.ts).toBe(T0);
    expect(t.events.map((e) => e.type)).toEqual(["a2a.send", "a2a.retry", "a2a.response", "a2a.complete"]);
  });

  it("fires two timers due in one span in due order, each seeing what the one before did", async () => {
    const t = await kit();
    const first = await t.runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "첫째",
    });
    await t.advance(MINUTE);
    const second = await t.runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "seum",
      message: "둘째",
    });
    if (first.status !== "sent" || second.status !== "sent") throw new Error("not sent");
    const order: string[] = [];
    t.runtime.onEvent((e) => {
      // What the Discord port holds when the event comes (two posts per mention to start: the starter
      // message and the mention): every earlier reminder has landed, and its own post too.
      if (e.type === "a2a.mention.reminded")
        order.push(`${e.data.threadId}@${e.ts - T0} after ${t.discord.posts.length} posts`);
    });

    await t.advance(10 * MINUTE);

    const reminders = t.discord.posts.filter((p) => p.content.startsWith("[리마인더"));
    // Each reminder after the first is due 5 minutes after the one before was posted: it exists only
    // once that post landed, so one span to 11 minutes shows both of the first mention's.
    expect(reminders.map((p) => [p.channelId, p.at - T0, p.content.slice(0, 10)])).toEqual([
      [first.threadId, 5 * MINUTE, "[리마인더 1/3]"],
      [second.threadId, 6 * MINUTE, "[리마인더 1/3]"],
      [first.threadId, 10 * MINUTE, "[리마인더 2/3]"],
      [second.threadId, 11 * MINUTE, "[리마인더 2/3]"],
    ]);
    expect(order).toEqual([
      `${first.threadId}@${5 * MINUTE} after 5 posts`,
      `${second.threadId}@${6 * MINUTE} after 6 posts`,
      `${first.threadId}@${10 * MINUTE} after 7 posts`,
      `${second.threadId}@${11 * MINUTE} after 8 posts`,
    ]);
  });

  it("stop() removes everything it kept on disk, and is safe to call twice", async () => {
    const previous = process.env.TMPDIR;
    const own = tempDir("a2a-kit-tmp-");
    process.env.TMPDIR = own;
    try {
      const t = await createTestRuntime({ config: runtimeConfig, now: T0 });
      await t.runtime.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "봐줘" });
      await t.advance(5 * MINUTE);
      expect(readdirSync(own)).toHaveLength(1);
      await t.stop();
      await t.stop();
      expect(readdirSync(own)).toEqual([]);
    } finally {
      process.env.TMPDIR = previous;
    }
  });

  it("refuses a bad advance clearly", async () => {
    const t = await kit();
    await expect(t.advance(-1)).rejects.toThrow(/ms must be a finite number of milliseconds ≥ 0, got -1/);
    await expect(t.advance(Number.NaN)).rejects.toThrow(/got NaN/);
  });

  it("uses its defaults: a recording Discord and a scripted gateway on the virtual clock", async () => {
    const t = await createTestRuntime({ config: runtimeConfig, now: T0 });
    started.push(t);
    expect(t.discord).toBeInstanceOf(RecordingDiscord);
    expect(t.gateway).toBeInstanceOf(ScriptedGateway);
    const sent = await t.runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "hi",
      channelId: CHANNEL,
    });
    expect(sent.status).toBe("sent");
    expect(t.discord.threads.map((th) => [th.channelId, th.at])).toEqual([[CHANNEL, T0]]);
  });

  it("a reminder whose post Discord answers 429 is posted once the server's Retry-After has passed", async () => {
    const t = await kit();
    const sent = await t.runtime.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "봐줘" });
    if (sent.status !== "sent") throw new Error("not sent");
    t.discord.failNext(discordRateLimit(30_000));
    await t.advance(6 * MINUTE);
    expect(t.discord.in(sent.threadId).map((p) => [p.at - T0, p.content.split("\n")[0]])).toEqual([
      [0, `<@${BOTS.eden}> 봐줘`],
      [5 * MINUTE + 30_000, `[리마인더 1/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`],
    ]);
  });

  // When the first agent() call fails (gateway_connection), there is no run to wait on again: the
  // retry resends the message (it once waited on an undefined run and ended blocked).
  it("a scripted turn may throw from agent(): the runtime's resend takes the next turn", async () => {
    const gateway = new ScriptedGateway({
      "agent:eden:main": [
        { throws: new Error("connect ECONNREFUSED 127.0.0.1:18789") },
        "두 번째에 받았어요",
      ],
    });
    const t = await kit({ gateway });
    const pending = t.runtime.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "받았어?",
      timeoutSeconds: 120,
    });
    await t.advance(60_000);
    expect(await pending).toMatchObject({ status: "ok", reply: "두 번째에 받았어요", retryAttempts: 1 });
    expect(t.events.find((e) => e.type === "a2a.retry")?.data).toMatchObject({
      errorCode: "gateway_connection",
    });
  });

  it("a burst past the thread-creation limit: the queued threads open when the limit allows, within advance", async () => {
    // Seven targets, one thread each; Discord allows 5 new threads a minute per guild.
    const agents: Record<string, { discordBotId: string }> = { ruda: { discordBotId: BOTS.ruda } };
    for (let i = 0; i < 7; i += 1)
      agents[`a${i}`] = { discordBotId: String(1400000000000000200n + BigInt(i)) };
    const t = createTestRuntime({ config: { ...runtimeConfig, agents }, now: T0 });
    started.push(t);
    const sends = Object.keys(agents)
      .filter((id) => id !== "ruda")
      .map((id) => t.runtime.discordSend({ fromAgentId: "ruda", targetAgentId: id, message: "봐줘" }));
    await t.advance(2 * MINUTE);
    expect((await Promise.all(sends)).map((s) => s.status)).toEqual(Array(7).fill("sent"));
    expect(t.discord.threads.map((th) => th.at - T0)).toEqual([0, 0, 0, 0, 0, MINUTE, MINUTE]);
    // idle() with the queue waiting: it does not wait for the limit's timer, which only advance moves.
    const more = [0, 1, 2, 3, 4, 5].map((i) =>
      t.runtime.discordSend({
        fromAgentId: "ruda",
        targetAgentId: `a${i}`,
        message: "또",
        topicId: "second",
      }),
    );
    await t.runtime.idle();
    expect(t.discord.threads).toHaveLength(7 + 5);
    await t.advance(MINUTE);
    expect((await Promise.all(more)).map((s) => s.status)).toEqual(Array(6).fill("sent"));
    expect(t.discord.threads.at(-1)?.at).toBe(T0 + 3 * MINUTE);
  });

  it("refuses a bad config at the call, naming the problem", () => {
    expect(() => createTestRuntime({ config: { agents: { ruda: { discordBotId: 7 } } } })).toThrow(
      /discordBotId/,
    );
  });

  it("returns at once, not a promise: the runtime's calls wait for its start", async () => {
    const t = createTestRuntime({ config: runtimeConfig, now: T0 });
    try {
      const sent = await t.runtime.discordSend({
        fromAgentId: "ruda",
        targetAgentId: "eden",
        message: "봐줘",
      });
      expect(sent.status).toBe("sent");
      await t.advance(5 * MINUTE);
      expect(t.events.filter((e) => e.type === "a2a.mention.reminded")).toHaveLength(1);
    } finally {
      await t.stop();
    }
  });
});
