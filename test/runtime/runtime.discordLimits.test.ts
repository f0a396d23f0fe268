import { afterEach, describe, expect, it, vi } from "vitest";
import type { DiscordChannelInfo } from "../../src/runtime/index.js";
import type { DiscordSendResult, InboundDiscordMessage } from "../../src/index.js";
import { tempDirs } from "../persistence/tempDirs.js";
import {
  BOTS,
  CHANNEL,
  drain,
  FakeDiscord,
  HUMAN,
  runtimeConfig,
  useRuntimeHarness,
  waitUntil,
} from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const GUILD = "1400000000000000001";
const OTHER_CHANNEL = "1400000000000000501";
const SINK = "1400000000000000800";

// Registered before the harness: hooks run in reverse, so the runtimes stop before their dirs go.
const dirs = tempDirs();
afterEach(() => dirs.cleanup());
const runtime = useRuntimeHarness(T0);

/** Two allowed channels, in one guild. */
const twoChannels = {
  ...runtimeConfig,
  discord: {
    ...runtimeConfig.discord,
    collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL, OTHER_CHANNEL] },
  },
};

let messages = 0;
function humanMessage(patch: Partial<InboundDiscordMessage>): InboundDiscordMessage {
  messages += 1;
  return {
    messageId: `1400000000000009${String(messages).padStart(3, "0")}`,
    channelId: CHANNEL,
    authorId: HUMAN,
    authorIsBot: false,
    content: "hello",
    mentionUserIds: [],
    ts: Date.now(),
    ...patch,
  };
}

const PAIRS = [
  ["ruda", "eden"],
  ["eden", "seum"],
  ["seum", "ruda"],
] as const;

/** Ten collaborations that each need a new thread, alternating between the two channels. */
function tenNewThreads(r: ReturnType<typeof runtime>): Array<Promise<DiscordSendResult>> {
  return Array.from({ length: 10 }, (_, i) => {
    const [fromAgentId, targetAgentId] = PAIRS[i % 3] as readonly [string, string];
    return r.discordSend({
      fromAgentId,
      targetAgentId,
      message: `작업 ${i}`,
      topicId: `topic-${i}`,
      channelId: i % 2 === 0 ? CHANNEL : OTHER_CHANNEL,
    });
  });
}

/** Five threads open at once; the rest wait for the minute to pass (≤ 5 a minute per guild, queued). */
async function expectFivePerMinute(discord: FakeDiscord, sends: Array<Promise<DiscordSendResult>>) {
  // Polled, not idle(): the five held by the limiter are side effects in flight until the minute passes,
  // so runtime.idle() would wait for a clock that only this test moves.
  await waitUntil(() => discord.threads.length >= 5, "the first five threads");
  await drain();
  expect(discord.threads).toHaveLength(5);
  // Both channels had their share of the first five: the limit is the guild's, not each channel's.
  expect(new Set(discord.threads.map((t) => t.channelId))).toEqual(new Set([CHANNEL, OTHER_CHANNEL]));
  await vi.advanceTimersByTimeAsync(60_000);
  const results = await Promise.all(sends);
  expect(results.map((s) => s.status)).toEqual(Array(10).fill("sent"));
  expect(discord.threads).toHaveLength(10);
}

describe("createA2ARuntime: thread creation is limited per guild", () => {
  it("the guild known from inbound messages: two channels of one guild share five threads a minute", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: await dirs.make(), discord, config: twoChannels });
    await r.start();
    await r.handleDiscordMessage(humanMessage({ channelId: CHANNEL, guildId: GUILD }));
    await r.handleDiscordMessage(humanMessage({ channelId: OTHER_CHANNEL, guildId: GUILD }));
    await expectFivePerMinute(discord, tenNewThreads(r));
  });

  it("the guild asked of describeChannel, once per channel", async () => {
    const asked: string[] = [];
    const discord = Object.assign(new FakeDiscord(), {
      async describeChannel({ channelId }: { channelId: string }): Promise<DiscordChannelInfo> {
        asked.push(channelId);
        return { channelId, guildId: GUILD, isThread: false };
      },
    });
    const r = runtime({ stateDir: await dirs.make(), discord, config: twoChannels });
    await r.start();
    await expectFivePerMinute(discord, tenNewThreads(r));
    expect(asked.sort()).toEqual([CHANNEL, OTHER_CHANNEL]);
  });

  it("channels whose guild stays unknown share one limit rather than one each", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: await dirs.make(), discord, config: twoChannels });
    await r.start();
    await expectFivePerMinute(discord, tenNewThreads(r));
  });
});

describe("createA2ARuntime: every Discord call has a timeout", () => {
  it.each([
    ["by default, after 10 s", undefined, 10_000],
    ["after requestTimeoutMs", 3_000, 3_000],
  ] as const)(
    "a post that never answers fails %s and is retried 1 s later, as a 5xx",
    async (_, configured, timeoutMs) => {
      const discord = new FakeDiscord();
      let calls = 0;
      const send = discord.sendMessage.bind(discord);
      discord.sendMessage = (p) => {
        calls += 1;
        return calls === 1 ? new Promise<never>(() => {}) : send(p);
      };
      const config = {
        ...runtimeConfig,
        discord: {
          ...runtimeConfig.discord,
          collaboration: {
            ...runtimeConfig.discord.collaboration,
            ...(configured === undefined ? {} : { requestTimeoutMs: configured }),
          },
        },
      };
      const r = runtime({ stateDir: await dirs.make(), discord, config });
      await r.start();
      let settled = false;
      const sending = r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
      sending.then(
        () => (settled = true),
        () => (settled = true),
      );
      // Polled, not idle(): the starter post never answers, so it stays in flight until its timeout fires.
      await waitUntil(() => calls === 1, "the starter post");
      await vi.advanceTimersByTimeAsync(timeoutMs - 1);
      await drain(); // not idle(): the post is still in flight
      expect(calls).toBe(1);
      // The timeout: a transient failure, retried after 1 s, not before.
      await vi.advanceTimersByTimeAsync(1);
      await vi.advanceTimersByTimeAsync(999);
      await r.idle();
      expect(calls).toBe(1);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await r.idle();
      expect(settled).toBe(true);
      expect(await sending).toMatchObject({ status: "sent" });
      expect(discord.messages.map((m) => m.mentionUserIds)).toEqual([[], [BOTS.eden]]);
    },
  );
});

describe("createA2ARuntime: sink (report) threads by id", () => {
  const mentionInSink = humanMessage({
    channelId: SINK,
    threadId: SINK,
    parentChannelId: CHANNEL,
    mentionUserIds: [BOTS.eden],
    content: `<@${BOTS.eden}> 이 리포트 봐줘`,
  });

  it("registerSinkThread refuses what is not a thread id, naming it", async () => {
    const r = runtime({ stateDir: await dirs.make(), discord: new FakeDiscord() });
    await r.start();
    await expect(r.registerSinkThread("report-thread")).rejects.toThrow(
      /registerSinkThread: threadId must be a Discord thread id.*"report-thread"/,
    );
    await expect(r.registerSinkThread(42 as unknown as string)).rejects.toThrow(/got 42/);
  });

  it("a registered sink thread triggers no agent, refuses discordSend, and stays registered after a restart", async () => {
    const dir = await dirs.make();
    const discord = new FakeDiscord();
    const first = runtime({ stateDir: dir, discord });
    await first.start();
    expect(await first.handleDiscordMessage(mentionInSink)).toMatchObject({ action: "handle" });
    await first.registerSinkThread(SINK);
    expect(await first.handleDiscordMessage(mentionInSink)).toEqual({
      action: "drop",
      reason: "sink_thread",
    });
    await first.stop();

    const second = runtime({ stateDir: dir, discord });
    await second.start();
    expect(await second.handleDiscordMessage(mentionInSink)).toEqual({
      action: "drop",
      reason: "sink_thread",
    });
    expect(
      await second.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "hi", threadId: SINK }),
    ).toMatchObject({ status: "rejected", error: { code: "sink_thread" } });
    expect(discord.messages).toEqual([]);
  });

  it("sink threads from the config: dropped even when the adapter did not mark the message as a thread's", async () => {
    const config = {
      ...runtimeConfig,
      discord: {
        ...runtimeConfig.discord,
        collaboration: { ...runtimeConfig.discord.collaboration, sinkThreads: [SINK] },
      },
    };
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: await dirs.make(), discord, config });
    await r.start();
    const { threadId: _, parentChannelId: __, ...asChannel } = mentionInSink;
    expect(await r.handleDiscordMessage(asChannel)).toEqual({ action: "drop", reason: "sink_thread" });
    expect(
      await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "hi", threadId: SINK }),
    ).toMatchObject({ status: "rejected", error: { code: "sink_thread" } });
  });

  it("a pair's thread registered as a sink afterwards is not reused: the next collaboration opens a new one", async () => {
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: await dirs.make(), discord });
    await r.start();
    const first = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "하나" });
    if (first.status !== "sent") throw new Error("not sent");
    await r.registerSinkThread(first.threadId);
    const second = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "둘" });
    if (second.status !== "sent") throw new Error("not sent");
    expect(second.threadId).not.toBe(first.threadId);
    expect(discord.in(first.threadId)).toHaveLength(1);
  });
});
