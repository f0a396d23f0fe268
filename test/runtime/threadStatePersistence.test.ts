import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChangeLogFile, readStateDir } from "../../src/persistence/index.js";
import { ThreadState } from "../../src/runtime/ThreadState.js";

const parentKeys = (state: ThreadState) => state.entries().flatMap((e) => (e.c === "parent" ? [e.k] : []));
import { COMPACT_AT_BYTES, openThreadStateStore } from "../../src/runtime/threadStatePersistence.js";
import { tempDir } from "../support/tempDir.js";
import { savedThreadEntries, snapshotFiles, threadStateBytes } from "../support/threadStateFiles.js";

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
  const store = await openThreadStateStore({ stateDir, threads, now, onWarning: (m) => warnings.push(m) });
  return { threads, store, warnings };
}

function observerRecord(channelId: string, messageId: string, ts: number) {
  const summary = "리뷰 결과를 정리해서 공유드립니다. 자세한 내용은 스레드를 확인해 주세요.".slice(0, 50);
  const extractedTokens = { mentions: ["1400000000000000101"], urls: [], prNumbers: ["#42"], codeRefs: [] };
  return { messageId, sender: "eden", summary, ts, channelId, threadId: channelId, extractedTokens };
}

const line = (c: string, k: string, v: unknown) => `${JSON.stringify({ c, k, v })}\n`;

describe("openThreadStateStore", () => {
  it("quarantines entries of the change log that fail their schema and a corrupt line, keeps the rest, and status lists both", async () => {
    const stateDir = tempDir("a2a-threads-");
    mkdirSync(join(stateDir, "threads"));
    writeFileSync(
      join(stateDir, "threads", "changes.ndjson"),
      line("participants", "t1", { agentIds: ["ruda", "eden"], seenAt: T0 }) +
        line("participants", "t2", { agentIds: "ruda", seenAt: T0 }) +
        "{not json\n" +
        line("route", "ruda:eden", { threadId: "t1", channelId: "c1", lastUsedAt: "yesterday" }) +
        line("observed", "c1 m9", { messageId: "m1", channelId: "c1" }) +
        line("nonsense", "k", 1) +
        line("sink", "t3", true),
    );
    const { threads, store, warnings } = await open(stateDir);
    expect(threads.participantsOf("t1")).toEqual(["ruda", "eden"]);
    expect(threads.participantsOf("t2")).toEqual([]);
    expect(threads.isSinkThread("t3")).toBe(true);
    expect(warnings).toEqual([
      expect.stringMatching(/changes\.ndjson is damaged: line\(s\) 3 .*saved data is missing/),
      expect.stringMatching(/4 thread-state entries are invalid; dropped them and kept them in /),
    ]);
    await store.close();

    const [kept] = readdirSync(join(stateDir, "quarantine"));
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
      expect.stringMatching(/^threads\/changes\.ndjson\.corrupt-/),
    ]);
    // Reopened: nothing left to report, the valid entries are still there.
    const again = await open(stateDir);
    expect(again.warnings).toEqual([]);
    expect(again.threads.participantsOf("t1")).toEqual(["ruda", "eden"]);
    await again.store.close();
  });

  it("a change whose append failed is not lost: the next save writes it with the new ones", async () => {
    const stateDir = tempDir("a2a-threads-");
    const { threads, store, warnings } = await open(stateDir);
    const append = vi.spyOn(ChangeLogFile.prototype, "append");
    append.mockRejectedValueOnce(new Error("EIO: i/o error, write"));
    threads.markSinkThread("t1");
    await expect(store.flush()).rejects.toThrow(/EIO/);
    expect(warnings).toEqual(["could not save the thread state: EIO: i/o error, write"]);
    threads.markSinkThread("t2");
    await store.flush();
    expect(savedThreadEntries(stateDir).get("sink t1")).toBe(true);
    expect(savedThreadEntries(stateDir).get("sink t2")).toBe(true);
    await store.close();
  });

  it("folds the change log into the snapshot once it passes its size, so the log stays small", async () => {
    const stateDir = tempDir("a2a-threads-");
    let now = T0;
    const { threads, store } = await open(stateDir, () => now);
    for (let n = 0; n < 3_000; n++) {
      now += 1_000;
      threads.observe(observerRecord(`c${n}`, `m${n}`, now), now);
      if (n % 100 === 99) await store.flush();
    }
    await store.flush();
    const log = readFileSync(join(stateDir, "threads", "changes.ndjson"), "utf8");
    expect(log.length).toBeLessThan(256 * 1024);
    const inSnapshot = snapshotFiles(stateDir).flatMap(
      (file) =>
        (JSON.parse(readFileSync(file, "utf8")) as { collections: { observed?: unknown[] } }).collections
          .observed ?? [],
    );
    // Folded at least once: the snapshot holds most records, the log only the latest ones.
    expect(inSnapshot.length).toBeGreaterThan(1_000);
    expect(savedThreadEntries(stateDir).size).toBe(3_000);
    await store.close();
  });

  it("a fold that fails fails no save: the changes are in the log, the failure is reported", async () => {
    const stateDir = tempDir("a2a-threads-");
    let now = T0;
    const { threads, store, warnings } = await open(stateDir, () => now);
    vi.spyOn(ChangeLogFile.prototype, "fold").mockRejectedValue(new Error("ENOSPC: no space left"));
    for (let n = 0; n < 1_500; n++) {
      now += 1_000;
      threads.observe(observerRecord(`c${n}`, `m${n}`, now), now);
      if (n % 100 === 99) await store.flush();
    }
    expect(warnings[0]).toBe("could not fold the thread-state log: ENOSPC: no space left");
    expect(savedThreadEntries(stateDir).size).toBe(1_500);
    vi.restoreAllMocks();
    await store.close();
  });

  it("a start and a stop write nothing when nothing changed: the log stays until a fold is due", async () => {
    const stateDir = tempDir("a2a-threads-");
    const first = await open(stateDir);
    for (let n = 0; n < 50; n++) first.threads.setParent(`t${n}`, "c1");
    await first.store.close();
    const files = () =>
      readdirSync(join(stateDir, "threads"))
        .sort()
        .map((name) => `${name} ${statSync(join(stateDir, "threads", name)).ino}`);
    const log = readFileSync(join(stateDir, "threads", "changes.ndjson"), "utf8");
    const before = files();
    expect(log).not.toBe("");

    const second = await open(stateDir);
    expect(parentKeys(second.threads).length).toBe(50);
    await second.store.close();
    expect(files()).toEqual(before);
    expect(readFileSync(join(stateDir, "threads", "changes.ndjson"), "utf8")).toBe(log);
  });

  it("folds once the log holds a quarter of the snapshot, not every 256 KiB, so a fold's cost per change stays flat", async () => {
    const stateDir = tempDir("a2a-threads-");
    const first = await open(stateDir);
    for (let n = 0; n < 40_000; n++)
      first.threads.setParent(`thread-${String(n).padStart(6, "0")}`, "1".repeat(19));
    await first.store.close();
    const snapshot = threadStateBytes(stateDir).state;
    expect(snapshot).toBeGreaterThan(4 * COMPACT_AT_BYTES);

    const second = await open(stateDir);
    const logAt = () => threadStateBytes(stateDir).log;
    let n = 0;
    while (logAt() < COMPACT_AT_BYTES * 1.5) {
      for (const end = n + 500; n < end; n++)
        second.threads.setParent(`thread-${String(n).padStart(6, "0")}`, "2".repeat(19));
      await second.store.flush();
    }
    // Past 256 KiB and not folded: under a quarter of the snapshot.
    expect(logAt()).toBeLessThan(snapshot / 4);
    let peak = 0;
    while (logAt() >= COMPACT_AT_BYTES) {
      peak = logAt();
      for (const end = n + 500; n < end; n++)
        second.threads.setParent(`thread-${String(n).padStart(6, "0")}`, "2".repeat(19));
      await second.store.flush();
    }
    // Folded once it passed a quarter of the snapshot (the last flush before it added < 64 KiB).
    expect(peak + 64 * 1024).toBeGreaterThan(snapshot / 4);
    await second.store.close();
    const third = await open(stateDir);
    expect(third.threads.parentOf("thread-000000")).toBe("2".repeat(19));
    expect(third.threads.parentOf("thread-039999")).toBe("1".repeat(19));
    await third.store.close();
  });

  it("what the expiry drops at start is logged when it is little, folded straight into the snapshot when it is much", async () => {
    const stateDir = tempDir("a2a-threads-");
    const first = await open(stateDir);
    for (let n = 0; n < 12_000; n++) first.threads.setParent(`t${n}`, "c1", T0 - (n < 5 ? 2 : 0) * HOUR);
    await first.store.close();
    const inodes = () => snapshotFiles(stateDir).map((file) => `${file} ${statSync(file).ino}`);
    const before = inodes();
    const logged = threadStateBytes(stateDir).log;

    // 23 h later the five older parents are past participantTTL (and cleanupMaxAgeMs): a few lines.
    const second = await open(stateDir, () => T0 + 23 * HOUR);
    await second.store.close();
    expect(parentKeys(second.threads).length).toBe(11_995);
    expect(inodes()).toEqual(before);
    expect(threadStateBytes(stateDir).log).toBeGreaterThan(logged);

    // 27 h later all of them: folded in, never logged, the log emptied.
    const append = vi.spyOn(ChangeLogFile.prototype, "append");
    const third = await open(stateDir, () => T0 + 27 * HOUR);
    expect(append.mock.calls.map(([changes]) => changes.length).filter((n) => n > 0)).toEqual([]);
    await third.store.close();
    expect(parentKeys(third.threads).length).toBe(0);
    expect(threadStateBytes(stateDir)).toEqual({ state: 0, log: 0 });
  });
});
