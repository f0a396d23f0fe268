import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leadingId } from "../../src/persistence/actorRecord.js";

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
