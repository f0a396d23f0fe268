import { appendFile, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChangeLogFile, entriesOf } from "../../src/persistence/index.js";
import { shardFile, shardOf } from "../../src/persistence/changeLogShards.js";
import { tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(async () => {
  vi.restoreAllMocks();
  await dirs.cleanup();
});

const T0 = Date.UTC(2026, 10, 22, 9, 0, 0);

async function openLog(dir: string) {
  const warnings: string[] = [];
  const opened = await ChangeLogFile.open({ dir, now: () => T0, onWarning: (m) => warnings.push(m) });
  return { ...opened, warnings };
}

const line = (c: string, k: string, v?: unknown) =>
  `${JSON.stringify(v === undefined ? { c, k } : { c, k, v })}\n`;

describe("ChangeLogFile", () => {
  it("appends changes, folds them at open (a later change wins, a removal removes) and keeps the log until a fold", async () => {
    const dir = join(await dirs.make(), "threads");
    const first = await openLog(dir);
    await first.log.append([
      { c: "a", k: "1", v: { n: 1 } },
      { c: "a", k: "2", v: { n: 2 } },
    ]);
    await first.log.append([
      { c: "a", k: "1", v: { n: 10 } },
      { c: "a", k: "2" },
    ]);
    expect(first.log.logBytes).toBeGreaterThan(0);
    await first.log.close();

    const second = await openLog(dir);
    expect(entriesOf(second.state)).toEqual([{ c: "a", k: "1", v: { n: 10 } }]);
    expect(second.warnings).toEqual([]);
    // A start writes nothing: the log is folded by the next fold, not by the open.
    expect(second.log.logBytes).toBe((await stat(join(dir, "changes.ndjson"))).size);
    await second.log.fold(entriesOf(second.state));
    expect(second.log.logBytes).toBe(0);
    expect(await readFile(join(dir, "changes.ndjson"), "utf8")).toBe("");
    await second.log.close();
    const third = await openLog(dir);
    expect(entriesOf(third.state)).toEqual([{ c: "a", k: "1", v: { n: 10 } }]);
    await third.log.close();
  });

  it("ignores a torn last line (never acknowledged) without calling the log damaged", async () => {
    const dir = join(await dirs.make(), "threads");
    const first = await openLog(dir);
    await first.log.append([{ c: "a", k: "1", v: 1 }]);
    await first.log.close();
    await appendFile(join(dir, "changes.ndjson"), '{"c":"a","k":"2","v":');

    const second = await openLog(dir);
    expect(entriesOf(second.state)).toEqual([{ c: "a", k: "1", v: 1 }]);
    expect(second.warnings).toEqual([expect.stringMatching(/incomplete last line/)]);
    expect(await readdir(dir)).toEqual(["changes.ndjson"]);
    // Cut off at once: a start after this one has nothing to warn about.
    expect(await readFile(join(dir, "changes.ndjson"), "utf8")).toBe(line("a", "1", 1));
    await second.log.close();
    // The next append starts on a clean line.
    const reopened = await openLog(dir);
    expect(reopened.warnings).toEqual([]);
    await reopened.log.append([{ c: "a", k: "3", v: 3 }]);
    await reopened.log.close();
    const third = await openLog(dir);
    expect(third.warnings).toEqual([]);
    expect(entriesOf(third.state).map((e) => e.k)).toEqual(["1", "3"]);
    await third.log.close();
  });

  it("keeps the valid lines after a corrupt one, reports the damage loudly and keeps a copy of the log", async () => {
    const dir = join(await dirs.make(), "threads");
    await mkdir(dir, { recursive: true });
    const damaged = line("a", "1", 1) + "garbage}\n" + line("a", "2", 2) + '{"c":1}\n' + line("a", "3", 3);
    await writeFile(join(dir, "changes.ndjson"), damaged);

    const opened = await openLog(dir);
    expect(entriesOf(opened.state).map((e) => e.k)).toEqual(["1", "2", "3"]);
    expect(opened.warnings).toEqual([
      expect.stringMatching(/damaged: line\(s\) 2, 4 .*saved data is missing/),
    ]);
    const copy = (await readdir(dir)).find((name) => name.startsWith("changes.ndjson.corrupt-"));
    expect(copy).toBeDefined();
    expect(await readFile(join(dir, copy ?? ""), "utf8")).toBe(damaged);
    expect((await stat(join(dir, copy ?? ""))).mode & 0o777).toBe(0o600);
    await opened.log.close();
  });

  it("moves aside a snapshot that is not a saved state, and starts from the log", async () => {
    const dir = join(await dirs.make(), "threads");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "state-00.json"), '{"version":2,"collections":{"a":[["1",1]]');
    await writeFile(join(dir, "changes.ndjson"), line("a", "2", 2));
    const opened = await openLog(dir);
    expect(entriesOf(opened.state)).toEqual([{ c: "a", k: "2", v: 2 }]);
    expect(opened.warnings).toEqual([
      expect.stringMatching(/state-00\.json is not a saved state.*moved it to/),
    ]);
    expect((await readdir(dir)).some((name) => name.startsWith("state-00.json.corrupt-"))).toBe(true);
    await opened.log.close();
  });

  it("read() folds the files as they are for a reader beside the writer: damage is reported, nothing is moved or cut", async () => {
    const dir = join(await dirs.make(), "threads");
    await mkdir(dir, { recursive: true });
    const log = line("a", "2", 2) + "garbage}\n" + line("a", "3", 3) + '{"c":"a","k":"4"';
    await writeFile(join(dir, "state-00.json"), '{"version":2,"collections":{"a":[["1",1]]');
    await writeFile(join(dir, "changes.ndjson"), log);
    const warnings: string[] = [];
    const state = await ChangeLogFile.read({ dir, now: () => T0, onWarning: (m) => warnings.push(m) });
    expect(entriesOf(state)).toEqual([
      { c: "a", k: "2", v: 2 },
      { c: "a", k: "3", v: 3 },
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(/state-00\.json is not a saved state/),
      expect.stringMatching(/incomplete last line/),
      expect.stringMatching(/damaged: line\(s\) 2 are not changes$/),
    ]);
    expect((await readdir(dir)).sort()).toEqual(["changes.ndjson", "state-00.json"]);
    expect(await readFile(join(dir, "changes.ndjson"), "utf8")).toBe(log);
    // A folder that does not exist (a runtime that never saved thread state) reads as empty.
    expect(
      entriesOf(await ChangeLogFile.read({ dir: join(dir, "none"), now: () => T0, onWarning: () => {} })),
    ).toEqual([]);
  });

  it("cuts a short write back off and rejects, so no half change is ever kept; the next append lands", async () => {
    const dir = join(await dirs.make(), "threads");
    const opened = await openLog(dir);
    await opened.log.append([{ c: "a", k: "1", v: "kept" }]);
    const before = opened.log.logBytes;
    // The disk fills up halfway through the next write: half the bytes, then ENOSPC.
    const probe = await open(join(dir, "probe"), "w");
    const proto = Object.getPrototypeOf(probe) as {
      write: (...args: unknown[]) => Promise<{ bytesWritten: number }>;
    };
    await probe.close();
    const realWrite = proto.write;
    let calls = 0;
    vi.spyOn(proto, "write").mockImplementation(function (this: unknown, ...args: unknown[]) {
      calls += 1;
      const [buffer, offset, length] = args as [Buffer, number, number];
      if (calls === 1) return realWrite.call(this, buffer, offset, Math.floor(length / 2));
      return Promise.reject(Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" }));
    });
    await expect(opened.log.append([{ c: "a", k: "2", v: "x".repeat(100) }])).rejects.toThrow(/ENOSPC/);
    expect(calls).toBe(2);
    expect(opened.log.logBytes).toBe(before);
    expect((await stat(join(dir, "changes.ndjson"))).size).toBe(before);
    vi.restoreAllMocks();
    await opened.log.append([{ c: "a", k: "3", v: "after" }]);
    await opened.log.close();
    const again = await openLog(dir);
    expect(again.warnings).toEqual([]);
    expect(entriesOf(again.state).map((e) => e.k)).toEqual(["1", "3"]);
    await again.log.close();
  });

  it("keeps its folder 0700 and its files 0600, and removes temp files a crashed compaction left", async () => {
    const dir = join(await dirs.make(), "threads");
    await mkdir(dir, { recursive: true, mode: 0o755 });
    await writeFile(join(dir, "state-00.json.tmp-4242"), "half a snapsh");
    const opened = await openLog(dir);
    await opened.log.append([{ c: "a", k: "1", v: 1 }]);
    await opened.log.compact([{ c: "a", k: "1", v: 1 }]);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(["changes.ndjson", expect.stringMatching(/^state-\d{2}\.json$/)]);
    for (const name of files) expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600);
    await opened.log.close();
  });

  it("a crash between writing the snapshot and emptying the log replays the log over it harmlessly", async () => {
    const dir = join(await dirs.make(), "threads");
    await mkdir(dir, { recursive: true });
    // The fold of these very changes landed; the log was not emptied yet.
    await writeFile(
      join(dir, shardFile(shardOf("1"))),
      JSON.stringify({ version: 2, collections: { a: [["1", 1]] } }),
    );
    await writeFile(join(dir, "changes.ndjson"), line("a", "1", 1) + line("a", "2", 2) + line("a", "2"));
    const opened = await openLog(dir);
    expect(entriesOf(opened.state)).toEqual([{ c: "a", k: "1", v: 1 }]);
    expect(opened.warnings).toEqual([]);
    await opened.log.close();
  });
});
