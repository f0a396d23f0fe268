import { describe, expect, it } from "vitest";
import { AwaitingAnswers } from "../../src/runtime/AwaitingAnswers.js";

describe("AwaitingAnswers", () => {
  it("tells each thread's collaborations in the order they were added, one or several", () => {
    const awaiting = new AwaitingAnswers();
    awaiting.add("t1", "a");
    awaiting.add("t1", "a");
    awaiting.add("t2", "x");
    expect(awaiting.in("t1")).toEqual(["a"]);
    awaiting.add("t1", "b");
    awaiting.add("t1", "c");
    awaiting.add("t1", "b");
    expect(awaiting.in("t1")).toEqual(["a", "b", "c"]);
    expect(awaiting.in("t2")).toEqual(["x"]);
    expect(awaiting.in("t3")).toEqual([]);
    expect([awaiting.has("t1"), awaiting.has("t2"), awaiting.has("t3")]).toEqual([true, true, false]);
  });

  it("forgets a thread once its last collaboration is removed, and only then", () => {
    const awaiting = new AwaitingAnswers();
    awaiting.add("t1", "a");
    awaiting.remove("t1", "other");
    awaiting.remove("t9", "a");
    expect(awaiting.in("t1")).toEqual(["a"]);
    awaiting.remove("t1", "a");
    expect(awaiting.has("t1")).toBe(false);

    awaiting.add("t1", "a");
    awaiting.add("t1", "b");
    awaiting.remove("t1", "a");
    expect(awaiting.in("t1")).toEqual(["b"]);
    awaiting.add("t1", "c");
    expect(awaiting.in("t1")).toEqual(["b", "c"]);
    awaiting.remove("t1", "b");
    awaiting.remove("t1", "c");
    expect(awaiting.has("t1")).toBe(false);
    expect(awaiting.in("t1")).toEqual([]);
  });

  it("hands out a copy: telling the collaborations may change who awaits", () => {
    const awaiting = new AwaitingAnswers();
    awaiting.add("t1", "a");
    awaiting.add("t1", "b");
    const told = awaiting.in("t1");
    awaiting.remove("t1", "a");
    expect(told).toEqual(["a", "b"]);
  });
});
