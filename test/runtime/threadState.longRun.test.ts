import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ThreadState } from "../../src/runtime/ThreadState.js";
import { ThreadStateStore } from "../../src/runtime/threadStatePersistence.js";
import { parseConfig } from "../../src/policies/index.js";
import { tempDir } from "../support/tempDir.js";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 1, 0, 0, 0);
const COLLABORATIONS = 20_000;
const DAYS = 15;
const AGENTS = ["ruda", "eden", "seum", "haru", "mina", "joon", "bora", "sol"];
const CHANNELS = ["c1", "c2", "c3", "c4", "c5"];

function bytesBelow(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0);
}

/**
 * 20,000 answered collaborations over 15 simulated days, through ThreadState and its persistence as
 * the runtime drives them: each opens a thread (or reuses the pair's, one time in ten), adds its participants, posts a
 * reminder (a system message) one time in three, is answered a minute later, and one message in four
 * is observed; the maintenance schedule expires the state every simulated hour.
 */
describe("thread state over a long run", () => {
  it("stays bounded: its size on disk does not grow with the number of collaborations", async () => {
    const { discord } = parseConfig({});
    const stateDir = tempDir("a2a-threads-long-");
    let now = T0;
    const threads = new ThreadState(
      { ...discord.collaboration, cleanupMaxAgeMs: discord.a2aRetry.cleanupMaxAgeMs },
      () => now,
    );
    const store = await ThreadStateStore.open({ stateDir, threads, now: () => now, onWarning: () => {} });
    const step = (DAYS * DAY) / COLLABORATIONS;
    const sizes: Array<{ day: number; bytes: number }> = [];
    let nextExpiry = T0 + HOUR;
    let nextThread = 0;
    for (let i = 0; i < COLLABORATIONS; i++) {
      now = T0 + Math.round(i * step);
      const from = AGENTS[i % AGENTS.length] as string;
      const to = AGENTS[(i * 3 + 1) % AGENTS.length] as string;
      // A new topic almost every time: the worst case, a new thread per collaboration.
      const topicId = i % 10 === 0 ? "review" : `topic-${i}`;
      const reusable = threads.reusableRoute(from, to, topicId, now);
      const threadId = reusable?.threadId ?? `t${nextThread++}`;
      const channelId = reusable?.channelId ?? (CHANNELS[i % CHANNELS.length] as string);
      threads.useRoute({
        fromAgentId: from,
        targetAgentId: to,
        topicId,
        threadId,
        channelId,
        lastUsedAt: now,
      });
      threads.addParticipants(threadId, [from, to], now);
      if (i % 3 === 0) threads.markSystemMessage(`reminder-${i}`, now + 5 * 60_000);
      threads.touch(threadId, now + 60_000);
      if (i % 4 === 0) {
        const extractedTokens = {
          mentions: [],
          urls: ["https://example.com/pr/42"],
          prNumbers: ["#42"],
          codeRefs: [],
        };
        const summary = `${from}→${to}: 리뷰 결과를 정리했습니다, 스레드에서 확인 부탁드립니다`.slice(0, 50);
        threads.observe(
          { messageId: `m${i}`, sender: to, summary, ts: now, channelId: threadId, extractedTokens },
          now,
        );
      }
      if (now >= nextExpiry) {
        threads.expire(now);
        await store.flush();
        nextExpiry += HOUR;
      }
      if (now >= T0 + (sizes.length + 1) * DAY) {
        await store.idle(); // no fold half done: it holds the old segments and the new one
        sizes.push({ day: sizes.length + 1, bytes: bytesBelow(stateDir) });
      }
    }
    await store.close();
    const final = bytesBelow(stateDir);
    console.log(
      `thread state after ${COLLABORATIONS} collaborations over ${DAYS} days (${nextThread} threads): ` +
        `${final} bytes on disk at stop; by day: ${sizes.map((s) => `${s.day}:${s.bytes}`).join(" ")}`,
    );
    expect(final).toBeLessThan(1024 * 1024);
    // Not growing with the count: the size swings with the lines appended between two folds (a quarter
    // of the state at most), but the second week's peak is no higher than the first's.
    const peak = (from: number, to: number) =>
      Math.max(...sizes.filter((s) => s.day >= from && s.day <= to).map((s) => s.bytes));
    expect(peak(8, 14)).toBeLessThanOrEqual(peak(1, 7) * 1.1);
    expect(peak(1, 14)).toBeLessThan(1024 * 1024);
  }, 120_000);
});
