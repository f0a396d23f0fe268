import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ActorRecordSchema, isActorRecord } from "../../src/persistence/actorRecord.js";

const odd = fc.constantFrom<unknown>(
  undefined,
  null,
  "",
  "x",
  0,
  -0,
  -1,
  1.5,
  2 ** 53,
  8_640_000_000_000_001,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  false,
  true,
  [],
  ["a"],
  [1],
  {},
  { type: "" },
  { type: "go" },
);
const anything = fc.oneof(odd, fc.jsonValue());
const time = fc.oneof(fc.nat(), fc.constant(8_640_000_000_000_000));

const delayed = fc.record(
  {
    id: fc.string({ minLength: 1 }),
    source: fc.array(fc.string()),
    target: fc.array(fc.string()),
    event: fc.record({ type: fc.string({ minLength: 1 }), n: fc.nat() }, { requiredKeys: ["type"] }),
    dueAt: time,
    cancellable: fc.constant(false),
  },
  { requiredKeys: ["id", "source", "target", "event", "dueAt"] },
);

const record = fc.record(
  {
    id: fc.string({ minLength: 1 }),
    machineId: fc.string({ minLength: 1 }),
    machineVersion: fc.nat(),
    snapshot: fc.jsonValue(),
    delayed: fc.array(delayed, { maxLength: 3 }),
    status: fc.constantFrom("active", "done", "error"),
    updatedAt: time,
    meta: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
  },
  { requiredKeys: ["id", "machineId", "machineVersion", "snapshot", "status", "updatedAt"] },
);

/** A record with one thing changed: a key set to any value, removed or added, in it or in a delayed event. */
const mutated = fc
  .tuple(
    record,
    fc.constantFrom(
      "id",
      "machineId",
      "machineVersion",
      "snapshot",
      "delayed",
      "status",
      "updatedAt",
      "meta",
      "extra",
    ),
    fc.constantFrom("id", "source", "target", "event", "dueAt", "cancellable", "extra"),
    fc.boolean(),
    fc.oneof(anything, fc.constant("(removed)")),
  )
  .map(([base, key, delayedKey, inDelayed, value]) => {
    const copy: Record<string, unknown> = structuredClone(base);
    const target =
      inDelayed && Array.isArray(copy.delayed) && copy.delayed.length > 0
        ? (copy.delayed[0] as Record<string, unknown>)
        : copy;
    const at = target === copy ? key : delayedKey;
    if (value === "(removed)") Reflect.deleteProperty(target, at);
    else target[at] = value;
    return copy;
  });

describe("isActorRecord", () => {
  it("gives ActorRecordSchema's verdict on records, records with one thing changed, and any value", () => {
    fc.assert(
      fc.property(fc.oneof(record, mutated, anything), (value) => {
        expect(isActorRecord(value)).toBe(ActorRecordSchema.safeParse(value).success);
      }),
      { numRuns: 5_000 },
    );
  });

  it("accepts every valid record and refuses most mutations (the property above is not vacuous)", () => {
    const verdicts = fc.sample(mutated, 2_000).map(isActorRecord);
    expect(fc.sample(record, 500).every(isActorRecord)).toBe(true);
    expect(verdicts.filter((ok) => !ok).length).toBeGreaterThan(500);
  });
});
