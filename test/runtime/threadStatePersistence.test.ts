import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readStateDir, SnapshotStoreWriteError } from "../../src/persistence/index.js";
import { JournalSegmentWriter } from "../../src/persistence/journal/JournalSegmentWriter.js";
import { ThreadState } from "../../src/runtime/ThreadState.js";
import { FOLD_AT_LINES, ThreadStateStore } from "../../src/runtime/threadStatePersistence.js";
import { tempDir } from "../support/tempDir.js";
import {
  savedThreadEntries,
  savedThreadLines,
  segmentFiles,
  threadStateLineCount,
  writeThreadSegment,
} from "../support/threadStateFiles.js";

const parentKeys = (state: ThreadState) => state.entries().flatMap((e) => (e.c === "parent" ? [e.k] : []));

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const limits = {
  threadReuseTTL: 6 * HOUR,
  observerHistoryLimit: 50,
  observerHistoryTTL: 24 * HOUR,
  participantTTL: 24 * HOUR,
  cleanupMaxAgeMs: 24 * HOUR,
};

afterEach(() => vi.restoreAllMocks());

async function open(stateDir: string, now = () => T0) {
  const warnings: string[] = [];
  const threads = new ThreadState(limits, now);
  const store = await ThreadStateStore.open({ stateDir, threads, now, onWarning: (m) => warnings.push(m) });
  return { threads, store, warnings };
}

/** The thread state's files, each with its inode and content. */
const filesOf = (stateDir: string) =>
  readdirSync(join(stateDir, "threads"))
    .sort()
    .map((name) => {
      const file = join(stateDir, "threads", name);
      return `${name} ${statSync(file).ino} ${readFileSync(file, "utf8")}`;
    });

describe("ThreadStateStore", () => {
  it("quarantines entries that fail their schema and keeps a damaged segment's copy, uses the rest, and status lists both", async () => {
    const stateDir = tempDir("a2a-threads-");
    writeThreadSegment(stateDir, [
      ["participants", "t1", { agentIds: ["ruda", "eden"], seenAt: T0 }],
      ["participants", "t2", { agentIds: "ruda", seenAt: T0 }],
      "{not json\n",
      ["route", "ruda:eden", { threadId: "t1", channelId: "c1", lastUsedAt: "yesterday" }],
      ["observed", "c1 m9", { messageId: "m1", channelId: "c1" }],
      ["nonsense", "k", 1],
      ["sink", "t3", true],
    ]);
    const { threads, store, warnings } = await open(stateDir);
    expect(threads.participantsOf("t1")).toEqual(["ruda", "eden"]);
    expect(threads.participantsOf("t2")).toEqual([]);
    expect(threads.isSinkThread("t3")).toBe(true);
    expect(warnings).toEqual([
      expect.stringMatching(
        /SAVED DATA MAY BE LOST: corrupt journal .*journal-000001\.ndjson: line 4: not valid JSON/,
      ),
      expect.stringMatching(/4 thread-state entries are invalid; dropped them and kept them in /),
    ]);
    await store.close();

    const kept = readdirSync(join(stateDir, "quarantine")).find((name) => name.endsWith(".json"));
    const { entries } = JSON.parse(readFileSync(join(stateDir, "quarantine", kept ?? ""), "utf8")) as {
      entries: Array<{ c: string; k: string; reason: string }>;
    };
    expect(entries.map((e) => [e.c, e.k, e.reason])).toEqual([
      ["participants", "t2", expect.stringMatching(/^agentIds: /)],
      ["route", "ruda:eden", expect.stringMatching(/^lastUsedAt: /)],
      ["observed", "c1 m9", expect.stringMatching(/sender/)],
      ["nonsense", "k", 'unknown collection "nonsense"'],
    ]);
    const reading = await readStateDir(stateDir);
    expect(reading.quarantined.map(({ file }) => file.slice(stateDir.length + 1)).sort()).toEqual([
      expect.stringMatching(/^quarantine\/threads-.*\.json$/),
      expect.stringMatching(/^quarantine\/threads-journal-000001\.ndjson\.damaged-/),
    ]);
    // Reopened: the damage was written out at once, nothing is left to report, the valid entries stay.
    const again = await open(stateDir);
    expect(again.warnings).toEqual([]);
    expect(again.threads.participantsOf("t1")).toEqual(["ruda", "eden"]);
    await again.store.close();
  });

  it("a change whose append failed is not lost: the next save writes it with the new ones", async () => {
    const stateDir = tempDir("a2a-threads-");
    const { threads, store, warnings } = await open(stateDir);
    const append = vi.spyOn(JournalSegmentWriter.prototype, "append");
    append.mockRejectedValueOnce(new Error("EIO: i/o error, write"));
    threads.markSinkThread("t1");
    const failed = await store.flush().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(SnapshotStoreWriteError);
    expect(failed).toMatchObject({ code: "SNAPSHOT_STORE_WRITE_FAILED" });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^could not write .*threads.*journal-\d+\.ndjson \(EIO: i\/o error, write\); the records are kept in memory/,
      ),
    ]);
    threads.markSinkThread("t2");
    await store.flush();
    expect(savedThreadEntries(stateDir).get("sink t1")).toBe(true);
    expect(savedThreadEntries(stateDir).get("sink t2")).toBe(true);
    await store.close();
  });

  it("folds the journal once it passes FOLD_AT_LINES: entries changed over and over stay a bounded journal", async () => {
    const stateDir = tempDir("a2a-threads-");
    let now = T0;
    const { threads, store } = await open(stateDir, () => now);
    for (let round = 0; round < 100; round++) {
      now += 2 * 60_000;
      for (let n = 0; n < 100; n++) threads.setParent(`t${n}`, `c${round % 2}`);
      await store.flush();
    }
    await store.idle();
    // 10,000 lines appended; at most FOLD_AT_LINES since the last fold, after the 100 it wrote.
    expect(savedThreadLines(stateDir).length).toBeLessThanOrEqual(100 + FOLD_AT_LINES);
    expect(segmentFiles(stateDir).map((file) => file.slice(-21))).not.toContain("journal-000001.ndjson");
    await store.close();
    const again = await open(stateDir, () => now);
    expect(again.threads.parentOf("t99")).toBe("c1");
    expect(parentKeys(again.threads)).toHaveLength(100);
    await again.store.close();
  });

  it("a fold that fails fails no save: the changes are in the journal, the failure is reported", async () => {
    const stateDir = tempDir("a2a-threads-");
    let now = T0;
    const { threads, store, warnings } = await open(stateDir, () => now);
    vi.spyOn(ThreadStateStore.prototype, "fold").mockRejectedValue(new Error("ENOSPC: no space left"));
    for (let n = 0; n < 2_500; n++) {
      now += 1_000;
      threads.setParent(`t${n}`, "c1");
      if (n % 100 === 99) await store.flush();
    }
    expect(warnings[0]).toBe("could not fold the thread state: ENOSPC: no space left");
    expect(savedThreadEntries(stateDir).size).toBe(2_500);
    vi.restoreAllMocks();
    await store.close();
  });

  it("makes the segment its appends go to as it reads the journal, and removes it when the open fails", async () => {
    const stateDir = tempDir("a2a-threads-");
    writeThreadSegment(stateDir, [["parent", "t1", { channelId: "c1", at: T0 }]]);
    mkdirSync(join(stateDir, "threads", "journal-000002.ndjson")); // a segment it cannot read
    await expect(open(stateDir)).rejects.toThrow(/journal-000002\.ndjson/);
    expect(readdirSync(join(stateDir, "threads")).sort()).toEqual([
      "journal-000001.ndjson",
      "journal-000002.ndjson",
    ]);
    rmSync(join(stateDir, "threads", "journal-000002.ndjson"), { recursive: true });
    const { threads, store } = await open(stateDir);
    expect(threads.parentOf("t1")).toBe("c1");
    // Made as the journal is read: the first change's append only writes and syncs.
    await vi.waitFor(() =>
      expect(readdirSync(join(stateDir, "threads")).sort()).toEqual([
        "journal-000001.ndjson",
        "journal-000002.ndjson",
      ]),
    );
    await store.close();
  });

  it("a start and a stop write nothing when nothing changed: the journal stays until a fold is due", async () => {
    const stateDir = tempDir("a2a-threads-");
    const first = await open(stateDir);
    for (let n = 0; n < 50; n++) first.threads.setParent(`t${n}`, "c1");
    await first.store.close();
    const before = filesOf(stateDir);
    expect(savedThreadLines(stateDir)).toHaveLength(50);

    const second = await open(stateDir);
    expect(parentKeys(second.threads).length).toBe(50);
    await second.store.close();
    expect(filesOf(stateDir)).toEqual(before);
  });

  it("folds once the lines appended pass a quarter of the state, not every FOLD_AT_LINES, so a fold's cost per change stays flat", async () => {
    const stateDir = tempDir("a2a-threads-");
    const id = (n: number) => `thread-${String(n).padStart(6, "0")}`;
    const first = await open(stateDir);
    for (let n = 0; n < 20_000; n++) first.threads.setParent(id(n), "1".repeat(19));
    await first.store.close();

    let now = T0;
    const second = await open(stateDir, () => now);
    const appended = () => threadStateLineCount(stateDir) - 20_000;
    let peak = 0;
    try {
      for (let n = 0, last = 0; appended() >= last; n += 500) {
        last = peak = appended();
        now += 2 * 60_000;
        for (let i = n; i < n + 500; i++) second.threads.setParent(id(i), "2".repeat(19));
        await second.store.flush();
        await second.store.idle();
      }
    } finally {
      await second.store.close();
    }
    // Well past FOLD_AT_LINES before the fold, which came with the append that passed a quarter.
    expect(peak).toBeGreaterThan(2 * FOLD_AT_LINES);
    expect(peak).toBe(5_000 - 500);
    const third = await open(stateDir);
    expect(third.threads.parentOf(id(0))).toBe("2".repeat(19));
    expect(third.threads.parentOf(id(19_999))).toBe("1".repeat(19));
    await third.store.close();
  }, 30_000);

  it("opens with one keyed write per line: the replay hands its lines to the state in order, the last of each key wins there", async () => {
    // The replay kept the last line of each key in a map of its own, keyed "<collection> <key>", which
    // the state then rebuilt by key: every entry keyed twice. Work per line is counted, not timed.
    const stateDir = tempDir("a2a-threads-");
    const lines = 2_000;
    const parent = (n: number, channelId: string): [string, string, unknown] => [
      "parent",
      `t${n}`,
      { channelId, at: T0 },
    ];
    writeThreadSegment(stateDir, [
      ...Array.from({ length: lines / 2 }, (_, n) => parent(n, "c1")),
      ["route", "ruda:eden", { threadId: "t1", channelId: "c1", lastUsedAt: T0 }],
    ]);
    writeThreadSegment(
      stateDir,
      [
        ...Array.from({ length: lines / 2 - 4 }, (_, n) => parent(n, "c2")),
        ["parent", "t0", { channelId: "", at: T0 }], // invalid: the line before it stays
        '{"c":"parent","k":"t1"}\n', // removed
        ["route", "ruda:eden", { threadId: "t2", channelId: "c1", lastUsedAt: T0 }],
      ],
      2,
    );
    const sets = vi.spyOn(Map.prototype, "set");
    const { threads, store, warnings } = await open(stateDir);
    const keyed = sets.mock.calls.length;
    sets.mockRestore();
    await store.close();
    expect(keyed / lines).toBeLessThan(1.25);
    expect(threads.parentOf("t0")).toBe("c2");
    expect(threads.parentOf("t1")).toBeUndefined();
    expect(threads.parentOf("t996")).toBe("c1");
    expect(threads.reusableRoute("ruda", "eden", undefined, T0)?.threadId).toBe("t2");
    // The state's entries in the order of each one's last line, as a fold writes them.
    expect(parentKeys(threads).slice(0, 2)).toEqual(["t996", "t997"]);
    expect(parentKeys(threads).at(-1)).toBe("t995");
    expect(warnings).toEqual([expect.stringMatching(/1 thread-state entry is invalid/)]);
  });

  it("what the expiry drops at start is logged when it is little, written out with a fold when it is much", async () => {
    const stateDir = tempDir("a2a-threads-");
    const first = await open(stateDir);
    for (let n = 0; n < 12_000; n++) first.threads.setParent(`t${n}`, "c1", T0 - (n < 5 ? 2 : 0) * HOUR);
    await first.store.close();
    const lines = savedThreadLines(stateDir).length;

    // 23 h later the five older parents are past participantTTL (and cleanupMaxAgeMs): five lines.
    const second = await open(stateDir, () => T0 + 23 * HOUR);
    await second.store.close();
    expect(parentKeys(second.threads).length).toBe(11_995);
    expect(savedThreadLines(stateDir).slice(lines)).toEqual(
      ["t0", "t1", "t2", "t3", "t4"].map((k) => ({ c: "parent", k })),
    );

    // 27 h later all of them: a fold, no removal logged, and nothing left on disk.
    const append = vi.spyOn(JournalSegmentWriter.prototype, "append");
    const third = await open(stateDir, () => T0 + 27 * HOUR);
    expect(append).not.toHaveBeenCalled();
    await third.store.close();
    expect(parentKeys(third.threads).length).toBe(0);
    expect(segmentFiles(stateDir)).toEqual([]);
  }, 30_000);
});

describe("ThreadStateStore.fold", () => {
  it("writes a large state in pieces, one append each, so no one write blocks the event loop long", async () => {
    const stateDir = tempDir("a2a-threads-");
    const { threads, store } = await open(stateDir);
    threads.load(Array.from({ length: 25_000 }, (_, n) => ({ c: "sink", k: `t${n}`, v: true }) as const));
    const append = vi.spyOn(JournalSegmentWriter.prototype, "append");
    await store.fold();
    expect(append.mock.calls.map(([batch]) => batch.toString().split("\n").length - 1)).toEqual([
      10_000, 10_000, 5_000,
    ]);
    await store.close();
    expect(savedThreadLines(stateDir)).toHaveLength(25_000);
  });
});
