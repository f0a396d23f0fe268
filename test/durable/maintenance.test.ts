import { readStateDir } from "../../src/persistence/index.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Maintenance, type MaintenanceTask, maintenancePeriodMs } from "../../src/durable/maintenance.js";
import { GLOBAL_TIMERS } from "../../src/durable/timers.js";
import {
  BOTS,
  FakeDiscord,
  runtimeConfig,
  tempStateDir,
  useRuntimeHarness,
  waitUntil,
} from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe("maintenancePeriodMs", () => {
  it("is a quarter of the archive age, at least a minute and at most an hour", () => {
    expect(maintenancePeriodMs(0)).toBe(MINUTE);
    expect(maintenancePeriodMs(2 * MINUTE)).toBe(MINUTE);
    expect(maintenancePeriodMs(HOUR)).toBe(15 * MINUTE);
    expect(maintenancePeriodMs(24 * HOUR)).toBe(HOUR);
  });
});

describe("Maintenance", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.setSystemTime(0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function maintenance(tasks: Record<string, MaintenanceTask>, errors: Array<[string, unknown]> = []) {
    return new Maintenance({
      tasks,
      periodMs: MINUTE,
      now: Date.now,
      timers: GLOBAL_TIMERS,
      onError: (task, error) => errors.push([task, error]),
    });
  }

  it("runs its tasks in order at start() and every period until stop(), with the time of the run", async () => {
    const runs: string[] = [];
    const m = maintenance({
      a: (now) => runs.push(`a@${now}`),
      b: async (now) => {
        await Promise.resolve();
        runs.push(`b@${now}`);
      },
    });
    m.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual(["a@0", "b@0"]);
    await vi.advanceTimersByTimeAsync(MINUTE - 1);
    expect(runs).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs.slice(2)).toEqual([`a@${MINUTE}`, `b@${MINUTE}`]);
    await vi.advanceTimersByTimeAsync(MINUTE);
    expect(runs).toHaveLength(6);
    await m.stop();
    await vi.advanceTimersByTimeAsync(10 * MINUTE);
    expect(runs).toHaveLength(6);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("runs one at a time: a slow run delays the next, which comes a period after it ends", async () => {
    let starts = 0;
    let finish = (): void => {};
    const m = maintenance({
      slow: () => {
        starts += 1;
        return new Promise<void>((resolve) => (finish = resolve));
      },
    });
    m.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(starts).toBe(1);
    await vi.advanceTimersByTimeAsync(5 * MINUTE);
    expect(starts).toBe(1);
    finish();
    await vi.advanceTimersByTimeAsync(MINUTE - 1);
    expect(starts).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toBe(2);
    finish();
    await m.stop();
  });

  it("reports a failing task, still runs the others, and retries it next period", async () => {
    const errors: Array<[string, unknown]> = [];
    let failures = 1;
    const done: string[] = [];
    const m = maintenance(
      {
        flaky: () => {
          if (failures-- > 0) throw new Error("disk full");
          done.push("flaky");
        },
        steady: () => done.push("steady"),
      },
      errors,
    );
    m.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toEqual([["flaky", new Error("disk full")]]);
    expect(done).toEqual(["steady"]);
    await vi.advanceTimersByTimeAsync(MINUTE);
    expect(done).toEqual(["steady", "flaky", "steady"]);
    expect(errors).toHaveLength(1);
    await m.stop();
  });

  it("stop() waits for the run in progress, and a failure after stop() is not reported", async () => {
    const errors: Array<[string, unknown]> = [];
    let fail = (_: Error): void => {};
    const m = maintenance({ prune: () => new Promise<void>((_, reject) => (fail = reject)) }, errors);
    m.start();
    await vi.advanceTimersByTimeAsync(0);
    let stopped = false;
    const stopping = m.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    fail(new Error("the store is closed"));
    await stopping;
    expect(errors).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never keeps the process alive: its timer is unref'd", async () => {
    const unref = vi.fn();
    const m = new Maintenance({
      tasks: {},
      periodMs: MINUTE,
      now: () => 0,
      timers: { setTimeout: () => ({ unref }), clearTimeout: () => {} },
      onError: () => {},
    });
    m.start();
    await vi.advanceTimersByTimeAsync(0); // the run at start, then the timer for the next
    expect(unref).toHaveBeenCalledOnce();
  });
});

describe("the runtime's maintenance", () => {
  const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
  const runtime = useRuntimeHarness(T0);

  it("prunes the archive while running, though mentions() is never called", async () => {
    const dir = tempStateDir();
    const config = {
      ...runtimeConfig,
      discord: {
        ...runtimeConfig.discord,
        a2aRetry: { ...runtimeConfig.discord.a2aRetry, cleanupMaxAgeMs: HOUR },
      },
    };
    const r = runtime({ stateDir: dir, config, gateway: new ScriptedGateway(), discord: new FakeDiscord() });
    await r.start();
    const sent = await r.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "리뷰 부탁" });
    if (sent.status !== "sent") throw new Error(`discordSend was ${sent.status}`);
    await r.handleDiscordMessage({
      messageId: "1400000000000000777",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: BOTS.eden,
      authorIsBot: true,
      content: "봤어요",
      mentionUserIds: [],
      ts: Date.now(),
    });
    const stored = async () => (await readStateDir(dir)).actors.map((a) => `${a.record.id}:${a.location}`);
    await waitUntil(
      async () => (await stored()).includes(`${sent.mentionId}:archive`),
      "the answer archived",
    );
    // Pruned by the first run after it is an hour old: runs come every 15 minutes.
    await vi.advanceTimersByTimeAsync(HOUR);
    expect(await stored()).toEqual([`${sent.mentionId}:archive`]);
    await vi.advanceTimersByTimeAsync(15 * MINUTE);
    await waitUntil(async () => (await stored()).length === 0, "the archive pruned", 4_000);
  });
});
