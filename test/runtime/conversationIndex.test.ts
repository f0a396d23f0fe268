import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CONVERSATION_INDEX_FILE,
  ConversationIndex,
  type ConversationIndexFile,
  type ConversationIndexOptions,
} from "../../src/runtime/ConversationIndex.js";
import { EVENT_LOG_FILE, EventLog } from "../../src/runtime/EventLog.js";
import { scanConversationId } from "../../src/runtime/scanConversationId.js";
import { type A2AEvent, EventBus, InvalidInputError } from "../../src/policies/index.js";

const TS = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const NOW = TS + 86_400_000;
const ROUTE = "agent:main:main:agent:seum:main";
const OTHER = "agent:main:main:agent:worker-1:main";

function send(
  routeKey: string | undefined,
  conversationId: string | undefined,
  ts: number,
  runId = "run-1",
): A2AEvent {
  return {
    type: "a2a.send",
    ts,
    ...(routeKey === undefined ? {} : { routeKey }),
    ...(conversationId === undefined ? {} : { conversationId }),
    runId,
    data: { targetSessionKey: "agent:seum:main", message: "hello", messageIntent: "question" },
  };
}

function response(routeKey: string, conversationId: string, ts: number): A2AEvent {
  return {
    type: "a2a.response",
    ts,
    routeKey,
    conversationId,
    data: { turn: 0, messageIntent: "question", effectiveTurns: 1 },
  };
}

function complete(routeKey: string, conversationId: string, ts: number, runId = "run-1"): A2AEvent {
  return {
    type: "a2a.complete",
    ts,
    routeKey,
    conversationId,
    runId,
    data: {
      retryAttempts: 0,
      messageIntent: "question",
      configuredMaxTurns: 5,
      effectiveTurns: 1,
      actualTurns: 1,
      earlyTermination: false,
      announced: false,
      announceSkipped: true,
    },
  };
}

function collaborate(ts: number): A2AEvent {
  return { type: "a2a.collaborate.requested", ts, data: { fromAgentId: "main", toAgentId: "seum" } };
}

let dir: string;
let warnings: string[];
const onWarning = (message: string) => warnings.push(message);
const indexFile = () => join(dir, CONVERSATION_INDEX_FILE);
const logFile = () => join(dir, EVENT_LOG_FILE);
const openIndex = (options: Partial<ConversationIndexOptions> = {}) =>
  ConversationIndex.open({ dir, now: () => NOW, onWarning, ...options });

async function readIndexFile(): Promise<ConversationIndexFile> {
  return JSON.parse(await readFile(indexFile(), "utf8")) as ConversationIndexFile;
}

async function exists(file: string): Promise<boolean> {
  return readFile(file).then(
    () => true,
    () => false,
  );
}

const ndjson = (lines: Array<A2AEvent | string>) =>
  lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n") + "\n";

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "a2a-index-"));
  warnings = [];
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("ConversationIndex as the writer", () => {
  it("adds an entry to the index file when an a2a.send arrives", async () => {
    const index = await openIndex();
    expect(index.observe(send(ROUTE, "conv-1", TS, "run-9"))).toBe(true);
    await index.flush();

    expect(await readIndexFile()).toEqual({
      version: 1,
      updatedAt: NOW,
      entries: {
        [ROUTE]: { conversationId: "conv-1", timestamp: TS, lastEventType: "a2a.send", runId: "run-9" },
      },
    });
    await index.close();
  });

  it("overwrites a route's entry with a newer event", async () => {
    const index = await openIndex();
    index.observe(send(ROUTE, "conv-1", TS));
    expect(index.observe(response(ROUTE, "conv-2", TS + 1000))).toBe(true);
    await index.flush();

    expect(index.get(ROUTE)).toBe("conv-2");
    expect((await readIndexFile()).entries[ROUTE]).toEqual({
      conversationId: "conv-2",
      timestamp: TS + 1000,
      lastEventType: "a2a.response",
    });
    await index.close();
  });

  it("ignores an event older than the route's entry (by timestamp)", async () => {
    const index = await openIndex();
    index.observe(complete(ROUTE, "conv-new", TS + 5000, "run-new"));
    await index.flush();
    const before = await readFile(indexFile(), "utf8");

    expect(index.observe(send(ROUTE, "conv-old", TS, "run-old"))).toBe(false);
    await index.flush();
    expect(index.get(ROUTE)).toBe("conv-new");
    expect(await readFile(indexFile(), "utf8")).toBe(before);
    await index.close();
  });

  it("an event with the same timestamp replaces the entry (only an older one is ignored)", async () => {
    const index = await openIndex();
    index.observe(send(ROUTE, "conv-1", TS));
    expect(index.observe(complete(ROUTE, "conv-1b", TS))).toBe(true);
    expect(index.getEntry(ROUTE)?.lastEventType).toBe("a2a.complete");
    await index.close();
  });

  it("serialises 10 concurrent events without corrupting the file", async () => {
    const index = await openIndex();
    const bus = new EventBus();
    index.attach(bus);
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        for (let tick = 0; tick < i; tick += 1) await Promise.resolve();
        bus.emit(send(`route-${i}`, `conv-${i}`, TS + i));
        if (i % 3 === 0) await index.flush();
      }),
    );
    await index.flush();

    const file = await readIndexFile();
    expect(Object.keys(file.entries).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `route-${i}`).sort(),
    );
    for (let i = 0; i < 10; i += 1) expect(file.entries[`route-${i}`]?.conversationId).toBe(`conv-${i}`);
    expect(await readdir(dir)).toEqual([CONVERSATION_INDEX_FILE]); // no temp file left behind
    await index.close();
  });

  it("starts empty when there is no index file, and writes nothing until something changes", async () => {
    const index = await openIndex();
    expect(index.size).toBe(0);
    expect(index.get(ROUTE)).toBeUndefined();
    await index.close();
    expect(await exists(indexFile())).toBe(false);
    expect(warnings).toEqual([]);
  });

  it("a crash mid-write leaves the previous index intact (temp file, then rename)", async () => {
    const first = await openIndex();
    first.observe(send(ROUTE, "conv-1", TS));
    await first.close();
    // A crash after writing part of the temp file and before the rename.
    await writeFile(`${indexFile()}.tmp-${process.pid}`, '{"version":1,"entries":{"agent:main');

    const second = await openIndex();
    expect(second.get(ROUTE)).toBe("conv-1");
    second.observe(send(OTHER, "conv-2", TS + 1));
    await second.close();
    expect(Object.keys((await readIndexFile()).entries).sort()).toEqual([ROUTE, OTHER].sort());
    expect(await exists(`${indexFile()}.tmp-${process.pid}`)).toBe(false);
    expect(warnings).toEqual([]);
  });
});

describe("ConversationIndex as the reader", () => {
  it("returns the conversationId of a known routeKey from the persisted index", async () => {
    await writeFile(
      indexFile(),
      JSON.stringify({
        version: 1,
        updatedAt: TS,
        entries: { [ROUTE]: { conversationId: "conv-abc123", timestamp: TS, lastEventType: "a2a.complete" } },
      }),
    );
    const index = await openIndex();
    expect(index.get(ROUTE)).toBe("conv-abc123");
    await index.close();
  });

  it("returns undefined for an unknown routeKey", async () => {
    const index = await openIndex();
    index.observe(send(ROUTE, "conv-1", TS));
    expect(index.get("agent:main:main:agent:nobody:main")).toBeUndefined();
    expect(index.get("")).toBeUndefined();
    await index.close();
  });

  it("returns undefined without an error when there is no index file", async () => {
    const index = await openIndex({ rebuildFromLog: true });
    expect(index.get(ROUTE)).toBeUndefined();
    await index.close();
    expect(warnings).toEqual([]);
  });
});

describe("ConversationIndex", () => {
  it("keeps entries across a reopen", async () => {
    const first = await openIndex();
    first.observe(send(ROUTE, "conv-1", TS, "run-1"));
    first.observe(response(OTHER, "conv-2", TS + 1));
    await first.close();

    const second = await openIndex();
    expect(second.size).toBe(2);
    expect(second.getEntry(ROUTE)).toEqual({
      conversationId: "conv-1",
      timestamp: TS,
      lastEventType: "a2a.send",
      runId: "run-1",
    });
    expect(second.get(OTHER)).toBe("conv-2");
    // The reopened index still ignores older events.
    expect(second.observe(send(ROUTE, "conv-0", TS - 1))).toBe(false);
    await second.close();
  });

  it("is bounded: with maxRoutes 100, 150 routes leave the 100 newest", async () => {
    const index = await openIndex({ maxRoutes: 100 });
    // Observed in a scrambled order: eviction goes by timestamp, not by arrival.
    const order = Array.from({ length: 150 }, (_, i) => (i * 61) % 150);
    for (const i of order) index.observe(send(`route-${i}`, `conv-${i}`, TS + i * 1000));

    expect(index.size).toBe(100);
    for (let i = 0; i < 50; i += 1) expect(index.get(`route-${i}`)).toBeUndefined();
    for (let i = 50; i < 150; i += 1) expect(index.get(`route-${i}`)).toBe(`conv-${i}`);
    await index.close();

    const file = await readIndexFile();
    expect(Object.keys(file.entries)).toHaveLength(100);
    expect(file.entries["route-49"]).toBeUndefined();
    expect(file.entries["route-50"]).toBeDefined();
  });

  it("a route updated recently survives eviction (LRU by timestamp)", async () => {
    const index = await openIndex({ maxRoutes: 3 });
    index.observe(send("a", "conv-a", TS + 1));
    index.observe(send("b", "conv-b", TS + 2));
    index.observe(send("c", "conv-c", TS + 3));
    index.observe(response("a", "conv-a2", TS + 4)); // a is now the newest
    index.observe(send("d", "conv-d", TS + 5)); // evicts b
    expect(index.get("a")).toBe("conv-a2");
    expect(index.get("b")).toBeUndefined();
    expect(index.get("c")).toBe("conv-c");
    // A new route older than everything in a full index is not added.
    expect(index.observe(send("old", "conv-old", TS))).toBe(false);
    expect(index.get("old")).toBeUndefined();
    expect(index.size).toBe(3);
    await index.close();
  });

  // Speed is the benchmark's business (npm run bench); an O(n) eviction would also blow vitest's timeout here.
  it("stays bounded over 100k observes of 20k routes, keeping the newest", async () => {
    const index = await openIndex();
    for (let i = 0; i < 100_000; i += 1) {
      index.observe(complete(`route-${(i * 7919) % 20_000}`, `conv-${i}`, TS + i));
    }
    expect(index.size).toBe(10_000);
    expect(index.get(`route-${(99_999 * 7919) % 20_000}`)).toBe("conv-99999");
    await index.close();
    expect(Object.keys((await readIndexFile()).entries)).toHaveLength(10_000);
  });

  it("skips events without a routeKey or conversationId, and other types, silently", async () => {
    const index = await openIndex();
    const retry: A2AEvent = {
      type: "a2a.retry",
      ts: TS,
      routeKey: ROUTE,
      conversationId: "conv-r",
      data: {
        errorCode: "timeout",
        errorCategory: "transient",
        errorMessage: "timed out",
        attempt: 1,
        maxAttempts: 3,
        backoffMs: 1000,
        conversationId: "conv-r",
        fromAgent: "main",
        toAgent: "seum",
      },
    };
    expect(index.observe(collaborate(TS))).toBe(false);
    expect(index.observe(send(undefined, "conv-1", TS))).toBe(false);
    expect(index.observe(send(ROUTE, undefined, TS))).toBe(false);
    expect(index.observe(retry)).toBe(false);
    expect(index.size).toBe(0);
    await index.close();
    expect(await exists(indexFile())).toBe(false);
    expect(warnings).toEqual([]);
  });

  it("follows the bus through attach() until unsubscribed, and close() detaches", async () => {
    const index = await openIndex();
    const bus = new EventBus();
    const detach = index.attach(bus);
    expect(bus.listenerCount).toBe(3);
    bus.emit(send(ROUTE, "conv-1", TS));
    bus.emit(collaborate(TS + 1));
    bus.emit(complete(ROUTE, "conv-2", TS + 2));
    expect(index.get(ROUTE)).toBe("conv-2");
    detach();
    expect(bus.listenerCount).toBe(0);
    bus.emit(send(ROUTE, "conv-3", TS + 3));
    expect(index.get(ROUTE)).toBe("conv-2");

    index.attach(bus);
    await index.close();
    expect(bus.listenerCount).toBe(0);
    expect(() => index.observe(send(ROUTE, "conv-4", TS + 4))).toThrow(/is closed/);
    await index.close(); // idempotent
  });

  it("rejects a routeKey or event that is not one, naming the parameter", async () => {
    const index = await openIndex();
    expect(() => index.get(42 as unknown as string)).toThrow(InvalidInputError);
    expect(() => index.get(42 as unknown as string)).toThrow(
      /ConversationIndex\.get: routeKey must be a string/,
    );
    expect(() => index.observe(null as unknown as A2AEvent)).toThrow(/ConversationIndex\.observe: event/);
    await expect(ConversationIndex.open({ dir, maxRoutes: 0 })).rejects.toThrow(/maxRoutes/);
    await index.close();
  });

  it("skips an event with an unusable ts with a warning", async () => {
    const index = await openIndex();
    const bad = { ...send(ROUTE, "conv-1", TS), ts: Number.NaN };
    expect(index.observe(bad)).toBe(false);
    expect(index.size).toBe(0);
    expect(warnings).toEqual([
      expect.stringContaining(`skipped a2a.send for route ${ROUTE}: ts is not a finite number`),
    ]);
    await index.close();
  });

  it("handles a route named __proto__ like any other", async () => {
    const first = await openIndex();
    first.observe(send("__proto__", "conv-p", TS));
    await first.close();
    const second = await openIndex();
    expect(second.get("__proto__")).toBe("conv-p");
    expect(second.get("constructor")).toBeUndefined();
    await second.close();
  });

  it("quarantines a corrupt index file with a warning and starts empty", async () => {
    await writeFile(indexFile(), '{"version":1,"entries":{');
    const index = await openIndex();
    expect(index.size).toBe(0);
    const quarantined = `${CONVERSATION_INDEX_FILE}.corrupt-2026-01-02T00-00-00-000Z`;
    expect(await readdir(dir)).toEqual([quarantined]);
    expect(await readFile(join(dir, quarantined), "utf8")).toBe('{"version":1,"entries":{');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(indexFile());
    expect(warnings[0]).toContain(quarantined);
    await index.close();
  });

  it("never replaces an earlier quarantined copy made at the same time", async () => {
    await writeFile(indexFile(), "first");
    await (await openIndex()).close();
    await writeFile(indexFile(), "second");
    await (await openIndex()).close();
    const stamp = "2026-01-02T00-00-00-000Z";
    const first = join(dir, `${CONVERSATION_INDEX_FILE}.corrupt-${stamp}`);
    expect(await readFile(first, "utf8")).toBe("first");
    expect(await readFile(`${first}-1`, "utf8")).toBe("second");
  });

  it("quarantines an index of another version", async () => {
    await writeFile(indexFile(), JSON.stringify({ version: 2, updatedAt: TS, entries: {} }));
    const index = await openIndex();
    expect(warnings[0]).toMatch(/version is 2, expected 1/);
    expect((await readdir(dir)).some((name) => name.includes(".corrupt-"))).toBe(true);
    await index.close();
  });

  it("keeps the valid entries of a file with invalid ones, and a copy of the original", async () => {
    const original = JSON.stringify({
      version: 1,
      updatedAt: TS,
      entries: {
        [ROUTE]: { conversationId: "conv-1", timestamp: TS, lastEventType: "a2a.send" },
        [OTHER]: { conversationId: 7, timestamp: TS, lastEventType: "a2a.send" },
        third: { conversationId: "conv-3", timestamp: TS, lastEventType: "a2a.retry" },
      },
    });
    await writeFile(indexFile(), original);
    const index = await openIndex();
    expect(index.size).toBe(1);
    expect(index.get(ROUTE)).toBe("conv-1");
    expect(warnings).toEqual([
      expect.stringMatching(/skipped 2 invalid entries \(first: ".*worker-1:main"\)/),
    ]);
    const copy = (await readdir(dir)).find((name) => name.includes(".corrupt-"));
    expect(copy).toBeDefined();
    expect(await readFile(join(dir, copy ?? ""), "utf8")).toBe(original);
    await index.close();
    expect(Object.keys((await readIndexFile()).entries)).toEqual([ROUTE]);
  });

  it("reports a failed write from flush() and succeeds once the cause is gone", async () => {
    const index = await openIndex();
    await mkdir(`${indexFile()}.tmp-${process.pid}`); // the temp path is taken: open(tmp, "w") fails
    index.observe(send(ROUTE, "conv-1", TS));
    await expect(index.flush()).rejects.toThrow(
      /ConversationIndex: could not write .*a2a-conversation-index\.json/,
    );
    expect(warnings.some((warning) => warning.includes(indexFile()))).toBe(true);
    expect(index.get(ROUTE)).toBe("conv-1"); // memory stays right

    await rm(`${indexFile()}.tmp-${process.pid}`, { recursive: true });
    await index.flush();
    expect((await readIndexFile()).entries[ROUTE]?.conversationId).toBe("conv-1");
    await index.close();
  });

  describe("rebuildFromLog", () => {
    it("rebuilds from the log and its rotated files (oldest first), skipping junk with one warning", async () => {
      await writeFile(
        `${logFile()}.2`,
        ndjson([send(ROUTE, "conv-r1", TS + 1), send(OTHER, "conv-o1", TS + 2), "not json at all"]),
      );
      await writeFile(
        `${logFile()}.1`,
        ndjson([response(ROUTE, "conv-r2", TS + 10), collaborate(TS + 11), "[1,2,3]", "", "null"]),
      );
      await writeFile(
        logFile(),
        ndjson([
          complete(ROUTE, "conv-r3", TS + 20, "run-3"),
          // Arrives late but is older: ignored.
          send(OTHER, "conv-o0", TS),
          '{"type":"a2a.send","routeKey":"x","conversationId":"c","ts":"yesterday"}',
          send("agent:a:main:agent:b:main", "conv-ab", TS + 21),
        ]) + '{"type":"a2a.send","ts":', // a torn last line
      );
      await writeFile(join(dir, `${EVENT_LOG_FILE}.bak`), ndjson([send(ROUTE, "conv-bak", TS + 99)]));

      const index = await openIndex({ rebuildFromLog: true });
      expect(index.get(ROUTE)).toBe("conv-r3");
      expect(index.getEntry(ROUTE)).toEqual({
        conversationId: "conv-r3",
        timestamp: TS + 20,
        lastEventType: "a2a.complete",
        runId: "run-3",
      });
      expect(index.get(OTHER)).toBe("conv-o1");
      expect(index.get("agent:a:main:agent:b:main")).toBe("conv-ab");
      expect(index.size).toBe(3);

      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`${EVENT_LOG_FILE}.2, ${EVENT_LOG_FILE}.1, ${EVENT_LOG_FILE}`);
      expect(warnings[0]).toMatch(/skipped 5 of 12 lines .*first at coordination-events\.ndjson\.2:3/);

      // Written durably during open, before any observe.
      expect(Object.keys((await readIndexFile()).entries)).toHaveLength(3);
      await index.close();

      // Each lookup matches what the old scan of the live file finds.
      expect(await scanConversationId(logFile(), ROUTE)).toBe("conv-r3");
    });

    it("rebuilds from files an EventLog rotated", async () => {
      const log = await EventLog.open({ dir, maxBytes: 600, keep: 10 });
      for (let i = 0; i < 40; i += 1) await log.append(send(`route-${i % 4}`, `conv-${i}`, TS + i));
      await log.close();
      expect(log.stats().rotations).toBeGreaterThan(3);

      const index = await openIndex({ rebuildFromLog: true });
      for (let r = 0; r < 4; r += 1) expect(index.get(`route-${r}`)).toBe(`conv-${36 + r}`);
      expect(warnings).toEqual([]);
      await index.close();
    });

    it("happens once: an existing valid index is not rebuilt", async () => {
      await writeFile(logFile(), ndjson([send(ROUTE, "conv-log", TS + 1)]));
      const first = await openIndex();
      first.observe(send(OTHER, "conv-live", TS + 2));
      await first.close();

      const second = await openIndex({ rebuildFromLog: true });
      expect(second.get(ROUTE)).toBeUndefined();
      expect(second.get(OTHER)).toBe("conv-live");
      await second.close();
    });

    it("rebuilds after quarantining a corrupt index", async () => {
      await writeFile(indexFile(), "garbage");
      await writeFile(logFile(), ndjson([send(ROUTE, "conv-1", TS)]));
      const index = await openIndex({ rebuildFromLog: true });
      expect(index.get(ROUTE)).toBe("conv-1");
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/is corrupt/);
      expect((await readdir(dir)).sort()).toEqual(
        [
          CONVERSATION_INDEX_FILE,
          `${CONVERSATION_INDEX_FILE}.corrupt-2026-01-02T00-00-00-000Z`,
          EVENT_LOG_FILE,
        ].sort(),
      );
      await index.close();
    });

    it("keeps the bound while rebuilding", async () => {
      await writeFile(
        logFile(),
        ndjson(Array.from({ length: 50 }, (_, i) => send(`route-${i}`, `conv-${i}`, TS + i))),
      );
      const index = await openIndex({ rebuildFromLog: true, maxRoutes: 10 });
      expect(index.size).toBe(10);
      expect(index.get("route-39")).toBeUndefined();
      expect(index.get("route-40")).toBe("conv-40");
      await index.close();
    });
  });
});

describe("scanConversationId (the benchmark baseline)", () => {
  it("finds the latest conversationId of a route from the end of the log", async () => {
    await writeFile(
      logFile(),
      ndjson([
        send(ROUTE, "conv-1", TS),
        "junk",
        "null",
        complete(ROUTE, "conv-2", TS + 1),
        collaborate(TS + 2),
      ]),
    );
    expect(await scanConversationId(logFile(), ROUTE)).toBe("conv-2");
    expect(await scanConversationId(logFile(), OTHER)).toBeUndefined();
    expect(await scanConversationId(join(dir, "missing.ndjson"), ROUTE)).toBeUndefined();
  });
});
