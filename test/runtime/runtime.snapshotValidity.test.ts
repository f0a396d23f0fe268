import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LowdbSnapshotStore } from "../../src/persistence/index.js";
import { MACHINE_VERSIONS } from "../../src/runtime/index.js";
import { FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { textLogger } from "../../src/runtime/logger.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

/** Rewrites one stored record's snapshot state value, as a hand edit or a bad migration would leave it. */
async function setStateValue(dir: string, id: string, value: unknown): Promise<void> {
  const store = await LowdbSnapshotStore.open({
    dir,
    now: () => T0,
    machineVersions: { ...MACHINE_VERSIONS },
    onWarning: () => undefined,
  });
  try {
    const record = await store.get(id);
    if (record === undefined) throw new Error(`no record ${id}`);
    await store.put({ ...record, snapshot: { ...(record.snapshot as object), value } });
  } finally {
    await store.close();
  }
}

describe("createA2ARuntime: a stored snapshot its machine cannot restore", () => {
  it("is quarantined at start with a warning; the runtime starts and mentions() works", async () => {
    const dir = tempStateDir();
    const discord = new FakeDiscord();
    const first = runtime({ stateDir: dir, discord });
    await first.start();
    const kept = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "리뷰 부탁",
    });
    const broken = await first.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "seum",
      message: "확인 부탁",
    });
    if (kept.status !== "sent" || broken.status !== "sent") throw new Error("both sends should be sent");
    await first.stop();
    await setStateValue(dir, broken.mentionId, "noSuchState");

    const warnings: string[] = [];
    const again = runtime({ stateDir: dir, discord, logger: textLogger((w) => warnings.push(w)) });
    await again.start();
    expect(warnings.join("\n")).toContain(`record ${JSON.stringify(broken.mentionId)}`);
    expect(warnings.join("\n")).toContain("noSuchState");
    const mentions = await again.mentions();
    expect(mentions.map((m) => m.id)).toEqual([kept.mentionId]);
    const [quarantine] = readdirSync(join(dir, "quarantine")).filter((n) => n.startsWith("records-"));
    const kept2 = JSON.parse(readFileSync(join(dir, "quarantine", quarantine ?? ""), "utf8")) as {
      records: Array<{ key: string; problem: string }>;
    };
    expect(kept2.records).toEqual([
      expect.objectContaining({ key: broken.mentionId, problem: expect.stringContaining("noSuchState") }),
    ]);
  });
});
