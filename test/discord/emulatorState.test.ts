import { describe, expect, it } from "vitest";
import { EmulatorState } from "../../src/testing/emulator/state.js";
import { snowflakeTimestamp } from "../../src/testing/emulator/snowflake.js";
import { messageJson } from "../../src/testing/emulator/shapes.js";

const CHANNEL = "100000000000000001";
const BOT = "200000000000000001";

describe("EmulatorState", () => {
  it("stamps a message with the time its snowflake id encodes, even when the clock moves between reads", () => {
    // A clock one millisecond later at every read: the id and the timestamp must still agree.
    let time = Date.UTC(2026, 10, 24, 9, 0, 0);
    const state = new EmulatorState({
      channels: [{ id: CHANNEL, name: "general" }],
      users: [{ id: BOT, name: "ruda", bot: true }],
      now: () => time++,
    });
    for (let i = 0; i < 3; i += 1) {
      const { message } = state.createMessage({ channelId: CHANNEL, authorId: BOT, content: `m${i}` });
      expect(message.createdAt).toBe(snowflakeTimestamp(message.id));
      expect(messageJson(state, message, false).timestamp).toBe(
        new Date(snowflakeTimestamp(message.id)).toISOString(),
      );
    }
  });
});

describe("EmulatorState nonces", () => {
  const post = (state: EmulatorState, content: string) =>
    state.createMessage({ channelId: CHANNEL, authorId: BOT, content, nonce: "n-1", enforceNonce: true });

  it("returns the first enforced post only within nonceWindowMs, by its clock", () => {
    let time = Date.UTC(2026, 10, 24, 9, 0, 0);
    const state = new EmulatorState({
      channels: [{ id: CHANNEL, name: "general" }],
      users: [{ id: BOT, name: "ruda", bot: true }],
      now: () => time,
      nonceWindowMs: 1_000,
    });
    const first = post(state, "first");
    time += 999;
    expect(post(state, "again").message.id).toBe(first.message.id);
    time += 1;
    const later = post(state, "after the window");
    expect(later.created).toBe(true);
    expect(later.message.id).not.toBe(first.message.id);
  });

  it("refuses a window that is not a number of milliseconds", () => {
    for (const nonceWindowMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, "5m" as unknown as number]) {
      expect(
        () => new EmulatorState({ channels: [], users: [], nonceWindowMs }),
        String(nonceWindowMs),
      ).toThrow(/nonceWindowMs must be a finite number/);
    }
  });
});
