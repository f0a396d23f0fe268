import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ActorRecord, journalCopyWins, sameJson } from "../../src/persistence/actorRecord.js";
import { parseRecordLine, recordLine } from "../../src/persistence/recordLine.js";

/** JSON data as a record holds it: what survives a JSON round trip (no -0, no undefined). */
const json = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);

/** The same data with every object's keys in reverse order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reordered(v)]),
  );
}

describe("sameJson", () => {
  it("agrees with util.isDeepStrictEqual on JSON data, whatever the order of the keys", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(sameJson(a, b)).toBe(isDeepStrictEqual(a, b));
        expect(sameJson(a, reordered(a))).toBe(true);
        expect(sameJson({ data: a }, { data: [a] })).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });

  it("tells apart what differs deep inside, an extra key, and an array from an object", () => {
    expect(sameJson({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson({ 0: "x" }, ["x"])).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson(null, {})).toBe(false);
  });
});

describe("journalCopyWins", () => {
  const record = (
    updatedAt: number,
    value: string,
    status: ActorRecord["status"] = "active",
  ): ActorRecord => ({
    id: "a1",
    machineId: "m",
    machineVersion: 1,
    snapshot: { value },
    status,
    updatedAt,
  });

  it("a journal line wins over an older or different copy of its time, not over the same or a newer one", () => {
    expect(journalCopyWins(record(2, "x"), undefined)).toBe(true);
    expect(journalCopyWins(record(2, "x"), record(1, "x"))).toBe(true);
    expect(journalCopyWins(record(2, "y"), record(2, "x"))).toBe(true);
    expect(journalCopyWins(record(2, "x"), record(2, "x"))).toBe(false);
    expect(journalCopyWins(record(1, "y"), record(2, "x"))).toBe(false);
    expect(journalCopyWins(record(2, "x"), record(2, "x", "done"))).toBe(false);
  });

  it("a journal line wins over a copy of its time whose stored snapshot is damaged (it cannot be compared)", () => {
    const line = recordLine({ ...record(2, "x"), snapshot: { value: "x", page: "p".repeat(1_100) } });
    const damaged = parseRecordLine(
      Buffer.from(`${line.slice(0, line.lastIndexOf("\t") + 1)}{"val`),
    ) as ActorRecord;
    expect(journalCopyWins(record(2, "x"), damaged)).toBe(true);
    expect(journalCopyWins(record(1, "x"), damaged)).toBe(false);
  });
});
