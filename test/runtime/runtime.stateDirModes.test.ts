import { chmodSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

/** Every file and folder (`name/`) under `dir` (relative path) with its permission bits. */
function modes(dir: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const name of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const stats = statSync(join(dir, name));
    if (stats.isFile() || stats.isDirectory())
      found.set(stats.isDirectory() ? `${name}/` : name, stats.mode & 0o777);
  }
  return found;
}

describe("createA2ARuntime: the state dir is its owner's alone", () => {
  it("after a start, a tracked send and a stop: the dir is 0700, every file the runtime wrote 0600, leftover temp files gone", async () => {
    const dir = tempStateDir();
    chmodSync(dir, 0o755); // as a user's mkdir leaves it
    writeFileSync(join(dir, "coordination-events.ndjson.tmp-4242"), "{"); // a write killed before its rename
    const discord = new FakeDiscord();
    const r = runtime({ stateDir: dir, discord });
    await r.start();
    const sent = await r.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    expect(sent.status).toBe("sent");
    await r.idle();
    await r.stop();

    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = modes(dir);
    for (const name of [".lock", "threads/journal-000001.ndjson", "coordination-events.ndjson"]) {
      expect(files.has(name), `${name} in ${[...files.keys()].join(", ")}`).toBe(true);
    }
    expect([...files.keys()].some((name) => /^actors\/shard-\d+\.ndjson$/.test(name))).toBe(true);
    expect([...files.keys()].filter((name) => name.includes(".tmp-"))).toEqual([]);
    const open = [...files]
      .filter(([name, mode]) => mode !== (name.endsWith("/") ? 0o700 : 0o600))
      .map(([name, mode]) => `${name} ${mode.toString(8)}`);
    expect(open).toEqual([]);
  });
});
