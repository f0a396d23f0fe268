import { mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { runStatus, type StatusReport } from "../../src/cli/status.js";
import { FakeDiscord, tempStateDir, useRuntimeHarness } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);
const runtime = useRuntimeHarness(T0);

async function status(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runStatus(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err };
}

/** Writes `text` to `file` (folders made) and dates it `at`. */
function put(file: string, text: string, at: number): string {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  utimesSync(file, at / 1_000, at / 1_000);
  return resolve(file);
}

describe("a2a-statecharts status: quarantined files", () => {
  it("lists every quarantined file (anywhere *.corrupt-*, all of quarantine/) with size and time, as warnings, and exits 0", async () => {
    const dir = tempStateDir("a2a-status-q-");
    // A runtime keeps a copy of a damaged thread-state segment itself.
    put(join(dir, "threads", "journal-000001.ndjson"), '{"version":2,"parents":', T0);
    const r = runtime({ stateDir: dir, gateway: new ScriptedGateway(), discord: new FakeDiscord() });
    await r.start();
    await r.stop();
    const quarantine = join(dir, "quarantine");
    const [threadsCopy] = readdirSync(quarantine).filter((name) => name.startsWith("threads-journal-"));
    if (threadsCopy === undefined)
      throw new Error(`the runtime kept no copy of the segment: ${readdirSync(quarantine)}`);
    const runtimeMade = put(join(quarantine, threadsCopy), '{"version":2,"parents":', T0 - 4_000);
    const shardCopy = put(
      join(dir, "actors", "shard-03.json.corrupt-2026-11-22T08-00-00-000Z"),
      "{",
      T0 - 3_000,
    );
    const records = put(
      join(dir, "quarantine", "records-2026-11-22T08-00-00-000Z.json"),
      "x".repeat(2_048),
      T0 - 2_000,
    );
    const threadShard = put(
      join(dir, "quarantine", "threads-2026-11-22T08-00-00-000Z.json"),
      "{}",
      T0 - 1_000,
    );
    const journal = put(join(dir, "quarantine", "journal-7.ndjson"), "{}\n{", T0);

    const text = await status("--state-dir", dir);
    expect(text.code).toBe(0);
    const listed = [runtimeMade, shardCopy, records, threadShard, journal];
    expect(text.err).toEqual([
      ...listed.map((file) =>
        expect.stringMatching(new RegExp(`^warning: ${escape(file)}: quarantined \\(`)),
      ),
      `warning: 5 quarantined files in ${resolve(dir)}: damaged or unusable data the runtime set aside, kept for inspection (listed above)`,
    ]);
    expect(text.err[2]).toContain("quarantined (2.0 KiB, set aside 2026-11-22T08:59:58.000Z)");
    expect(text.err[4]).toContain("quarantined (4 B, set aside 2026-11-22T09:00:00.000Z)");
    expect(text.out.at(-1)).toMatch(/; 5 warnings · state dir /);

    const json = JSON.parse((await status("--json", "-d", dir)).out.join("\n")) as StatusReport;
    expect(json.quarantined).toEqual([
      { file: runtimeMade, bytes: 23, modifiedAt: T0 - 4_000, modifiedIso: "2026-11-22T08:59:56.000Z" },
      { file: shardCopy, bytes: 1, modifiedAt: T0 - 3_000, modifiedIso: "2026-11-22T08:59:57.000Z" },
      { file: records, bytes: 2_048, modifiedAt: T0 - 2_000, modifiedIso: "2026-11-22T08:59:58.000Z" },
      { file: threadShard, bytes: 2, modifiedAt: T0 - 1_000, modifiedIso: "2026-11-22T08:59:59.000Z" },
      { file: journal, bytes: 4, modifiedAt: T0, modifiedIso: "2026-11-22T09:00:00.000Z" },
    ]);
    expect(json.warnings.map((w) => w.file)).toEqual(listed);
  });

  it("an ordinary state dir has nothing quarantined and no warning", async () => {
    const dir = tempStateDir("a2a-status-q-");
    const r = runtime({ stateDir: dir, gateway: new ScriptedGateway(), discord: new FakeDiscord() });
    await r.start();
    await r.stop();
    const { code, err } = await status("-d", dir);
    expect(code).toBe(0);
    expect(err).toEqual([]);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
