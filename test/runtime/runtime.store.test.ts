import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { createLowdbStore, createMemoryStore } from "../../src/durable/index.js";
import { BOTS, FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";

// createA2ARuntime({ store }): the actors live in the store given, the rest of the state (event log,
// thread state, the conversation index) in stateDir.

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const MINUTE = 60_000;
const runtime = useRuntimeHarness(T0);

describe("createA2ARuntime({ store })", () => {
  it("keeps its actors in the store given: none in the state dir, and a restart on that store resumes them", async () => {
    const dir = tempStateDir();
    const store = createMemoryStore();
    const discord = new FakeDiscord();
    const first = runtime({ stateDir: dir, discord, store });
    await first.start();
    const sent = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    if (sent.status !== "sent") throw new Error(`not sent: ${JSON.stringify(sent)}`);
    await first.idle();
    expect(existsSync(join(dir, "actors"))).toBe(false);
    expect(await first.mentions()).toEqual([
      expect.objectContaining({ id: sent.mentionId, status: "pending" }),
    ]);
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    await first.stop();

    // The same store in the same process: the mention resumes and its reminder comes at T+5.
    const second = runtime({ stateDir: dir, discord, store });
    await second.start();
    const reminders = () => discord.in(sent.threadId).filter((m) => m.content.startsWith("[리마인더"));
    await vi.advanceTimersByTimeAsync(3 * MINUTE - 1);
    await second.idle();
    expect(reminders()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    await second.idle();
    expect(reminders()).toHaveLength(1);
    expect(reminders()[0]?.content).toContain(`<@${BOTS.eden}>`);
    expect(await second.mentions()).toEqual([
      expect.objectContaining({ id: sent.mentionId, status: "reminded", attempts: 2 }),
    ]);
  });

  it("refuses a lowdb store on its own state dir, naming the lock, and can start after with the default", async () => {
    const dir = tempStateDir();
    const clash = runtime({ stateDir: dir, store: createLowdbStore({ stateDir: dir }) });
    await expect(clash.start()).rejects.toThrow(new RegExp(`${String(process.pid)}`));
    const plain = runtime({ stateDir: dir });
    await plain.start();
    await plain.stop();
  });
});
