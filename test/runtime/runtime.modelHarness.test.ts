/**
 * The model test's own parts (test/support/model/): the reference model of mentions is the oracle,
 * and the simulated crash must behave as a killed process does, or the model test proves nothing.
 */
import type * as FsPromises from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { currentGeneration, enter, kill, newGeneration } from "../support/model/generations.js";
import { VirtualClock } from "../../src/testing/index.js";
import { MentionModel } from "../support/model/mentionModel.js";
import { ProcessTimers } from "../support/model/processTimers.js";
import { drain } from "../support/runtimeFakes.js";
import { tempDir } from "../support/tempDir.js";

vi.mock("node:fs/promises", async (importOriginal) => {
  const { crashableFs } = await import("../support/model/crashableFs.js");
  return crashableFs(await importOriginal<typeof FsPromises>());
});
// Imported after the mock, as the runtime's modules are.
const fs = await import("node:fs/promises");

const settings = { responseTimeoutMs: 60_000, urgentResponseTimeoutMs: 20_000, maxAttempts: 3 };
const mention = { id: "m1", threadId: "t1", targetAgentId: "eden", text: "요청", urgent: false, at: 0 };

describe("MentionModel: the mention lifecycle", () => {
  it("reminds at each timeout from the latest delivery while attempts < maxAttempts, then escalates", () => {
    const model = new MentionModel(settings);
    model.acknowledge(mention);
    model.advanceTo(179_999);
    expect(model.mentions[0]).toMatchObject({ status: "reminded", attempts: 3, nextDueAt: 180_000 });
    model.advanceTo(180_000);
    expect(model.mentions[0]?.delivered).toEqual([
      { kind: "reminder", attempts: 1, at: 60_000 },
      { kind: "reminder", attempts: 2, at: 120_000 },
      { kind: "escalation", attempts: 3, at: 180_000 },
    ]);
    expect(model.mentions[0]).toMatchObject({ status: "escalated", nextDueAt: undefined });
  });

  it("fires an overdue mention once at start, and counts the next timeout from then", () => {
    const model = new MentionModel(settings);
    model.acknowledge({ ...mention, urgent: true });
    model.startAt(150_000);
    expect(model.mentions[0]).toMatchObject({ attempts: 2, nextDueAt: 170_000 });
    expect(model.mentions[0]?.delivered).toEqual([{ kind: "reminder", attempts: 1, at: 150_000 }]);
  });

  it("ends open mentions only for the target's own message in their thread, sent at or after the mention", () => {
    const model = new MentionModel(settings);
    model.acknowledge(mention);
    model.acknowledge({ ...mention, id: "m2", at: 5_000 });
    model.message({ threadId: "t1", authorAgentId: undefined, at: 10_000 });
    model.message({ threadId: "t2", authorAgentId: "eden", at: 10_000 });
    model.message({ threadId: "t1", authorAgentId: "ruda", at: 10_000 });
    expect(model.mentions.map((m) => m.status)).toEqual(["pending", "pending"]);
    model.message({ threadId: "t1", authorAgentId: "eden", at: 4_000 });
    expect(model.mentions.map((m) => m.status)).toEqual(["responded", "pending"]);
  });
});

describe("the simulated crash", () => {
  it("cuts a process off at its crash point: its calls never settle and the kernel closes its files", async () => {
    const file = join(tempDir("a2a-harness-"), "f");
    const generation = newGeneration();
    const handle = await enter(generation, () => fs.open(file, "w"));
    await enter(generation, () => handle.write(Buffer.from("before")));
    generation.crashAfterMutations = generation.mutations;
    let settled = false;
    void enter(generation, () => handle.write(Buffer.from("after"))).finally(() => (settled = true));
    await drain(20);
    expect(settled).toBe(false);
    expect(generation.dead).toBe(true);
    await drain(20);
    expect(handle.fd).toBe(-1);
    expect(await fs.readFile(file, "utf8")).toBe("before");
    // The test's own calls, outside any process, are the real module's.
    await expect(fs.readFile(file, "utf8")).resolves.toBe("before");
  });

  it("a short write lands half its buffer and reports it, as a full disk does", async () => {
    const file = join(tempDir("a2a-harness-"), "f");
    const generation = newGeneration();
    const handle = await enter(generation, () => fs.open(file, "a"));
    generation.shortWriteAt = generation.mutations + 1;
    const { bytesWritten } = await enter(generation, () => handle.write(Buffer.from("abcdef")));
    expect(bytesWritten).toBe(3);
    expect(await fs.readFile(file, "utf8")).toBe("abc");
    await enter(generation, () => handle.close());
    expect(generation.handles.size).toBe(0);
  });

  it("a killed process's timers never fire; a live one's fire in due order inside it", async () => {
    const clock = new VirtualClock(1_000);
    const timers = new ProcessTimers(clock);
    const [live, dead] = [newGeneration(), newGeneration()];
    const fired: string[] = [];
    timers.of(live).setTimeout(() => fired.push(`b in ${currentGeneration()?.id}`), 20);
    timers.of(live).setTimeout(() => fired.push("a"), 10);
    timers.of(dead).setTimeout(() => fired.push("dead"), 5);
    await kill(dead);
    timers.dropDead();
    expect(clock.nextDue()).toBe(1_010);
    expect(clock.moveTo(1_015)).toBe(1);
    expect(clock.moveTo(1_020)).toBe(1);
    expect(fired).toEqual(["a", `b in ${live.id}`]);
    expect(clock.nextDue()).toBeUndefined();
  });
});
