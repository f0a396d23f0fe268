import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { type A2AEvent, createA2ARuntime } from "../../src/index.js";
import {
  BOTS,
  CHANNEL,
  FakeDiscord,
  HUMAN,
  runtimeConfig,
  tempStateDir,
  waitUntil,
  useRuntimeHarness,
} from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";
import { ScriptedGateway } from "../../src/testing/index.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;

const runtime = useRuntimeHarness(T0);

describe("createA2ARuntime: sessionsSend", () => {
  it("async: accepted once sent, then the flow completes as an actor and every event reaches onEvent and the log", async () => {
    const dir = tempStateDir();
    const gateway = new ScriptedGateway({ "agent:eden:main": ["src/auth/index.ts 에 있어요"] });
    const r = runtime({ stateDir: dir, gateway });
    const events: A2AEvent[] = [];
    await r.start();
    r.onEvent((e) => events.push(e));
    const accepted = await r.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "이 파일 어디 있어?",
    });
    expect(accepted.status).toBe("accepted");
    await r.idle();
    expect(events.map((e) => e.type)).toEqual(["a2a.send", "a2a.response", "a2a.complete"]);
    const complete = events.at(-1);
    expect(complete?.type === "a2a.complete" && complete.data).toMatchObject({
      retryAttempts: 0,
      messageIntent: "question",
      actualTurns: 0,
      terminationReason: "skipped",
      announced: false,
    });
    expect(await r.getConversationId("external:agent:eden:main")).toBe(accepted.conversationId);
    await r.stop();
    const logged = readFileSync(join(dir, "coordination-events.ndjson"), "utf8").trim().split("\n");
    expect(logged.map((line) => (JSON.parse(line) as A2AEvent).type)).toEqual(events.map((e) => e.type));

    // The route's conversation is kept across a restart: the next send on it continues it.
    const again = runtime({ stateDir: dir, gateway });
    await again.start();
    expect(await again.getConversationId("external:agent:eden:main")).toBe(accepted.conversationId);
    const next = await again.sessionsSend({ targetSessionKey: "agent:eden:main", message: "또 있어?" });
    expect(next.conversationId).toBe(accepted.conversationId);
    await again.idle();
    await again.stop();
  });

  it("sync: answers timeout when the caller's wait runs out, and the flow still completes later", async () => {
    const gateway = new ScriptedGateway({ "agent:eden:main": [{ hangs: true }] });
    const r = runtime({ stateDir: tempStateDir(), gateway });
    await r.start();
    const events: string[] = [];
    r.onEvent((e) => events.push(e.type));
    const pending = r.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "뭐가 문제야?",
      timeoutSeconds: 5,
    });
    await waitUntil(() => events.includes("a2a.send"), "a2a.send");
    await vi.advanceTimersByTimeAsync(5_000);
    const result = await pending;
    expect(result.status).toBe("timeout");
    expect(events).toEqual(["a2a.send"]);
  });

  it("reuses the route's conversationId for the next message on the same route", async () => {
    const gateway = new ScriptedGateway({ "agent:eden:main": ["a", "b"] });
    const r = runtime({ stateDir: tempStateDir(), gateway });
    await r.start();
    const first = await r.sessionsSend({
      requesterSessionKey: "agent:ruda:main",
      targetSessionKey: "agent:eden:main",
      message: "[NOTIFICATION] 1",
    });
    const second = await r.sessionsSend({
      requesterSessionKey: "agent:ruda:main",
      targetSessionKey: "agent:eden:main",
      message: "[NOTIFICATION] 2",
    });
    expect(second.conversationId).toBe(first.conversationId);
  });

  it("rejects bad input with a clear error", async () => {
    const r = runtime({ stateDir: tempStateDir(), gateway: new ScriptedGateway() });
    await r.start();
    await expect(r.sessionsSend({ targetSessionKey: "", message: "x" })).rejects.toThrow(/targetSessionKey/);
    await expect(r.sessionsSend({ targetSessionKey: "agent:eden:main", message: " " })).rejects.toThrow(
      /message/,
    );
  });
});

describe("createA2ARuntime: discordSend and mention tracking", () => {
  it("sends into a new [협업] thread, and the target's reply in the thread ends the mention responded", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: tempStateDir(), discord });
    await r.start();
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    expect(sent.status).toBe("sent");
    if (sent.status !== "sent") return;
    // A starter pinging nobody goes to the channel, the thread is opened from it (thread id = starter id),
    // and the mention is posted inside the thread.
    const [starter, ...inChannel] = discord.in(CHANNEL);
    expect(inChannel).toEqual([]);
    expect(starter).toMatchObject({
      asAgentId: "ruda",
      content: "🧵 [협업] 루다 → 이든 · 코드 리뷰 해줘",
      mentionUserIds: [],
    });
    expect(sent.threadId).toBe(starter?.messageId);
    expect(discord.threads).toEqual([
      expect.objectContaining({
        threadId: sent.threadId,
        channelId: CHANNEL,
        name: "[협업] 루다 → 이든 · 코드 리뷰 해줘",
        asAgentId: "ruda",
      }),
    ]);
    expect(discord.in(sent.threadId)).toEqual([
      expect.objectContaining({
        messageId: sent.messageId,
        asAgentId: "ruda",
        content: `<@${BOTS.eden}> 코드 리뷰 해줘`,
        mentionUserIds: [BOTS.eden],
      }),
    ]);
    expect(sent.messageId).not.toBe(sent.threadId);
    expect(await r.mentions()).toEqual([
      { id: sent.mentionId, threadId: sent.threadId, targetAgentId: "eden", status: "pending", attempts: 1 },
    ]);

    // The mention, as Discord delivers it: a sibling bot mentioning eden in a thread, handled by eden.
    const mention = await r.handleDiscordMessage({
      messageId: sent.messageId,
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: BOTS.ruda,
      authorIsBot: true,
      content: `<@${BOTS.eden}> 코드 리뷰 해줘`,
      mentionUserIds: [BOTS.eden],
      ts: Date.now(),
    });
    expect(mention).toEqual({
      action: "handle",
      agentId: "eden",
      sessionKey: `agent:eden:discord:channel:${sent.threadId}`,
    });
    expect((await r.mentions())[0]?.status).toBe("pending");

    const human = await r.handleDiscordMessage({
      messageId: "1400000000000000901",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: HUMAN,
      authorIsBot: false,
      content: "진행 상황 어때요?",
      mentionUserIds: [],
      ts: Date.now(),
    });
    expect(human).toEqual({ action: "observe" });
    expect((await r.mentions())[0]?.status).toBe("pending");

    const reply = await r.handleDiscordMessage({
      messageId: "1400000000000000902",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: BOTS.eden,
      authorIsBot: true,
      content: "확인했습니다, 두 군데 고쳐 주세요",
      mentionUserIds: [BOTS.ruda],
      ts: Date.now(),
    });
    expect(reply).toMatchObject({
      action: "handle",
      agentId: "ruda",
      sessionKey: `agent:ruda:discord:channel:${sent.threadId}`,
    });
    await r.idle();
    expect((await r.mentions())[0]).toMatchObject({ status: "responded", attempts: 1 });
  });

  it("rejects clearly and sends nothing: unknown agent, empty message, channel outside the allowlist", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: tempStateDir(), discord });
    await r.start();
    expect(
      await r.discordSend({ fromAgentId: "ruda", targetAgentId: "nobody", message: "hi" }),
    ).toMatchObject({
      status: "rejected",
      error: { code: "unknown_agent" },
    });
    expect(await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "  " })).toMatchObject({
      status: "rejected",
      error: { code: "empty_message" },
    });
    expect(
      await r.discordSend({
        fromAgentId: "ruda",
        targetAgentId: "eden",
        message: "hi",
        channelId: "1400000000000000999",
      }),
    ).toMatchObject({
      status: "rejected",
      error: { code: "channel_not_allowed" },
    });
    expect(discord.messages).toEqual([]);
  });

  it("the same idempotency key within 5 minutes returns the first result and sends nothing new", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: tempStateDir(), discord });
    await r.start();
    const [a, b] = await Promise.all([
      r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰", idempotencyKey: "k-1" }),
      r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰", idempotencyKey: "k-1" }),
    ]);
    expect(b).toEqual(a);
    // One starter and one mention: the second call posted nothing.
    expect(discord.messages.map((m) => m.mentionUserIds)).toEqual([[], [BOTS.eden]]);
  });

  it("reuses the pair's thread within the TTL", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: tempStateDir(), discord });
    await r.start();
    const first = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "하나" });
    const second = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "둘" });
    if (first.status !== "sent" || second.status !== "sent") throw new Error("not sent");
    expect(second.threadId).toBe(first.threadId);
    expect(discord.threads).toHaveLength(1);
    // The second mention goes straight into the reused thread: no second starter.
    expect(discord.in(CHANNEL)).toHaveLength(1);
    expect(discord.in(first.threadId).map((m) => m.messageId)).toEqual([first.messageId, second.messageId]);
  });
});

describe("createA2ARuntime: restarts", () => {
  it("a second runtime on a held state dir fails naming the directory and the holder's pid", async () => {
    const dir = tempStateDir();
    await runtime({ stateDir: dir }).start();
    await expect(runtime({ stateDir: dir }).start()).rejects.toThrow(
      new RegExp(`${dir}.*${process.pid}|${process.pid}.*${dir}`),
    );
  });

  async function trackMention(dir: string, discord: FakeDiscord) {
    const r = createA2ARuntime({
      config: runtimeConfig,
      stateDir: dir,
      discord,
      logger: textLogger(() => {}),
    });
    await r.start();
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    return { r, sent };
  }

  it("stopped at T+3 and restarted at T+4: the reminder comes at T+5, not T+9", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const { r, sent } = await trackMention(dir, discord);
    await vi.advanceTimersByTimeAsync(3 * MINUTE);
    await r.stop();
    vi.setSystemTime(T0 + 4 * MINUTE);
    const again = runtime({ stateDir: dir, discord });
    await again.start();
    const reminders = () => discord.in(sent.threadId).filter((m) => m.content.startsWith("[리마인더"));
    await vi.advanceTimersByTimeAsync(MINUTE - 1);
    await again.idle();
    expect(reminders()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await again.idle();
    expect(reminders()).toHaveLength(1);
    expect(reminders().map((m) => m.content.split("\n")[0])).toEqual([
      `[리마인더 1/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`,
    ]);
  });

  it("stopped at T+3 and restarted at T+7: the overdue reminder fires at once, exactly one", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const { r, sent } = await trackMention(dir, discord);
    await vi.advanceTimersByTimeAsync(3 * MINUTE);
    await r.stop();
    vi.setSystemTime(T0 + 7 * MINUTE);
    const again = runtime({ stateDir: dir, discord });
    await again.start();
    const reminders = () => discord.in(sent.threadId).filter((m) => m.content.startsWith("[리마인더"));
    await again.idle();
    expect(reminders()).toHaveLength(1);
    // It counts to the time it was due (T+5): a re-run of the post after a crash has the same text.
    expect(reminders()[0]?.content).toContain("(5분 전)");
    // The next timeout counts from the reminder actually sent (T+7), not from the missed due time.
    await vi.advanceTimersByTimeAsync(5 * MINUTE - 1);
    await again.idle();
    expect(reminders()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await again.idle();
    expect(reminders()).toHaveLength(2);
  });
});
