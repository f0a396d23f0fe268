import { describe, expect, it, vi } from "vitest";
import type { A2AEvent, GatewayPort } from "../../src/index.js";
import {
  BOTS,
  FakeDiscord,
  runtimeConfig,
  tempStateDir,
  useRuntimeHarness,
} from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const REMINDER_MS = 1_000;
/** More agentWait calls than any bounded flow makes: past it the fake stops answering, so old code fails, not hangs. */
const RUNAWAY = 2_000;

const runtime = useRuntimeHarness(T0);

type WaitResult = Awaited<ReturnType<GatewayPort["agentWait"]>>;

/** A gateway whose runs never finish and whose agentWait answers "timeout" at once (a dead run, an early proxy). */
class InstantTimeoutGateway implements GatewayPort {
  waits = 0;
  private runs = 0;
  async agent() {
    return { runId: `run-${++this.runs}` };
  }
  async agentWait(): Promise<WaitResult> {
    this.waits += 1;
    if (this.waits > RUNAWAY) return new Promise<WaitResult>(() => {});
    return { status: "timeout" };
  }
  async readLatestAssistantReply() {
    return undefined;
  }
}

/** Records the fake clock's time of every post. */
class TimedDiscord extends FakeDiscord {
  readonly postedAt: Array<{ content: string; at: number }> = [];
  override async sendMessage(p: Parameters<FakeDiscord["sendMessage"]>[0]) {
    this.postedAt.push({ content: p.content, at: Date.now() });
    return super.sendMessage(p);
  }
}

const config = {
  ...runtimeConfig,
  discord: { ...runtimeConfig.discord, a2aRetry: { responseTimeoutMs: REMINDER_MS } },
};

describe("createA2ARuntime: a gateway that answers timeout at once", () => {
  for (const timeoutSeconds of [60, 0]) {
    it(`timeoutSeconds ${timeoutSeconds}: the flow blocks after a bounded number of waits, and a reminder fires on time`, async () => {
      const gateway = new InstantTimeoutGateway();
      const discord = new TimedDiscord();
      const r = runtime({ stateDir: tempStateDir(), config, gateway, discord, random: () => 0.5 });
      await r.start();
      const events: A2AEvent[] = [];
      r.onEvent((e) => events.push(e));
      const sent = await r.discordSend({
        fromAgentId: "ruda",
        targetAgentId: "eden",
        message: "코드 리뷰 해줘",
      });
      expect(sent.status).toBe("sent");
      const result = r.sessionsSend({
        requesterSessionKey: "agent:ruda:main",
        targetSessionKey: "agent:eden:main",
        message: "[NOTIFICATION] 배포 끝났어요",
        timeoutSeconds,
      });
      await r.idle();

      await vi.advanceTimersByTimeAsync(REMINDER_MS);
      const reminder = () =>
        discord.postedAt.find((p) => p.content.startsWith(`[리마인더 1/3] <@${BOTS.eden}>`));
      await r.idle();
      expect(reminder()?.at).toBe(T0 + REMINDER_MS);

      // Past the backoff (2 s ± 25%): the resent message's chunks run out too.
      await vi.advanceTimersByTimeAsync(3_000);
      await r.idle();
      const complete = events.find((e) => e.type === "a2a.complete");
      expect(complete?.type === "a2a.complete" && complete.data).toMatchObject({
        retryAttempts: 1,
        errorCode: "wait_timeout",
      });
      // 300 s in 30 s chunks: 10 waits on the first run, 10 on the resent one.
      expect(gateway.waits).toBe(20);
      expect(await result).toMatchObject(
        timeoutSeconds === 0
          ? { status: "accepted" }
          : { status: "blocked", retryAttempts: 1, error: { code: "wait_timeout" } },
      );
    }, 20_000);
  }
});
