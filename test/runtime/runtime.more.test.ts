import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInspector } from "@statelyai/inspect";
import { describe, expect, it, vi } from "vitest";
import { type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import { FakeDiscord, runtimeConfig, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { savedThreadEntries } from "../support/threadStateFiles.js";
import { textLogger } from "../../src/runtime/logger.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

describe("createA2ARuntime: more", () => {
  it("a flow stopped in its backoff resumes after a restart: the overdue retry fires at once and completes", async () => {
    const dir = tempStateDir();
    const gateway = new ScriptedGateway({
      "agent:eden:main": [
        { reply: "여기 있어요", waits: [{ status: "error", error: "overloaded, retry after 30s" }] },
      ],
    });
    const first = createA2ARuntime({
      config: runtimeConfig,
      stateDir: dir,
      gateway,
      logger: textLogger(() => {}),
    });
    await first.start();
    const events: string[] = [];
    first.onEvent((e) => events.push(e.type));
    await first.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "[NO_REPLY_NEEDED] 어디 있어?",
    });
    await first.idle();
    expect(events).toEqual(["a2a.send", "a2a.retry"]);
    await first.stop();

    vi.setSystemTime(T0 + 60_000);
    const second = runtime({ stateDir: dir, gateway });
    const later: string[] = [];
    second.onEvent((e) => later.push(e.type));
    await second.start();
    await second.idle();
    expect(later).toEqual(["a2a.response", "a2a.complete"]);
    // The retry waited again on the same run; nothing was sent twice.
    expect(gateway.calls).toHaveLength(1);
  });

  it("after a restart, the target's answer in the thread still ends the resumed mention responded", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const first = createA2ARuntime({
      config: runtimeConfig,
      stateDir: dir,
      discord,
      logger: textLogger(() => {}),
    });
    await first.start();
    const sent = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "리뷰 부탁",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    await first.stop();
    const second = runtime({ stateDir: dir, discord });
    await second.start();
    const answer = {
      messageId: "1400000000000000777",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: runtimeConfig.agents.eden.discordBotId,
      authorIsBot: true,
      content: "봤어요, 고쳤습니다",
      mentionUserIds: [],
      ts: Date.now(),
    };
    await second.handleDiscordMessage(answer);
    expect(await second.mentions()).toEqual([
      expect.objectContaining({ id: sent.mentionId, status: "responded" }),
    ]);
  });

  it("sync: a permanent error resolves blocked, with the classified error", async () => {
    const gateway = new ScriptedGateway({
      "agent:eden:main": [{ waits: [{ status: "error", error: "context_length_exceeded" }] }],
    });
    const r = runtime({ stateDir: tempStateDir(), gateway });
    await r.start();
    const result = await r.sessionsSend({
      targetSessionKey: "agent:eden:main",
      message: "긴 문서 요약해줘",
      timeoutSeconds: 30,
    });
    expect(result).toMatchObject({
      status: "blocked",
      retryAttempts: 0,
      error: { code: "context_exceeded" },
    });
  });

  it("thread state survives a restart: a bot that joined by mention is still a participant, observer history is kept", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const first = createA2ARuntime({
      config: runtimeConfig,
      stateDir: dir,
      discord,
      logger: textLogger(() => {}),
    });
    await first.start();
    const sent = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "리뷰 부탁",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    const seum = runtimeConfig.agents.seum.discordBotId;
    const inThread = { channelId: sent.threadId, threadId: sent.threadId, authorIsBot: true, ts: Date.now() };
    // ruda mentions seum in the thread: seum handles it and joins the participants.
    expect(
      await first.handleDiscordMessage({
        ...inThread,
        messageId: "1400000000000000801",
        authorId: runtimeConfig.agents.ruda.discordBotId,
        content: `<@${seum}> 의견 있어요?`,
        mentionUserIds: [seum],
      }),
    ).toMatchObject({ action: "handle", agentId: "seum" });
    await first.stop();

    const second = runtime({ stateDir: dir, discord });
    await second.start();
    // seum, a participant since the restart too, answers ruda: ruda handles it; unmentioned, it is only observed.
    const ruda = runtimeConfig.agents.ruda.discordBotId;
    const fromSeum = { ...inThread, authorId: seum, content: `<@${ruda}> 저는 찬성입니다, 진행하시죠` };
    expect(
      await second.handleDiscordMessage({
        ...fromSeum,
        messageId: "1400000000000000802",
        mentionUserIds: [ruda],
      }),
    ).toMatchObject({ action: "handle", agentId: "ruda" });
    expect(
      await second.handleDiscordMessage({
        ...fromSeum,
        messageId: "1400000000000000803",
        mentionUserIds: [],
      }),
    ).toEqual({ action: "observe" });
    await second.stop();
    const saved = savedThreadEntries(dir).get(`participants ${sent.threadId}`) as { agentIds: string[] };
    expect(saved.agentIds.sort()).toEqual(["eden", "ruda", "seum"]);
  });

  it("attaches an @statelyai/inspect inspector to every actor, children included", async () => {
    const sent: Array<{ type: string; sessionId?: string }> = [];
    const inspector = createInspector({
      send: (event) => sent.push(event as { type: string; sessionId?: string }),
    });
    const r = runtime({ stateDir: tempStateDir(), discord: new FakeDiscord(), inspect: inspector });
    await r.start();
    await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    await vi.advanceTimersByTimeAsync(100); // the inspector hands events over on an idle callback
    const actors = new Set(sent.filter((e) => e.type === "@xstate.actor").map((e) => e.sessionId));
    expect(actors.size).toBeGreaterThanOrEqual(2); // the collaboration and its mention
    expect(sent.some((e) => e.type === "@xstate.snapshot")).toBe(true);
  });

  it("refuses an inspect option it cannot use, naming it", () => {
    // @ts-expect-error a number is no inspector; a JavaScript caller can still pass one
    expect(() => createA2ARuntime({ inspect: 42 })).toThrow(/^createA2ARuntime: inspect must be/);
    // @ts-expect-error the config is typed: a misspelt key is a compile error (and a runtime one)
    expect(() => createA2ARuntime({ config: { sesion: {} } })).toThrow(/sesion/);
  });

  it("a bad config fails at creation with the offending path", () => {
    expect(() =>
      createA2ARuntime({ config: { session: { agentToAgent: { maxPingPongTurns: 99 } } } }),
    ).toThrow(/session\.agentToAgent\.maxPingPongTurns/);
  });

  it("methods called before start() say so", async () => {
    const r = createA2ARuntime({ stateDir: tempStateDir() });
    await expect(r.sessionsSend({ targetSessionKey: "agent:eden:main", message: "x" })).rejects.toThrow(
      /call start\(\) first/,
    );
  });

  it("skips a malformed inbound message with a warning instead of throwing", async () => {
    const warnings: string[] = [];
    const r = runtime({ stateDir: tempStateDir(), logger: textLogger((m) => warnings.push(m)) });
    await r.start();
    const junk = { messageId: 1, content: null } as unknown as Parameters<
      A2ARuntime["handleDiscordMessage"]
    >[0];
    expect(await r.handleDiscordMessage(junk)).toEqual({ action: "drop", reason: "invalid_message" });
    expect(warnings.join("\n")).toMatch(/malformed message/);
  });

  it("unknown routeKeys have no conversation", async () => {
    const r = runtime({ stateDir: tempStateDir() });
    await r.start();
    expect(await r.getConversationId("nobody:nowhere")).toBeUndefined();
  });

  it("starts on a state dir whose files are corrupt: they are quarantined and reported", async () => {
    const dir = tempStateDir();
    mkdirSync(join(dir, "actors"), { recursive: true });
    writeFileSync(join(dir, "actors", "shard-00.ndjson"), '{"version":1,"records":{"a":');
    const warnings: string[] = [];
    const r = runtime({ stateDir: dir, logger: textLogger((m) => warnings.push(m)) });
    await r.start();
    expect(warnings.join("\n")).toMatch(/corrupt/);
    const { readdirSync } = await import("node:fs");
    expect(readdirSync(join(dir, "actors")).some((f) => f.includes(".corrupt-"))).toBe(true);
  });

  it.skipIf(process.getuid?.() === 0)(
    "a state dir that is not writable is a clear error naming it",
    async () => {
      const dir = tempStateDir();
      chmodSync(dir, 0o500);
      await expect(runtime({ stateDir: dir }).start()).rejects.toThrow(dir);
    },
  );
});
