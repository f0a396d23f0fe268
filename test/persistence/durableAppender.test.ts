import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DurableAppender } from "../../src/persistence/archive/DurableAppender.js";
import { tempDirs } from "./tempDirs.js";

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describe("DurableAppender", () => {
  it("appends pieces one after another after the last whole line, and reports what it wrote", async () => {
    const file = join(await dirs.make(), "hour.ndjson");
    await writeFile(file, "one\ntorn");
    const written: number[] = [];
    const appender = new DurableAppender((bytes) => written.push(bytes));
    await appender.append(file, ["two\n", "three\nfü\n"], "line");
    await appender.append(file, [Buffer.from("four\n")], "line");
    expect(await readFile(file, "utf8")).toBe("one\ntwo\nthree\nfü\nfour\n");
    expect(written).toEqual([Buffer.byteLength("two\nthree\nfü\n"), 5]);
  });

  it("leaves the file as it was when a piece cannot be made, and appends there next", async () => {
    const file = join(await dirs.make(), "hour.ndjson");
    await writeFile(file, "one\n");
    const appender = new DurableAppender(() => {});
    function* pieces() {
      yield "two\n";
      throw new TypeError("Do not know how to serialize a BigInt");
    }
    await expect(appender.append(file, pieces(), "line")).rejects.toThrow("BigInt");
    expect(await readFile(file, "utf8")).toBe("one\n");
    await appender.append(file, ["three\n"], "line");
    expect(await readFile(file, "utf8")).toBe("one\nthree\n");
  });
});
