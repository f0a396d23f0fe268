import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ActorRecord, DurableJsonFile } from "../../src/persistence/index.js";
import {
  type RawShard,
  shardHeader,
  type StoreDoc,
  readShard,
  shardChunks,
} from "../../src/persistence/shardFormat.js";
import { recordLine } from "../../src/persistence/recordLine.js";
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

/** A shard's text as the store writes it: each record in its line's parts. */
const written = (records: ActorRecord[]) =>
  shardHeader(records.length) + records.map((r) => `${recordLine(r)}\n`).join("");

const entriesOf = (d: StoreDoc) => Object.values(d.records).map((r) => [r.id, r]);

describe("a live shard", () => {
  it("is a header line and one line per record, written in pieces of 200 records", () => {
    for (const count of [0, 1, 199, 200, 201, 450]) {
      const d = doc(Array.from({ length: count }, (_, i) => `collab-${i}`));
      const pieces = [...shardChunks(d)];
      const text = pieces.join("");
      expect(text).toBe(written(Object.values(d.records)));
      expect(text.startsWith(`{"shard":"a2a-snapshot","version":1,"records":${count}}\n`)).toBe(true);
      expect(text.split("\n")).toHaveLength(count + 2); // the header, the records, "" after the last newline
      expect(pieces).toHaveLength(Math.ceil(count / 200) || 1);
    }
  });

  it("reads back every record as written, for any ids and text", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.oneof(fc.string(), fc.nat().map(String)), { maxLength: 300 }),
        fc.string({ unit: "grapheme" }),
        (ids, text) => {
          const d = {
            version: 1 as const,
            records: Object.fromEntries(ids.map((id) => [id, record(id, text)])),
          };
          expect(readShard(Buffer.from([...shardChunks(d)].join(""))).entries).toEqual(entriesOf(d));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("is what DurableJsonFile writes, with the bytes it reports, and reads back as written", async () => {
    const file = join(tempDir("a2a-chunks-"), "shard-00.ndjson");
    const reported: number[] = [];
    const d = doc(Array.from({ length: 650 }, (_, i) => `collab-${i}`));
    await new DurableJsonFile<StoreDoc>(file, {
      chunks: shardChunks,
      onWrite: (b) => reported.push(b),
    }).write(d);
    const text = await readFile(file, "utf8");
    expect(text).toBe(written(Object.values(d.records)));
    expect(reported).toEqual([Buffer.byteLength(text)]);
    const read = await new DurableJsonFile<RawShard>(file, { decode: readShard }).read();
    expect(read?.entries).toEqual(entriesOf(d));
  });

  it("keeps a line without a string id under the empty id, for the record check to refuse", () => {
    const bytes = Buffer.from(`${shardHeader(2)}{"id":7}\n[1]\n`);
    expect(readShard(bytes).entries).toEqual([
      ["", { id: 7 }],
      ["", [1]],
    ]);
  });

  it.each([
    ["", /the header line is missing/],
    ['{"version":1,"records":{}}', /the header line is missing/],
    ['{"shard":"a2a-snapshot","version":2,"records":0}\n', /unsupported header .*"version\\":2/],
    ['{"shard":"a2a-snapshot","version":1}\n', /unsupported header/],
    ['{"shard":"a2a-snapshot","version":1,"records":-1}\n', /unsupported header/],
    [
      "[]\n",
      /unsupported header "\[\]" \(expected \{"shard":"a2a-snapshot","version":1,"records":<count>\}\)/,
    ],
    [`${shardHeader(2)}{"id":"a"}\n{"id":`, /line 3 is cut short/],
    [`${shardHeader(2)}{"id":"a"}\nnot json\n`, /line 3 is not valid JSON/],
    // Cut at a line's end: only the header's count tells.
    [`${shardHeader(2)}{"id":"a"}\n`, /it holds 1 records where its header says 2: it was cut or added to/],
    [`${shardHeader(0)}{"id":"a"}\n`, /it holds 1 records where its header says 0/],
  ])("refuses %j, naming what is wrong", (text, problem) => {
    expect(() => readShard(Buffer.from(text))).toThrow(problem);
  });

  it("is reported corrupt by DurableJsonFile with the line that is wrong", async () => {
    const file = join(tempDir("a2a-chunks-"), "shard-00.ndjson");
    await writeFile(file, `${shardHeader(2)}{"id":"a"}\n{`);
    await expect(new DurableJsonFile(file, { decode: readShard }).read()).rejects.toMatchObject({
      code: "CORRUPT_STATE_FILE",
      reason: "line 3 is cut short (no newline at the end of the file)",
    });
  });
});
