import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Change, ChangeLogFile, entriesOf } from "../../src/persistence/index.js";
import { SHARD_COUNT, shardFile, shardOf } from "../../src/persistence/changeLogShards.js";
import { tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);

async function openLog(dir: string) {
  const warnings: string[] = [];
  const opened = await ChangeLogFile.open({ dir, now: () => T0, onWarning: (m) => warnings.push(m) });
  return { ...opened, warnings };
}

/** A model of the state: `"<c> <k>"` → value, changes applied in order. */
function apply(model: Map<string, unknown>, changes: readonly Change[]): Change[] {
  for (const { c, k, v } of changes)
    if (v === undefined) model.delete(`${c} ${k}`);
    else model.set(`${c} ${k}`, v);
  return [...model].map(([key, v]) => {
    const space = key.indexOf(" ");
    return { c: key.slice(0, space), k: key.slice(space + 1), v };
  });
}

const sorted = (entries: Change[]) =>
  entries.map(({ c, k, v }) => JSON.stringify([c, k, v])).sort((a, b) => a.localeCompare(b));

/** Opens the log afresh and checks it reads as `model`. */
async function expectReopensAs(dir: string, model: Map<string, unknown>): Promise<void> {
  const opened = await openLog(dir);
  expect(sorted(entriesOf(opened.state))).toEqual(sorted(apply(model, [])));
  expect(opened.warnings).toEqual([]);
  await opened.log.close();
}

/** Each shard file's inode: a durable write renames a new file into place, so a changed inode is a write. */
async function inodes(dir: string): Promise<Map<string, number>> {
  const names = (await readdir(dir)).filter((name) => /^state-\d{2}\.json$/.test(name));
  return new Map(
    await Promise.all(names.map(async (name) => [name, (await stat(join(dir, name))).ino] as const)),
  );
}

/** `count` keys, at least one in every shard. */
const keys = (count: number) => Array.from({ length: count }, (_, n) => `thread-${n}`);

/** A log in a new folder, compacted with `count` entries of collection `c`, and the model of its state. */
async function seeded(count: number, c: string, v: unknown) {
  const dir = join(await dirs.make(), "threads");
  const model = new Map<string, unknown>();
  const { log } = await openLog(dir);
  await log.compact(
    apply(
      model,
      keys(count).map((k) => ({ c, k, v })),
    ),
  );
  return { dir, model, log };
}

describe("ChangeLogFile shards", () => {
  it("a fold rewrites only the shards its log touched", async () => {
    const { dir, model, log } = await seeded(2_000, "parent", { at: 1 });
    const first = { log };
    const before = await inodes(dir);
    expect(before.size).toBe(SHARD_COUNT);

    const touched = ["thread-7", "thread-1999"];
    const changes: Change[] = [
      { c: "parent", k: touched[0] ?? "", v: { at: 2 } },
      { c: "parent", k: touched[1] ?? "" },
    ];
    await first.log.append(changes);
    await first.log.fold(apply(model, changes));
    const after = await inodes(dir);
    const rewritten = [...after].filter(([name, ino]) => before.get(name) !== ino).map(([name]) => name);
    expect(rewritten.sort()).toEqual([...new Set(touched.map((k) => shardFile(shardOf(k))))].sort());
    expect(first.log.logBytes).toBe(0);
    await first.log.close();
    await expectReopensAs(dir, model);
  });

  it("spreads many entries evenly: no shard file holds much more than its share", async () => {
    const dir = join(await dirs.make(), "threads");
    const opened = await openLog(dir);
    const entries = keys(50_000).map((k) => ({
      c: "parent",
      k: `14${k}`,
      v: { channelId: "1".repeat(19), at: T0 },
    }));
    await opened.log.compact(entries);
    await opened.log.close();
    const sizes = await Promise.all(
      Array.from({ length: SHARD_COUNT }, async (_, n) => (await stat(join(dir, shardFile(n)))).size),
    );
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(opened.log.stateBytes).toBe(total);
    // Within 25% of an even share, so the largest write is ~1/64 of the state, not the state.
    expect(Math.max(...sizes)).toBeLessThan((total / SHARD_COUNT) * 1.25);
  });

  it("a fold reads a large state in pieces, letting the event loop run between them", async () => {
    const { dir, model, log } = await seeded(30_000, "a", 0);
    await log.append([{ c: "a", k: "thread-1", v: 1 }]);
    let turned = false;
    let turnedBeforeTheEnd = false;
    function* lazy() {
      yield* apply(model, [{ c: "a", k: "thread-1", v: 1 }]);
      turnedBeforeTheEnd = turned;
    }
    setImmediate(() => (turned = true));
    await log.fold(lazy());
    expect(turnedBeforeTheEnd).toBe(true);
    await log.close();
    await expectReopensAs(dir, model);
  });

  it("a fold that fails between shard writes keeps the log; a reopen gives the same state, and a later fold lands", async () => {
    const { dir, model, log } = await seeded(500, "a", 0);
    const first = { log };
    const changes: Change[] = keys(500).map((k) => ({ c: "a", k, v: 1 }));
    await first.log.append(changes);
    const logBytes = first.log.logBytes;
    // One shard cannot be written (its temp file's name is taken by a folder): the fold stops there.
    const blocked = join(dir, `${shardFile(shardOf("thread-3"))}.tmp-${process.pid}`);
    await mkdir(blocked);
    await expect(first.log.fold(apply(model, changes))).rejects.toThrow();
    expect(first.log.logBytes).toBe(logBytes);
    expect((await stat(join(dir, "changes.ndjson"))).size).toBe(logBytes);
    await first.log.close();
    await rm(blocked, { recursive: true });
    await expectReopensAs(dir, model);

    const second = await openLog(dir);
    await second.log.fold(entriesOf(second.state));
    expect(second.log.logBytes).toBe(0);
    await second.log.close();
    await expectReopensAs(dir, model);
  });

  it("reopening after a fold and after appends gives the same state", async () => {
    const dir = join(await dirs.make(), "threads");
    const model = new Map<string, unknown>();
    let { log } = await openLog(dir);
    for (let round = 0; round < 4; round++) {
      const changes: Change[] = keys(300).map((k, n) =>
        (n + round) % 5 === 0 ? { c: "b", k } : { c: n % 2 === 0 ? "a" : "b", k, v: { round } },
      );
      await log.append(changes);
      apply(model, changes);
      if (round % 2 === 1) await log.fold(apply(model, []));
      await log.close();
      const reopened = await openLog(dir);
      expect(sorted(entriesOf(reopened.state))).toEqual(sorted(apply(model, [])));
      expect(reopened.warnings).toEqual([]);
      log = reopened.log;
    }
    await log.close();
  });

  it("a shard that is not a saved state is moved aside and reported; the other shards are used", async () => {
    const dir = join(await dirs.make(), "threads");
    const first = await openLog(dir);
    await first.log.compact(keys(300).map((k) => ({ c: "a", k, v: 1 })));
    await first.log.close();
    const broken = join(dir, shardFile(shardOf("thread-0")));
    await writeFile(broken, '{"version":2,"collections":{"a":[["thread-0",1]');
    const opened = await openLog(dir);
    expect(opened.warnings).toEqual([
      expect.stringMatching(
        new RegExp(`${shardFile(shardOf("thread-0"))} is not a saved state.*moved it to`),
      ),
    ]);
    expect(opened.state.get("a")?.has("thread-0")).toBe(false);
    expect(opened.state.get("a")?.size).toBeGreaterThan(250);
    expect((await readdir(dir)).some((name) => name.includes(".json.corrupt-"))).toBe(true);
    expect(await readFile(join(dir, "changes.ndjson"), "utf8")).toBe("");
    await opened.log.close();
  });
});
