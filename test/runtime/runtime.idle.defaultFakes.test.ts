// A gateway's test as its author writes it: vitest's default fake timers (setImmediate faked too), the
// lowdb store, then advance + idle().
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createA2ARuntime } from "../../src/index.js";
import { RecordingDiscord } from "../../src/testing/index.js";
import { BOTS, runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const MINUTE = 60_000;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

it("under vi.useFakeTimers() with its defaults, advance + idle() posts the first reminder at 5 minutes", async () => {
  const discord = new RecordingDiscord();
  const r = createA2ARuntime({
    config: runtimeConfig,
    stateDir: tempStateDir(),
    discord,
    logger: textLogger(() => {}),
  });
  await r.start();
  try {
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error("not sent");
    await vi.advanceTimersByTimeAsync(5 * MINUTE);
    await r.idle();
    expect(discord.in(sent.threadId).map((p) => [p.at - T0, p.content.split("\n")[0]])).toEqual([
      [0, `<@${BOTS.eden}> 코드 리뷰 해줘`],
      [5 * MINUTE, `[리마인더 1/3] <@${BOTS.eden}> 위 요청에 대해 확인 부탁해요.`],
    ]);
  } finally {
    await r.stop();
  }
});
