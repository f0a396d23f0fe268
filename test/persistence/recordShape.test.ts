import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_TIME, recordProblems } from "../../src/persistence/recordShape.js";

/** The record's rules declared with zod: the oracle the hand-written checks are held to. */
const ActorRecordSchema = z.strictObject({
  id: z.string().min(1),
  machineId: z.string().min(1),
  machineVersion: z.number().int().nonnegative(),
  snapshot: z.unknown().refine((value) => value !== undefined),
  delayed: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        source: z.array(z.string()),
        target: z.array(z.string()),
        event: z.looseObject({ type: z.string().min(1) }),
        dueAt: z.number().nonnegative().max(MAX_TIME),
        cancellable: z.literal(false).optional(),
      }),
    )
    .optional(),
  status: z.enum(["active", "done", "error"]),
  updatedAt: z.number().nonnegative().max(MAX_TIME),
  meta: z.record(z.string(), z.unknown()).optional(),
});

const isActorRecord = (value: unknown) => recordProblems(value).length === 0;

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
    fc.constantFrom(...Object.keys(ActorRecordSchema.shape), "extra"),
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

describe("recordProblems", () => {
  it("gives the zod schema's verdict on records, records with one thing changed, and any value", () => {
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

  it.each([
    [null, ["(record): expected an object, got null"]],
    [[], ["(record): expected an object, got an array"]],
    [
      { id: "", machineId: 3, machineVersion: 1.5, status: "paused", updatedAt: -1, meta: [], extra: 1 },
      [
        '(record): unknown field "extra"',
        'id: expected a non-empty string, got ""',
        "machineId: expected a non-empty string, got 3",
        "machineVersion: expected a whole number ≥ 0, got 1.5",
        "snapshot: the snapshot is missing",
        'status: expected "active", "done" or "error", got "paused"',
        `updatedAt: expected a time in ms since the epoch (0 to ${MAX_TIME}), got -1`,
        "meta: expected an object, got an array",
      ],
    ],
    [
      {
        id: "a",
        machineId: "m",
        machineVersion: 1,
        snapshot: {},
        status: "active",
        updatedAt: 1,
        delayed: [
          7,
          {
            id: "t",
            source: "x",
            target: [1],
            event: { type: "" },
            dueAt: MAX_TIME + 1,
            cancellable: true,
            at: 0,
          },
        ],
      },
      [
        "delayed.0: expected an object, got 7",
        'delayed.1: unknown field "at"',
        'delayed.1.source: expected an array of strings, got "x"',
        "delayed.1.target: expected an array of strings, got an array",
        'delayed.1.event.type: expected a non-empty string, got ""',
        `delayed.1.dueAt: expected a time in ms since the epoch (0 to ${MAX_TIME}), got ${MAX_TIME + 1}`,
        "delayed.1.cancellable: expected false or nothing, got true",
      ],
    ],
  ])("names every problem of %j with its path", (value, problems) => {
    expect(recordProblems(value)).toEqual(problems);
  });
});
