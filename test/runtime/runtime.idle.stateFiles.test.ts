// The state directory's part of runtime.idle(): once session.idle() resolves, every event emitted before
// is in the event log, and the thread state's changes (the route's conversation among them) are saved.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EVENT_LOG_FILE } from "../../src/runtime/EventLog.js";
import { openStateDir } from "../../src/runtime/stateFiles.js";
import { ThreadStateStore } from "../../src/runtime/threadStatePersistence.js";
import { ThreadState } from "../../src/runtime/ThreadState.js";
import { EventBus, parseConfig } from "../../src/policies/index.js";
import { CHANNEL, runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";
import { savedThreadEntries } from "../support/threadStateFiles.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const config = parseConfig(runtimeConfig);
const THREAD = "1400000000000000777";
const limits = { ...config.discord.collaboration, cleanupMaxAgeMs: config.discord.a2aRetry.cleanupMaxAgeMs };

describe("openStateDir(...).idle()", () => {
  it("resolves once the event log and the thread state have written what came before", async () => {
    const stateDir = tempStateDir();
    const bus = new EventBus();
    const threads = new ThreadState(limits, () => T0);
    const session = await openStateDir({ stateDir, now: () => T0, warn: () => {}, threads, bus });
    try {
      bus.emit({
        type: "a2a.send",
        ts: T0,
        routeKey: "agent:ruda:main:agent:eden:main",
        conversationId: "conv-1",
        runId: "run-1",
        data: { targetSessionKey: "agent:eden:main", message: "안녕", messageIntent: "question" },
      });
      threads.setParent(THREAD, CHANNEL);

      await session.idle();

      const logged = readFileSync(join(stateDir, EVENT_LOG_FILE), "utf8").trim().split("\n");
      expect(logged.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(["a2a.send"]);
      const saved = savedThreadEntries(stateDir);
      expect(saved.has(`parent ${THREAD}`)).toBe(true);
      expect(saved.get("conversation agent:ruda:main:agent:eden:main")).toMatchObject({
        conversationId: "conv-1",
      });
    } finally {
      await session.close();
    }
  });
});

describe("ThreadStateStore.idle()", () => {
  it("waits for a change noted in the same tick, whose write has not started yet", async () => {
    const stateDir = tempStateDir();
    const threads = new ThreadState(limits, () => T0);
    const store = await ThreadStateStore.open({ stateDir, threads, now: () => T0, onWarning: () => {} });
    try {
      threads.markSinkThread(THREAD);
      await store.idle();
      expect(savedThreadEntries(stateDir).get(`sink ${THREAD}`)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
