// runtime.idle() on the real lowdb store under vitest fake timers: advancing the fake clock and then
// awaiting idle() is all a test needs, though every side effect waits for a real disk write first.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { RecordingDiscord, ScriptedGateway } from "../../src/testing/index.js";
import { BOTS, HUMAN, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;

const runtime = useRuntimeHarness(T0);

describe("runtime.idle() with vitest fake timers on the lowdb store", () => {
  it("plays the mention timeline: reminder 1/3 at 5 minutes, 2/3 at 10, the escalation at 15", async () => {
    const discord = new RecordingDiscord();
    const r = runtime({ stateDir: tempStateDir(), discord });
    await r.start();
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error(`not sent: ${JSON.stringify(sent)}`);
    const timeline = () => discord.in(sent.threadId).map((p) => [p.at - T0, p.content.split("\n")[0]]);

    await vi.advanceTimersByTimeAsync(5 * MINUTE - 1);
    await r.idle();
    expect(timeline()).toEqual([[0, `<@${BOTS.eden}> 코드 리뷰 해줘`]]);

    await vi.advanceTimersByTimeAsync(1);
    await r.idle();
    expect(timeline()).toHaveLength(2);
    for (const step of [1, 2]) {
      await vi.advanceTimersByTimeAsync(5 * MINUTE);
      await r.idle();
      expect(timeline()).toHaveLength(2 + step);
    }

    expect(timeline()).toEqual([
      [0, `<@${BOTS.eden}> 코드 리뷰 해줘`],
      [5 * MINUTE, `[리마인더 1/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`],
      [10 * MINUTE, `[리마인더 2/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`],
      [15 * MINUTE, "⚠️ 응답 없음 (3회 시도, 15분 경과)"],
    ]);
    expect(discord.in(sent.threadId)[3]?.mentionUserIds).toEqual([HUMAN]);
    expect(await r.mentions()).toEqual([expect.objectContaining({ status: "escalated", attempts: 3 })]);
  });

  it("a sessionsSend hit by a 429 is retried after the server's Retry-After, at exactly that time, and ends ok", async () => {
    const gateway = new ScriptedGateway({
      "agent:eden:main": [
        { reply: "리뷰 완료", waits: [{ status: "error", error: "429 rate limit, retry after 30s" }] },
      ],
    });
    const stateDir = tempStateDir();
    const r = runtime({ stateDir, gateway, random: () => 0.5 });
    const logged = () =>
      readFileSync(join(stateDir, "coordination-events.ndjson"), "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { type: string }).type);
    await r.start();
    const events: string[] = [];
    r.onEvent((e) => events.push(e.type));
    const pending = r.sessionsSend({
      requesterSessionKey: "agent:ruda:main",
      targetSessionKey: "agent:eden:main",
      message: "[NO_REPLY_NEEDED] 리뷰 부탁",
      timeoutSeconds: 300,
    });
    // The send was written, the run started, its wait answered 429: all on disk, no timer moved.
    await r.idle();
    expect(events).toEqual(["a2a.send", "a2a.retry"]);
    expect(logged()).toEqual(events);
    expect(gateway.waits.map((w) => w.at - T0)).toEqual([0]);

    await vi.advanceTimersByTimeAsync(30_000 - 1);
    await r.idle();
    expect(gateway.waits).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await r.idle();
    expect(gateway.waits.map((w) => w.at - T0)).toEqual([0, 30_000]);
    expect(events).toEqual(["a2a.send", "a2a.retry", "a2a.response", "a2a.complete"]);
    // The event log's appends are in flight too: idle() waits for them.
    expect(logged()).toEqual(events);
    expect(await pending).toMatchObject({ status: "ok", reply: "리뷰 완료", retryAttempts: 1 });
  });

  it("delivers a timer already due when it is called: restarted past a reminder's time, idle() alone posts it", async () => {
    const stateDir = tempStateDir();
    const discord = new RecordingDiscord();
    const first = runtime({ stateDir, discord });
    await first.start();
    const sent = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    await vi.advanceTimersByTimeAsync(3 * MINUTE);
    await first.stop();
    vi.setSystemTime(T0 + 7 * MINUTE);
    const again = runtime({ stateDir, discord });
    await again.start();

    await again.idle();

    expect(discord.in(sent.threadId).map((p) => [p.at - T0, p.content.split("\n")[0]])).toEqual([
      [0, `<@${BOTS.eden}> 코드 리뷰 해줘`],
      [7 * MINUTE, `[리마인더 1/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`],
    ]);
  });

  it("waits for a gateway run's wait and reply read, which do not wait for the disk, when the gateway takes its time", async () => {
    /** Rounds of real I/O callbacks: a gateway over a socket answers after some. */
    const ioRounds = async (n: number) => {
      for (let i = 0; i < n; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
    };
    class SlowGateway extends ScriptedGateway {
      override async agentWait(p: { runId: string; timeoutMs: number }) {
        await ioRounds(1_000);
        return super.agentWait(p);
      }
      override async readLatestAssistantReply(p: { sessionKey: string }) {
        await ioRounds(1_000);
        return super.readLatestAssistantReply(p);
      }
    }
    const gateway = new SlowGateway({ "agent:eden:main": ["여기 있어요"] });
    const r = runtime({ stateDir: tempStateDir(), gateway });
    await r.start();
    const events: string[] = [];
    r.onEvent((e) => events.push(e.type));
    expect(
      await r.sessionsSend({ targetSessionKey: "agent:eden:main", message: "어디 있어?" }),
    ).toMatchObject({
      status: "accepted",
    });

    await r.idle();

    expect(events).toEqual(["a2a.send", "a2a.response", "a2a.complete"]);
  });

  it("resolves at once before start() and after stop()", async () => {
    const r = runtime({ stateDir: tempStateDir(), discord: new RecordingDiscord() });
    await r.idle();
    await r.start();
    await r.stop();
    await r.idle();
  });
});
