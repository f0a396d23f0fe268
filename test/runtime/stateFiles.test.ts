// openStateDir on its own: the state directory's lock, its event log and the routes' conversations fed
// from the bus, and that the lock is released on every way out (a clean close, a close whose file fails, a
// failed open).
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquireStateDirLock, StateDirLockedError } from "../../src/persistence/index.js";
import { EVENT_LOG_FILE } from "../../src/runtime/EventLog.js";
import { openStateDir } from "../../src/runtime/stateFiles.js";
import { THREAD_STATE_DIR } from "../../src/runtime/threadStatePersistence.js";
import { ThreadState } from "../../src/runtime/ThreadState.js";
import { type A2AEvent, EventBus, parseConfig } from "../../src/policies/index.js";
import { runtimeConfig, tempStateDir } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const config = parseConfig(runtimeConfig);

function open(stateDir: string, warnings: string[] = []) {
  const bus = new EventBus();
  const threads = new ThreadState(
    { ...config.discord.collaboration, cleanupMaxAgeMs: config.discord.a2aRetry.cleanupMaxAgeMs },
    () => T0,
  );
  const opening = openStateDir({ stateDir, now: () => T0, warn: (m) => warnings.push(m), threads, bus });
  return { bus, threads, opening };
}

const sendEvent = (routeKey: string, conversationId: string): A2AEvent => ({
  type: "a2a.send",
  ts: T0,
  routeKey,
  conversationId,
  runId: "run-1",
  data: { targetSessionKey: "agent:eden:main", message: "안녕", messageIntent: "question" },
});

/** Whether the directory's lock is free: taken and released again at once. */
async function lockIsFree(stateDir: string): Promise<boolean> {
  const lock = await acquireStateDirLock(stateDir).catch(() => undefined);
  await lock?.release();
  return lock !== undefined;
}

const loggedTypes = (stateDir: string) =>
  readFileSync(join(stateDir, EVENT_LOG_FILE), "utf8")
    .trim()
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => (JSON.parse(line) as A2AEvent).type);

describe("openStateDir", () => {
  it("holds the directory's lock: a second open in this process is refused naming its pid", async () => {
    const dir = tempStateDir();
    const session = await open(dir).opening;
    try {
      const second = open(dir).opening;
      await expect(second).rejects.toBeInstanceOf(StateDirLockedError);
      await expect(second).rejects.toThrow(`process ${process.pid} (this process`);
      expect(await lockIsFree(dir)).toBe(false);
    } finally {
      await session.close();
    }
    expect(await lockIsFree(dir)).toBe(true);
  });

  it("logs every bus event and keeps each route's conversation, until it is closed", async () => {
    const dir = tempStateDir();
    const { bus, threads, opening } = open(dir);
    const session = await opening;
    bus.emit(sendEvent("deploys", "conv-1"));
    bus.emit({
      type: "a2a.collaborate.requested",
      ts: T0,
      data: { fromAgentId: "ruda", toAgentId: "eden" },
    } as A2AEvent);
    expect(threads.conversationOf("deploys")).toBe("conv-1");
    await session.close();
    expect(loggedTypes(dir)).toEqual(["a2a.send", "a2a.collaborate.requested"]);

    // Closed: the bus reaches neither the log nor the thread state.
    bus.emit(sendEvent("later", "conv-2"));
    expect(threads.conversationOf("later")).toBeUndefined();
    const again = open(dir);
    const reopened = await again.opening;
    try {
      expect(again.threads.conversationOf("deploys")).toBe("conv-1");
      expect(again.threads.conversationOf("later")).toBeUndefined();
    } finally {
      await reopened.close();
    }
    expect(loggedTypes(dir)).toEqual(["a2a.send", "a2a.collaborate.requested"]);
  });

  it("close() releases the lock and closes the other files even when one file's close fails", async () => {
    const dir = tempStateDir();
    const { bus, threads, opening } = open(dir);
    const session = await opening;
    // The thread state can no longer be written: its folder is now a file, and changes wait.
    await rm(join(dir, THREAD_STATE_DIR), { recursive: true });
    await writeFile(join(dir, THREAD_STATE_DIR), "");
    bus.emit(sendEvent("deploys", "conv-1"));
    threads.markSinkThread("t1");
    await expect(session.close()).rejects.toThrow(/could not write .*threads.*(ENOTDIR|ENOENT)/);
    expect(await lockIsFree(dir)).toBe(true);
    expect(loggedTypes(dir)).toEqual(["a2a.send"]);
  });

  it("a failure while opening (the thread state's folder is a file) releases the lock", async () => {
    const dir = tempStateDir();
    await writeFile(join(dir, THREAD_STATE_DIR), "");
    const warnings: string[] = [];
    await expect(open(dir, warnings).opening).rejects.toThrow();
    expect(await lockIsFree(dir)).toBe(true);
    // What opened before it (the event log) closed cleanly.
    expect(warnings.filter((w) => w.startsWith("closing after a failed start"))).toEqual([]);
  });
});
