import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAN_LIST_OPEN_FILES, openFilesUnder } from "../support/openFiles.js";
import { FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

describe("createA2ARuntime: a start() that fails part way", () => {
  it("closes what it had opened and releases the lock: the same runtime starts once the cause is gone", async () => {
    const dir = tempStateDir();
    const first = runtime({ stateDir: dir, discord: new FakeDiscord() });
    await first.start();
    await first.discordSend({ fromAgentId: "ruda", targetAgentId: "eden", message: "코드 리뷰 해줘" });
    await first.stop();
    // The thread state's folder replaced by a file: opening it fails after the store and the logs opened.
    rmSync(join(dir, "threads"), { recursive: true });
    writeFileSync(join(dir, "threads"), "not a directory");

    const r = runtime({ stateDir: dir, discord: new FakeDiscord() });
    await expect(r.start()).rejects.toThrow(/threads/);
    if (CAN_LIST_OPEN_FILES) expect(openFilesUnder(dir)).toEqual([]);

    rmSync(join(dir, "threads"));
    await r.start();
    expect(await r.mentions()).toHaveLength(1);
    await r.stop();
  });
});
