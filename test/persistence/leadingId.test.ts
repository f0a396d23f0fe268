import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leadingId, leadingTime } from "../../src/persistence/actorRecord.js";
import { recordLine } from "../../src/persistence/recordLine.js";
import { storeRecord } from "../support/storeRecords.js";

const line = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8");

describe("leadingId", () => {
  it("reads the id a record's line begins with, or says it cannot, and is never wrong", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.jsonValue(), (id, rest) => {
        const read = leadingId(line({ id, rest }));
        const plain = [...id].every((c) => c >= " " && c <= "~" && c !== '"' && c !== "\\");
        expect(read).toBe(plain ? id : undefined);
      }),
      { numRuns: 2_000 },
    );
  });

  it("reads within the bounds it is given, and only a line that begins with the id", () => {
    const two = Buffer.concat([line({ id: "a", n: 1 }), Buffer.from("\n"), line({ id: "b" })]);
    const second = two.indexOf("\n") + 1;
    expect(leadingId(two, 0, second - 1)).toBe("a");
    expect(leadingId(two, second, two.length)).toBe("b");
    expect(leadingId(two, second, second + 8)).toBeUndefined(); // cut before the closing quote
    expect(leadingId(line({ n: 1, id: "a" }))).toBeUndefined();
    expect(leadingId(Buffer.from('{ "id":"a"}'))).toBeUndefined();
    expect(leadingId(line({ id: "" }))).toBe("");
  });
});

describe("leadingTime", () => {
  it("reads the time and status a record's line begins with after its id, or says it cannot, and is never wrong", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }),
        fc.oneof(fc.maxSafeNat(), fc.double(), fc.jsonValue()),
        fc.oneof(fc.constantFrom("active", "done", "error"), fc.string()),
        fc.jsonValue(),
        (id, updatedAt, status, rest) => {
          const read = leadingTime(line({ id, updatedAt, status, rest }));
          const plain = !JSON.stringify(id).slice(1, -1).includes("\\");
          const time =
            Number.isSafeInteger(updatedAt) && (updatedAt as number) >= 0 && String(updatedAt).length <= 15;
          const known = status === "active" || status === "done" || status === "error";
          const written = JSON.parse(JSON.stringify(updatedAt)) as unknown; // -0 is written 0
          expect(read).toEqual(plain && time && known ? { updatedAt: written, status } : undefined);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("reads nothing from a line that does not begin with an id, whatever follows", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.maxSafeNat(), (rest, updatedAt) => {
        const first = Object.keys(rest)[0];
        fc.pre(first !== undefined && first !== "id");
        expect(leadingTime(line({ ...rest, updatedAt, status: "done" }))).toBeUndefined();
      }),
      { numRuns: 1_000 },
    );
    expect(leadingTime(Buffer.from('{"xx":"a","updatedAt":1,"status":"done"}'))).toBeUndefined();
  });

  it("reads every line the store writes, within the bounds it is given, and only in that order", () => {
    const record = storeRecord("a", { status: "done", updatedAt: 1_796_223_521_895 });
    const text = recordLine(record);
    const two = Buffer.from(`${text}\n${recordLine(storeRecord("b"))}`);
    expect(leadingTime(two, 0, text.length)).toEqual({ updatedAt: 1_796_223_521_895, status: "done" });
    expect(leadingTime(two, text.length + 1, two.length)).toEqual({
      updatedAt: storeRecord("b").updatedAt,
      status: "active",
    });
    expect(leadingTime(two, 0, text.indexOf('"done"') + 3)).toBeUndefined(); // cut short
    expect(leadingTime(line({ id: "a", status: "done", updatedAt: 1 }))).toBeUndefined();
    expect(leadingTime(line({ id: "a", updatedAt: 1, status: "doner" }))).toBeUndefined();
    expect(leadingTime(line({ id: "a", updatedAt: 1e21, status: "done" }))).toBeUndefined();
  });
});
