import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DiscordCallTimeoutError, withDiscordCallTimeout } from "../../src/runtime/discordCallTimeout.js";
import { GLOBAL_TIMERS } from "../../src/durable/timers.js";
import type { DiscordPort } from "../../src/index.js";
import { classifyDiscordFailure } from "../../src/policies/entryPoint.js";

const SEND = {
  asAgentId: "ruda",
  channelId: "1400000000000000500",
  content: "hi",
  mentionUserIds: [],
  nonce: "n",
};
const THREAD = { asAgentId: "ruda", channelId: "1400000000000000500", name: "[협업] 루다 → 이든" };

/** A port whose calls never settle until the test settles them. */
function hangingPort() {
  const settle: Array<(value: unknown) => void> = [];
  const port: DiscordPort = {
    sendMessage: () => new Promise((resolve) => settle.push(resolve as (value: unknown) => void)),
    createThread: () => new Promise((resolve) => settle.push(resolve as (value: unknown) => void)),
    describeChannel: () => new Promise((resolve) => settle.push(resolve as (value: unknown) => void)),
    recentMessages: () => new Promise((resolve) => settle.push(resolve as (value: unknown) => void)),
  };
  return { port, settle };
}

describe("withDiscordCallTimeout: a Discord call gets 10 s", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each([
    ["sendMessage", (p: DiscordPort) => p.sendMessage(SEND)],
    ["createThread", (p: DiscordPort) => p.createThread(THREAD)],
    ["describeChannel", (p: DiscordPort) => p.describeChannel?.({ channelId: SEND.channelId })],
    ["recentMessages", (p: DiscordPort) => p.recentMessages?.({ ...SEND, limit: 50 })],
  ] as const)(
    "%s that does not answer fails at the timeout, as a transient failure",
    async (method, call) => {
      const timed = withDiscordCallTimeout(hangingPort().port, 10_000, GLOBAL_TIMERS);
      const outcome = Promise.resolve(call(timed)).then(
        () => "settled",
        (error: unknown) => error,
      );
      await vi.advanceTimersByTimeAsync(9_999);
      expect(await Promise.race([outcome, Promise.resolve("pending")])).toBe("pending");
      await vi.advanceTimersByTimeAsync(1);
      const error = await outcome;
      expect(error).toBeInstanceOf(DiscordCallTimeoutError);
      expect((error as Error).message).toBe(`Discord ${method} did not answer within 10000 ms`);
      expect(classifyDiscordFailure(error)).toEqual({ kind: "transient", retryable: true, escalate: false });
    },
  );

  it("a call that answers in time keeps its answer and leaves no timer behind", async () => {
    const { port, settle } = hangingPort();
    const timed = withDiscordCallTimeout(port, 10_000, GLOBAL_TIMERS);
    const sent = timed.sendMessage(SEND);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(vi.getTimerCount()).toBe(1);
    settle[0]?.({ messageId: "1400000000000000700" });
    await expect(sent).resolves.toEqual({ messageId: "1400000000000000700" });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a failure in time is passed on as it is, and its timer cleared", async () => {
    const failure = Object.assign(new Error("Missing Permissions"), { status: 403 });
    const timed = withDiscordCallTimeout(
      { sendMessage: () => Promise.reject(failure), createThread: () => Promise.reject(failure) },
      10_000,
      GLOBAL_TIMERS,
    );
    await expect(timed.sendMessage(SEND)).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a port that throws instead of rejecting fails the call the same way", async () => {
    const timed = withDiscordCallTimeout(
      {
        sendMessage: () => {
          throw new Error("socket closed");
        },
        createThread: () => Promise.resolve({ threadId: "1" }),
      },
      10_000,
      GLOBAL_TIMERS,
    );
    await expect(timed.sendMessage(SEND)).rejects.toThrow("socket closed");
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps describeChannel and recentMessages absent when the port has none", () => {
    const timed = withDiscordCallTimeout(
      {
        sendMessage: () => Promise.resolve({ messageId: "1" }),
        createThread: () => Promise.resolve({ threadId: "1" }),
      },
      10_000,
      GLOBAL_TIMERS,
    );
    expect(timed.describeChannel).toBeUndefined();
    expect(timed.recentMessages).toBeUndefined();
  });

  it("close() clears the timers of calls in flight", async () => {
    const timed = withDiscordCallTimeout(hangingPort().port, 10_000, GLOBAL_TIMERS);
    void timed.sendMessage(SEND);
    void timed.createThread(THREAD);
    expect(vi.getTimerCount()).toBe(2);
    timed.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
