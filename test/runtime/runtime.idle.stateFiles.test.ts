// The state directory's part of runtime.idle(): once session.idle() resolves, every event emitted before
// is in the event log, and the thread state's changes (the route's conversation among them) are saved.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChangeLogFile } from "../../src/persistence/index.js";
import { EVENT_LOG_FILE } from "../../src/runtime/EventLog.js";
import { openStateDir } from "../../src/runtime/stateFiles.js";
import { ThreadStateSaver } from "../../src/runtime/ThreadStateSaver.js";
import { THREAD_STATE_DIR } from "../../src/runtime/threadStatePersistence.js";
import { ThreadState } from "../../src/runtime/ThreadState.js";
import { EventBus, parseConfig } from "../../src/policies/index.js";
import { CHANNEL, runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const config = parseConfig(runtimeConfig);
const THREAD = "1400000000000000777";

describe("openStateDir(...).idle()", () => {
  it("resolves once the event log and the thread state have written what came before", async () => {
    const stateDir = tempStateDir();
    const bus = new EventBus();
    const threads = new ThreadState(
      { ...config.discord.collaboration, cleanupMaxAgeMs: config.discord.a2aRetry.cleanupMaxAgeMs },
      () => T0,
    );
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
      const saved = await ChangeLogFile.read({
        dir: join(stateDir, THREAD_STATE_DIR),
        now: () => T0,
        onWarning: () => {},
      });
      expect(saved.get("parent")?.has(THREAD)).toBe(true);
      expect(saved.get("conversation")?.get("agent:ruda:main:agent:eden:main")).toMatchObject({
        conversationId: "conv-1",
      });
    } finally {
      await session.close();
    }
  });
});

describe("ThreadStateSaver.idle()", () => {
  it("waits for a change noted in the same tick, whose write has not started yet", async () => {
    const written: string[] = [];
    const saver = new ThreadStateSaver({
      write: async () => {
        await new Promise<void>((resolve) => setImmediate(resolve));
        written.push("write");
      },
      onError: () => {},
    });
    saver.change();
    await saver.idle();
    expect(written).toEqual(["write"]);
    await saver.stop();
  });
});
