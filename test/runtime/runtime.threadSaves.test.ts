import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DurableJsonFile } from "../../src/persistence/index.js";
import { BOTS, drain, FakeDiscord, HUMAN, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);
afterEach(() => vi.restoreAllMocks());

function seenAt(dir: string, threadId: string): number | undefined {
  const file = join(dir, "threads.json");
  if (!existsSync(file)) return undefined;
  const data = JSON.parse(readFileSync(file, "utf8")) as { participantsSeenAt: Record<string, number> };
  return data.participantsSeenAt[threadId];
}

describe("createA2ARuntime: thread-state saves under a burst", () => {
  it("writes the whole thread state at most once per 500 ms while changes keep coming, and at once on stop()", async () => {
    const dir = tempStateDir();
    const r = runtime({ stateDir: dir, discord: new FakeDiscord() });
    await r.start();
    const sent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    if (sent.status !== "sent") throw new Error("not sent");
    for (let i = 0; i < 4; i++) {
      await drain();
      await vi.advanceTimersByTimeAsync(500);
    }
    const threadWrites = () =>
      write.mock.contexts.filter((file) => (file as { file: string }).file.endsWith("threads.json")).length;
    const write = vi.spyOn(DurableJsonFile.prototype, "write");

    // Twenty messages in the thread, each a change (its last activity): at most one write without time passing.
    const human = (n: number) =>
      r.handleDiscordMessage({
        messageId: String(1_400_000_000_000_010_000n + BigInt(n)),
        channelId: sent.threadId,
        threadId: sent.threadId,
        authorId: HUMAN,
        authorIsBot: false,
        content: `<@${BOTS.eden}> 메모 ${n}`,
        mentionUserIds: [BOTS.eden],
        // Activity alone is saved at most once a minute per thread: a minute and a second apart.
        ts: T0 + n * 61_000,
      });
    // Twenty changes with real I/O time between them but no time passing on the clock: written back to
    // back they would be ~20 writes; spaced, at most the first one (and none if a pause is running).
    for (let n = 1; n <= 20; n++) {
      await human(n);
      await drain(50);
    }
    expect(threadWrites()).toBeLessThanOrEqual(1);
    // Once the spacing is over, the latest state is written: one more write, not nineteen.
    // (Real disk writes in between: give them rounds of real I/O, not just fake time.)
    for (let i = 0; i < 40 && seenAt(dir, sent.threadId) !== T0 + 20 * 61_000; i++) {
      await vi.advanceTimersByTimeAsync(500);
      await drain();
    }
    expect(seenAt(dir, sent.threadId)).toBe(T0 + 20 * 61_000);
    expect(threadWrites()).toBeLessThanOrEqual(3);

    // Changes waiting out the spacing are written by stop() at once.
    await human(21);
    await human(22);
    await r.stop();
    expect(seenAt(dir, sent.threadId)).toBe(T0 + 22 * 61_000);
  }, 30_000);
});
