import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type IntervalHistogram, monitorEventLoopDelay } from "node:perf_hooks";
// Real time (fake timers replace only the globals): a fold runs on the disk, outside simulated time.
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";
import type { DiscordPort } from "../../src/index.js";
import { readStateDir } from "../../src/persistence/index.js";
import { BOTS, CHANNEL, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { FOLD_AT_LINES } from "../../src/runtime/threadStatePersistence.js";
import { savedThreadEntries } from "../support/threadStateFiles.js";

const T0 = Date.UTC(2026, 10, 1, 0, 0, 0);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const COLLABORATIONS = 20_000;
const DAYS = 15;
/** Collaborations started together: a burst, as a busy gateway sees them, and the journal group-commits. */
const BATCH = 100;
const BATCH_SPAN_MS = (DAYS * DAY) / (COLLABORATIONS / BATCH);
/** One per batch is answered only after its first reminder (responseTimeoutMs is 5 minutes). */
const LATE_ANSWER_AFTER_MS = 6 * MINUTE;
const CHECKPOINT_DAYS = [3, 6, 9, 12, 15];

const PAIRS = [
  ["ruda", "eden"],
  ["eden", "seum"],
  ["seum", "ruda"],
] as const;

// A load test's limits: the default loop guard and Discord rate limits would (rightly) queue or refuse
// this many collaborations between three agents; what is measured here is the runtime's own footprint.
const config = {
  agents: {
    ruda: { discordBotId: BOTS.ruda, name: "루다" },
    eden: { discordBotId: BOTS.eden, name: "이든" },
    seum: { discordBotId: BOTS.seum, name: "세움" },
  },
  discord: {
    collaboration: {
      defaultChannel: CHANNEL,
      allowedChannels: [CHANNEL],
      loopGuard: { maxCollaboratePerPair: 10_000, maxMessagesPerThread: 100 },
      rateLimit: { threadCreationPerMinute: 10_000, messagePerChannelPerSecond: 10_000 },
    },
  },
};

/** Discord that keeps nothing but counts (FakeDiscord keeps every message, which would be the test's own growth). */
class CountingDiscord implements DiscordPort {
  sent = 0;
  private ids = 1_500_000_000_000_000_000n;

  private nextId(): string {
    this.ids += 1n;
    return this.ids.toString();
  }

  async sendMessage() {
    this.sent += 1;
    return { messageId: this.nextId() };
  }

  async createThread(p: { fromMessageId?: string }) {
    return { threadId: p.fromMessageId ?? this.nextId() };
  }
}

interface Checkpoint {
  day: number;
  /** The whole state dir: everything below, and the lock. */
  stateDirKiB: number;
  /** The snapshot store's files: live shards and archive hours (without the journal). */
  storeKiB: number;
  /** The journal segments, folded into the store's files each time they pass journalMaxBytes. */
  journalKiB: number;
  threadStateKiB: number;
  /** The thread state's entries themselves (the files folded, as JSON): what expiry keeps bounded. */
  threadEntriesKiB: number;
  /** The audit log, bounded by its rotation (10 MiB × 6 files). */
  eventLogKiB: number;
  live: number;
  archived: number;
  heapMiB: number;
  loopP99Ms: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;

/** Bytes of every file under `dir` whose path `keep` accepts. */
function bytesUnder(dir: string, keep: (path: string) => boolean = () => true): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = statSync(path);
    if (info.isDirectory()) total += bytesUnder(path, keep);
    else if (keep(path)) total += info.size;
  }
  return total;
}

const isJournal = (p: string) => /journal-\d+\.ndjson$/.test(p);

/**
 * Waits for a fold of the store's journal in flight to end (it deletes the segments it sealed): a
 * checkpoint measures the journal between folds, however long the disk takes with them.
 */
async function foldsEnded(dir: string): Promise<void> {
  const segments = () => readdirSync(join(dir, "actors")).filter(isJournal).length;
  for (const started = performance.now(); segments() > 1; await sleep(10)) {
    if (performance.now() - started > 60_000)
      throw new Error(`a fold of ${dir}'s journal did not end in 60 s`);
  }
}

async function measure(dir: string, day: number, loop: IntervalHistogram): Promise<Checkpoint> {
  // Read first: the collection and the reading below block the loop themselves.
  const loopP99Ms = Math.round((loop.percentile(99) / 1e6) * 10) / 10;
  await foldsEnded(dir);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined)
    throw new Error("run with --expose-gc (vitest.config.ts sets it) to measure the heap");
  gc();
  const heap = process.memoryUsage().heapUsed;
  const stored = await readStateDir(dir);
  const kib = (bytes: number) => Math.round(bytes / KiB);
  return {
    day,
    stateDirKiB: kib(bytesUnder(dir)),
    storeKiB: kib(bytesUnder(join(dir, "actors"), (p) => !isJournal(p)) + bytesUnder(join(dir, "archive"))),
    journalKiB: kib(bytesUnder(join(dir, "actors"), isJournal)),
    threadStateKiB: kib(bytesUnder(join(dir, "threads"))),
    threadEntriesKiB: kib(JSON.stringify([...savedThreadEntries(dir)]).length),
    eventLogKiB: kib(bytesUnder(dir, (p) => p.includes("coordination-events.ndjson"))),
    live: stored.actors.filter((a) => a.location === "live").length,
    archived: stored.actors.filter((a) => a.location === "archive").length,
    heapMiB: Math.round((heap / MiB) * 10) / 10,
    loopP99Ms,
  };
}

describe("a long run", () => {
  const runtime = useRuntimeHarness(T0);

  it(`${COLLABORATIONS} answered collaborations over ${DAYS} simulated days stay bounded on disk and in memory`, async () => {
    const dir = tempStateDir("a2a-long-run-");
    const discord = new CountingDiscord();
    const r = runtime({ stateDir: dir, config, gateway: new ScriptedGateway(), discord });
    await r.start();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const checkpoints: Checkpoint[] = [];
    let answers = 0;
    const answer = (threadId: string, fromAgentId: keyof typeof BOTS) =>
      r.handleDiscordMessage({
        messageId: String(1_600_000_000_000_000_000n + BigInt(++answers)),
        channelId: threadId,
        threadId,
        parentChannelId: CHANNEL,
        authorId: BOTS[fromAgentId],
        authorIsBot: true,
        content: "확인했어요, 반영할게요",
        mentionUserIds: [],
        ts: Date.now(),
      });

    const send = async (n: number) => {
      const [from, to] = PAIRS[n % PAIRS.length] ?? PAIRS[0];
      const result = await r.discordSend({
        fromAgentId: from,
        targetAgentId: to,
        message: `작업 ${n} 리뷰 부탁해요`,
        // Its own topic: a new thread each time, the worst case for thread state.
        topicId: `task-${n}`,
      });
      if (result.status !== "sent") throw new Error(`discordSend ${n}: ${JSON.stringify(result)}`);
      return { threadId: result.threadId, to };
    };

    let reminders = 0;
    for (let started = 0; started < COLLABORATIONS; started += BATCH) {
      const batchStart = Date.now();
      // Calls arrive one per turn of the event loop, as from a gateway, not all inside one task.
      const sending: Array<Promise<{ threadId: string; to: keyof typeof BOTS }>> = [];
      for (let k = 0; k < BATCH; k++) {
        sending.push(send(started + k));
        await nextTurn();
      }
      const sent = await Promise.all(sending);
      const [late, ...onTime] = sent;
      const answering: Array<Promise<unknown>> = [];
      for (const s of onTime) {
        answering.push(answer(s.threadId, s.to));
        await nextTurn();
      }
      await Promise.all(answering);
      const before = discord.sent;
      await vi.advanceTimersByTimeAsync(LATE_ANSWER_AFTER_MS);
      await r.idle();
      expect(discord.sent).toBe(before + 1); // the late mention's reminder
      reminders += 1;
      if (late !== undefined) await answer(late.threadId, late.to);
      await vi.advanceTimersByTimeAsync(batchStart + BATCH_SPAN_MS - Date.now());

      const day = Math.round((Date.now() - T0) / DAY);
      if (CHECKPOINT_DAYS.includes(day) && checkpoints.at(-1)?.day !== day) {
        checkpoints.push(await measure(dir, day, loop));
        loop.reset();
      }
    }
    loop.disable();
    console.log(
      `long run: ${COLLABORATIONS} answered collaborations (${reminders} after a reminder) over ${DAYS} days\n` +
        table(checkpoints),
    );

    const at = (day: number) => checkpoints.find((c) => c.day === day) as Checkpoint;
    const [day3, day15] = [at(3), at(15)];
    const perDay = COLLABORATIONS / DAYS;
    // Nothing waits at the end of a batch. A finished record stays a day (cleanupMaxAgeMs) plus up to an
    // hour (the maintenance period) plus the prune's own time: a few real seconds, which under this
    // clock (~100 simulated minutes per real second) can be many hours on a busy machine, hence ×2.5.
    // Kept forever, day 15 would hold all 20,000.
    expect(day15.live).toBe(0);
    expect(day15.archived).toBeLessThan(2.5 * perDay);
    // Day 3 already holds a full day of archive: later days differ by that lag, not by growth (×2
    // slack; keeping every record would be ×9). The journal stays under its fold size plus a batch.
    expect(day15.storeKiB).toBeLessThan(2 * day3.storeKiB);
    for (const c of checkpoints) expect(c.journalKiB * KiB, `journal on day ${c.day}`).toBeLessThan(9 * MiB);
    expect(day15.eventLogKiB * KiB).toBeLessThan(6 * 10 * MiB);
    // The heap holds a day of archive and the thread state; +16 MiB covers the collector's timing and
    // the thread state; keeping every finished actor cost +96 MB.
    expect(day15.heapMiB).toBeLessThan(day3.heapMiB + 16);
    // Every collaboration the archive still lists was answered (mentions() prunes too, so it comes last).
    const listed = await r.mentions();
    expect(listed.length).toBeGreaterThan(perDay / 2);
    expect(listed.filter((m) => m.status !== "responded")).toEqual([]);
    // Routes, parents, participants, observer history and exchanges expire on the maintenance schedule:
    // the entries stay about a day's worth (kept forever, they grew ~300 KiB a day). On disk the
    // journal holds the entries as of the last fold, and the lines appended since (a quarter of them,
    // or FOLD_AT_LINES lines of under 512 bytes).
    expect(day15.threadEntriesKiB).toBeLessThan(1.5 * day3.threadEntriesKiB);
    expect(day15.threadStateKiB * KiB).toBeLessThan(2 * day15.threadEntriesKiB * KiB + FOLD_AT_LINES * 512);
    await r.stop();
    // About a minute of CPU on 2 cores; the limit leaves room for a machine shared with other runs.
  }, 240_000);
});

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function table(rows: Checkpoint[]): string {
  const columns: Array<[string, keyof Checkpoint]> = [
    ["day", "day"],
    ["state dir KiB", "stateDirKiB"],
    ["store KiB", "storeKiB"],
    ["journal KiB", "journalKiB"],
    ["thread state KiB", "threadStateKiB"],
    ["thread entries KiB", "threadEntriesKiB"],
    ["event log KiB", "eventLogKiB"],
    ["live", "live"],
    ["archived", "archived"],
    ["heap MiB", "heapMiB"],
    ["loop p99 ms", "loopP99Ms"],
  ];
  const cells = [
    columns.map(([title]) => title),
    ...rows.map((c) => columns.map(([, key]) => String(c[key]))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i]?.length ?? 0)));
  return cells.map((row) => row.map((cell, i) => cell.padStart(widths[i] ?? 0)).join("  ")).join("\n");
}
