// A start reads every shard and journal segment into one buffer, reused file after file: memory touched
// for the first time is what costs, not the copy.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { FileReader } from "../../src/persistence/FileReader.js";
import { tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

it("reads each file whole into one buffer, reused while the files fit in it", async () => {
  const dir = await dirs.make();
  const files = { a: "a".repeat(100_000), b: "b".repeat(60_000), c: "", d: "d".repeat(250_000) };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const reader = new FileReader();
  const a = reader.read(join(dir, "a"));
  expect(a.toString()).toBe(files.a);
  const memory = a.buffer;
  const b = reader.read(join(dir, "b"));
  expect(b.toString()).toBe(files.b);
  expect(reader.read(join(dir, "c")).length).toBe(0);
  expect(b.buffer).toBe(memory);
  // A larger file gets a larger buffer, kept for the files after it.
  const d = reader.read(join(dir, "d"));
  expect(d.toString()).toBe(files.d);
  expect(d.buffer).not.toBe(memory);
  expect(reader.read(join(dir, "a")).buffer).toBe(d.buffer);
});

it("a missing file throws ENOENT, as readFileSync does", async () => {
  const dir = await dirs.make();
  expect(() => new FileReader().read(join(dir, "missing"))).toThrow(
    expect.objectContaining({ code: "ENOENT" }),
  );
});
