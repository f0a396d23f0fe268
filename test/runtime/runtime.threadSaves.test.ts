import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DurableJsonFile } from "../../src/persistence/index.js";
import { BOTS, FakeDiscord, HUMAN, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);
afterEach(() => vi.restoreAllMocks());

function seenAt(dir: string, threadId: string): number | undefined {
  const file = join(dir, "threads.json");
  if (!existsSync(file)) return undefined;
  const data = JSON.parse(readFileSync(file, "utf8")) as { participantsSeenAt: Record<string, number> };
  return data.participantsSeenAt[threadId];
}

/**
 * Every write of threads.json, by the promise of the write itself: a test waits for writes to land on
 * that signal, not by polling the file while real disk I/O races the fake clock.
 */
function watchThreadWrites() {
  const write = vi.spyOn(DurableJsonFile.prototype, "write");
  const ofThreads = () =>
    write.mock.contexts.flatMap((file, i) =>
      (file as { file: string }).file.endsWith("threads.json")
        ? [write.mock.results[i]?.value as Promise<void>]
        : [],
    );
  return {
    count: () => ofThreads().length,
    /** Until no write is in flight and no spacing pause is left: each round lets the writes started land, then the pause pass. */
    async settle(): Promise<void> {
      let seen = -1;
      while (seen !== ofThreads().length) {
        seen = ofThreads().length;
        await Promise.all(ofThreads());
        // Also flushes the saver's reaction to the landing (a pause it arms) before time moves.
        await vi.advanceTimersByTimeAsync(THREAD_SAVE_SPACING_MS);
      }
    },
    /** The writes started so far have landed. */
    landed: () => Promise.all(ofThreads()),
  };
}

const THREAD_SAVE_SPACING_MS = 500;

describe("createA2ARuntime: thread-state saves under a burst", () => {
  it("writes the whole thread state at most once per 500 ms while changes keep coming, and at once on stop()", async () => {
    const writes = watchThreadWrites();
    const dir = tempStateDir();
    const r = runtime({ stateDir: dir, discord: new FakeDiscord() });
    await r.start();
    const sent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    if (sent.status !== "sent") throw new Error("not sent");
    await writes.settle();
    const before = writes.count();

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
    // Twenty changes (each message is the thread's last activity) with real I/O between them but no
    // time passing on the clock: the first is written at once, the rest wait out the spacing.
    for (let n = 1; n <= 20; n++) {
      await human(n);
      await writes.landed();
    }
    expect(writes.count() - before).toBe(1);
    expect(seenAt(dir, sent.threadId)).toBe(T0 + 61_000);
    // Once the spacing is over, the latest state is written: one more write, not nineteen.
    await writes.settle();
    expect(writes.count() - before).toBe(2);
    expect(seenAt(dir, sent.threadId)).toBe(T0 + 20 * 61_000);

    // After a quiet spell, a single change is written at once (no time passing).
    await human(21);
    await writes.landed();
    expect(writes.count() - before).toBe(3);
    expect(seenAt(dir, sent.threadId)).toBe(T0 + 21 * 61_000);
    // The next waits out the spacing; stop() writes it at once.
    await human(22);
    await writes.landed();
    expect(seenAt(dir, sent.threadId)).toBe(T0 + 21 * 61_000);
    await r.stop();
    expect(seenAt(dir, sent.threadId)).toBe(T0 + 22 * 61_000);
  });
});
