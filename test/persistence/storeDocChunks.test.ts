import { readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ActorRecord, DurableJsonFile } from "../../src/persistence/index.js";
import { type StoreDoc, storeDocChunks } from "../../src/persistence/snapshotLayout.js";
import { tempDir } from "../support/tempDir.js";

function record(id: string, text = "x"): ActorRecord {
  return {
    id,
    machineId: "collaborate",
    machineVersion: 2,
    snapshot: { value: "awaitingResponse", context: { text } },
    status: "done",
    updatedAt: 1,
  };
}

function doc(ids: string[]): StoreDoc {
  return { version: 1, records: Object.fromEntries(ids.map((id) => [id, record(id, `요청 ${id} "q"\n`)])) };
}

describe("a store file written in pieces", () => {
  it("is exactly JSON.stringify of the file, in pieces of 200 records", () => {
    for (const count of [0, 1, 199, 200, 201, 450]) {
      const d = doc(Array.from({ length: count }, (_, i) => `collab-${i}`));
      const pieces = [...storeDocChunks(d)];
      expect(pieces.join("")).toBe(JSON.stringify(d));
      expect(pieces).toHaveLength(Math.floor(count / 200) + 1);
    }
  });

  it("keeps JSON's key order for any ids, integer-like ones included", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.oneof(fc.string(), fc.nat().map(String)), { maxLength: 500 }), (ids) => {
        const d = doc(ids);
        expect([...storeDocChunks(d)].join("")).toBe(JSON.stringify(d));
      }),
      { numRuns: 200 },
    );
  });

  it("is what DurableJsonFile writes, with the bytes it reports, and reads back as written", async () => {
    const file = join(tempDir("a2a-chunks-"), "shard-00.json");
    const reported: number[] = [];
    const d = doc(Array.from({ length: 650 }, (_, i) => `collab-${i}`));
    await new DurableJsonFile<StoreDoc>(file, {
      chunks: storeDocChunks,
      onWrite: (b) => reported.push(b),
    }).write(d);
    const text = await readFile(file, "utf8");
    expect(text).toBe(JSON.stringify(d));
    expect(reported).toEqual([Buffer.byteLength(text)]);
    expect(await new DurableJsonFile<StoreDoc>(file).read()).toEqual(d);
  });
});
