import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Low } from "lowdb";
import { afterEach, describe, expect, it } from "vitest";
import {
  CorruptStateFileError,
  DurableJsonFile,
  StateFileReadError,
  quarantineFile,
} from "../../src/persistence/index.js";
import { tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describe("DurableJsonFile", () => {
  it("reads null for a missing file and round-trips what it wrote, leaving no temp file", async () => {
    const dir = await dirs.make();
    const file = join(dir, "state.json");
    const written: number[] = [];
    const adapter = new DurableJsonFile<{ n: number; s: string }>(file, { onWrite: (b) => written.push(b) });
    expect(await adapter.read()).toBeNull();
    await adapter.write({ n: 1, s: "é" });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ n: 1, s: "é" });
    expect(await adapter.read()).toEqual({ n: 1, s: "é" });
    expect(written).toEqual([Buffer.byteLength(JSON.stringify({ n: 1, s: "é" }))]);
    expect(await readdir(dir)).toEqual(["state.json"]);
  });

  it("serves as a lowdb adapter", async () => {
    const dir = await dirs.make();
    const file = join(dir, "db.json");
    const db = new Low(new DurableJsonFile<{ items: string[] }>(file), { items: [] });
    await db.read();
    db.data.items.push("a");
    await db.write();
    const again = new Low(new DurableJsonFile<{ items: string[] }>(file), { items: [] });
    await again.read();
    expect(again.data).toEqual({ items: ["a"] });
  });

  it("writes what the data was when write() was called, not later changes", async () => {
    const dir = await dirs.make();
    const file = join(dir, "state.json");
    const data = { n: 1 };
    const writing = new DurableJsonFile<{ n: number }>(file).write(data);
    data.n = 2;
    await writing;
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ n: 1 });
  });

  it.each([
    ["a truncated file", '{"version":1,"rec', /not valid JSON/],
    ["an empty file", "", /empty/],
  ])("reports %s as CorruptStateFileError naming the file", async (_name, text, reason) => {
    const dir = await dirs.make();
    const file = join(dir, "state.json");
    await writeFile(file, text);
    const error = await new DurableJsonFile(file).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptStateFileError);
    expect(error).toMatchObject({ file });
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(reason);
  });

  it("reports JSON of the wrong shape as corrupt when a parse check rejects it", async () => {
    const dir = await dirs.make();
    const file = join(dir, "state.json");
    await writeFile(file, "[1,2]");
    const adapter = new DurableJsonFile<{ ok: true }>(file, {
      parse: (json) => {
        if (Array.isArray(json)) throw new Error("expected an object");
        return { ok: true };
      },
    });
    await expect(adapter.read()).rejects.toThrow(`corrupt state file ${file}: expected an object`);
  });

  it("reports a file it cannot read (a directory in its place) as StateFileReadError naming it", async () => {
    const dir = await dirs.make();
    const file = join(dir, "state.json");
    await mkdir(file);
    const error = await new DurableJsonFile(file).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateFileReadError);
    expect((error as Error).message).toContain(file);
  });

  it("removes its temp file when the rename fails", async () => {
    const dir = await dirs.make();
    const file = join(dir, "state.json");
    await mkdir(file);
    await writeFile(join(file, "inside"), "x"); // a non-empty directory cannot be replaced by rename
    await expect(new DurableJsonFile(file).write({ a: 1 })).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(["state.json"]);
  });
});

describe("quarantineFile", () => {
  it("renames to <file>.corrupt-<ISO time with : and . replaced> and never replaces an earlier copy", async () => {
    const dir = await dirs.make();
    const file = join(dir, "shard-01.json");
    const now = Date.UTC(2024, 4, 1, 12, 30, 0, 5);
    await writeFile(file, "first");
    const first = await quarantineFile(file, now);
    expect(first).toBe(`${file}.corrupt-2024-05-01T12-30-00-005Z`);
    await writeFile(file, "second");
    const second = await quarantineFile(file, now);
    expect(second).toBe(`${first}-1`);
    expect(await readFile(first, "utf8")).toBe("first");
    expect(await readFile(second, "utf8")).toBe("second");
    expect((await readdir(dir)).sort()).toEqual(
      [
        "shard-01.json.corrupt-2024-05-01T12-30-00-005Z",
        "shard-01.json.corrupt-2024-05-01T12-30-00-005Z-1",
      ].sort(),
    );
  });
});
