import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type BadEntry, ENTRY_SCHEMAS, checkEntry, quickEntry } from "../../src/runtime/threadEntries.js";

/** A value of each kind the checks must tell apart from the right one. */
const odd = fc.constantFrom<unknown>(
  undefined,
  null,
  "",
  "x",
  0,
  -1,
  1.5,
  Number.NaN,
  Infinity,
  true,
  [],
  [1],
  {},
);
const id = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("", "c1", "m9") },
  { weight: 1, arbitrary: fc.string() },
);
const time = fc.oneof(fc.integer(), fc.double());
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 8, arbitrary: arb }, { weight: 1, arbitrary: odd });
const tokens = maybe(fc.array(fc.string(), { maxLength: 3 }));

const observed = fc.record(
  {
    messageId: maybe(id),
    sender: maybe(fc.string()),
    summary: maybe(fc.string()),
    ts: maybe(time),
    channelId: maybe(id),
    threadId: maybe(id),
    mentionedBots: tokens,
    extractedTokens: maybe(
      fc.record({ mentions: tokens, urls: tokens, prNumbers: tokens, codeRefs: tokens, extra: fc.nat() }),
    ),
    extra: fc.nat(),
  },
  { requiredKeys: ["messageId", "sender", "summary", "ts", "channelId", "extractedTokens"] },
);
const values = {
  parent: fc.record({ channelId: maybe(id), at: maybe(time), extra: fc.nat() }, { requiredKeys: [] }),
  participants: fc.record({ agentIds: maybe(fc.array(id, { maxLength: 3 })), seenAt: maybe(time) }),
  route: fc.record({ threadId: maybe(id), channelId: maybe(id), lastUsedAt: maybe(time) }),
  observed,
};
/** An observer record's key is usually its own ids, as the runtime writes it. */
const entry = fc.oneof(
  ...Object.entries(values).map(([c, value]) =>
    fc.tuple(fc.constant(c), value, fc.boolean(), id).map(([c, v, keyed, other]) => {
      const record = v as { channelId?: unknown; messageId?: unknown };
      const k = keyed ? `${String(record.channelId)} ${String(record.messageId)}` : other;
      return { c, k, v: v as unknown };
    }),
  ),
);

/** What the schema alone decides of an entry: its value as parsed, or undefined when it is refused. */
function bySchema(c: keyof typeof values, k: string, v: unknown): unknown {
  const parsed = ENTRY_SCHEMAS[c].safeParse(v);
  if (!parsed.success) return undefined;
  const data = parsed.data as { channelId: string; messageId: string };
  if (c === "observed" && k !== `${data.channelId} ${data.messageId}`) return undefined;
  return { c, k, v: parsed.data };
}

describe("thread-state entries checked by hand", () => {
  it("keep exactly what the schemas keep, and nothing they refuse", () => {
    fc.assert(
      fc.property(entry, ({ c, k, v }) => {
        const expected = bySchema(c as keyof typeof values, k, v);
        const quick = quickEntry(c, k, v);
        if (quick !== undefined) expect(quick).toEqual(expected);
        const bad: BadEntry[] = [];
        expect(checkEntry({ c, k, v }, bad)).toEqual(expected);
        expect(bad.length).toBe(expected === undefined ? 1 : 0);
      }),
      { numRuns: 5_000 },
    );
  });

  it("take the well-formed entries of the large collections without the schemas", () => {
    const record = {
      messageId: "m9",
      sender: "ruda",
      summary: "리뷰 부탁",
      ts: 1,
      channelId: "c1",
      extractedTokens: { mentions: ["eden"], urls: [], prNumbers: ["12"], codeRefs: [] },
    };
    const wellFormed: Array<[string, string, unknown]> = [
      ["parent", "t1", { channelId: "c1", at: 1 }],
      ["participants", "t1", { agentIds: ["ruda", "eden"], seenAt: 1 }],
      ["route", "ruda:eden", { threadId: "t1", channelId: "c1", lastUsedAt: 1 }],
      ["observed", "c1 m9", record],
      ["observed", "c1 m9", { ...record, threadId: "t1", mentionedBots: ["eden"] }],
    ];
    for (const [c, k, v] of wellFormed) expect(quickEntry(c, k, v)).toEqual({ c, k, v });
  });
});
