import { describe, expect, it } from "vitest";
import { BatchedGets } from "../../src/persistence/postgres/batchedGets.js";

/** A read that answers when told: what it was asked, and a way to answer it. */
function heldReads() {
  const reads: Array<{ ids: string[]; answer: (error?: Error) => void }> = [];
  const gets = new BatchedGets<string>(
    (ids) =>
      new Promise((resolve, reject) => {
        const found = new Map(ids.filter((id) => id !== "missing").map((id) => [id, `record ${id}`]));
        reads.push({ ids, answer: (error) => (error ? reject(error) : resolve(found)) });
      }),
  );
  return { gets, reads };
}

describe("BatchedGets", () => {
  it("a lone read goes at once; those asked for while it runs go together next, each id once", async () => {
    const { gets, reads } = heldReads();
    const first = gets.get("a");
    expect(reads.map((r) => r.ids)).toEqual([["a"]]);
    const later = ["b", "a", "missing", "c", "b"].map((id) => gets.get(id));
    expect(reads).toHaveLength(1);
    reads[0]?.answer();
    expect(await first).toBe("record a");
    await Promise.resolve();
    expect(reads.map((r) => r.ids)).toEqual([["a"], ["b", "a", "missing", "c"]]);
    reads[1]?.answer();
    expect(await Promise.all(later)).toEqual(["record b", "record a", undefined, "record c", "record b"]);
    // Idle again: the next goes at once.
    const again = gets.get("d");
    expect(reads).toHaveLength(3);
    reads[2]?.answer();
    expect(await again).toBe("record d");
  });

  it("a failed read fails its own callers only, and those waiting are read next", async () => {
    const { gets, reads } = heldReads();
    const failed = gets.get("a");
    // Asked again while its read runs, an id is read again: that read may have begun before a put.
    const waiting = [gets.get("a"), gets.get("b")];
    reads[0]?.answer(new Error("connection lost"));
    await expect(failed).rejects.toThrow("connection lost");
    await Promise.resolve();
    expect(reads.map((r) => r.ids)).toEqual([["a"], ["a", "b"]]);
    reads[1]?.answer();
    expect(await Promise.all(waiting)).toEqual(["record a", "record b"]);
  });
});
