import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  JOURNAL_BLOCK_BYTES,
  JOURNAL_HEADER,
  journalFileName,
  readJournalSegment,
} from "../../src/persistence/index.js";
import { replayJournal } from "../../src/persistence/journal/replayJournal.js";
import { tempDirs } from "./tempDirs.js";

const BLOCK = JOURNAL_BLOCK_BYTES;

/** A segment as the writer leaves it: header, lines, zeros to a whole number of blocks. */
function segment(data: string, blocks = Math.ceil((Buffer.byteLength(data) + 1) / BLOCK)): Buffer {
  const bytes = Buffer.alloc(blocks * BLOCK);
  bytes.write(data, 0, "utf8");
  return bytes;
}

const lineOf = (n: number): string => `${JSON.stringify({ id: `m${n}`, n })}\n`;
const lines = (count: number): string => Array.from({ length: count }, (_, n) => lineOf(n)).join("");

const dirs = tempDirs();
afterEach(async () => {
  vi.restoreAllMocks();
  await dirs.cleanup();
});

describe("journal segment format", () => {
  it("reads each line's bytes once, however many lines follow it: tabs are looked for in the line alone", () => {
    const scanned = (count: number) => {
      const bytes = segment(JOURNAL_HEADER + lines(count));
      let total = 0;
      const indexOf = Buffer.prototype.indexOf;
      vi.spyOn(Buffer.prototype, "indexOf").mockImplementation(function (this: Buffer, ...args: unknown[]) {
        const found = indexOf.apply(this, args as Parameters<Buffer["indexOf"]>);
        total += (found < 0 ? this.length : found + 1) - (typeof args[1] === "number" ? args[1] : 0);
        return found;
      });
      expect(readJournalSegment(bytes).values).toHaveLength(count);
      vi.restoreAllMocks();
      return total / Buffer.byteLength(JOURNAL_HEADER + lines(count));
    };
    // Bytes looked at per byte of data: the same at 2,000 lines and at 20,000, not ten times as many.
    expect(scanned(20_000)).toBeLessThan(scanned(2_000) * 1.5);
  });

  it("reads whole lines before the zero padding, and an empty or never-written segment as empty", () => {
    expect(readJournalSegment(segment(JOURNAL_HEADER + lines(3)))).toEqual({
      values: [0, 1, 2].map((n) => ({ id: `m${n}`, n })),
      torn: false,
    });
    // Created, then a crash before the first append grew it.
    expect(readJournalSegment(Buffer.alloc(0))).toEqual({ values: [], torn: false });
    expect(readJournalSegment(Buffer.alloc(BLOCK))).toEqual({ values: [], torn: false });
    // The first append (header included) cut short by a crash.
    expect(readJournalSegment(segment(JOURNAL_HEADER.slice(0, 10)))).toMatchObject({ torn: true });
    expect(readJournalSegment(segment(JOURNAL_HEADER.slice(0, 10))).damage).toBeUndefined();
  });

  it("a partial last line before the padding is a torn append, not damage", () => {
    const reading = readJournalSegment(segment(JOURNAL_HEADER + lines(2) + lineOf(2).slice(0, 7)));
    expect(reading).toMatchObject({ torn: true, values: [{ id: "m0" }, { id: "m1" }] });
    expect(reading.damage).toBeUndefined();
  });

  it("any cut inside the data is reported as truncated, never as a torn tail; the lines before it are kept", () => {
    const data = JOURNAL_HEADER + lines(40);
    const whole = segment(data);
    fc.assert(
      fc.property(fc.integer({ min: JOURNAL_HEADER.length, max: Buffer.byteLength(data) }), (cut) => {
        const reading = readJournalSegment(whole.subarray(0, cut));
        expect(reading.torn).toBe(false);
        expect(reading.damage?.kind).toBe("truncated");
        const kept = data.slice(JOURNAL_HEADER.length, cut).split("\n").length - 1;
        expect(reading.values).toHaveLength(kept);
      }),
    );
  });

  it("a cut that keeps the data but not the whole block is reported too (the file is not what was written)", () => {
    const reading = readJournalSegment(segment(JOURNAL_HEADER + lines(2)).subarray(0, BLOCK / 2));
    expect(reading.damage).toMatchObject({ kind: "truncated" });
    expect(reading.values).toHaveLength(2);
  });

  it("a corrupt line is reported and the valid lines after it kept; so are bytes after the padding", () => {
    const corrupt = readJournalSegment(segment(`${JOURNAL_HEADER}${lineOf(0)}{oops\n${lineOf(1)}`));
    expect(corrupt.values).toEqual([
      { id: "m0", n: 0 },
      { id: "m1", n: 1 },
    ]);
    expect(corrupt.damage).toMatchObject({ kind: "corrupt", linesLost: 1 });
    expect(corrupt.damage?.problem).toMatch(/^line 3: not valid JSON/);

    const stray = segment(JOURNAL_HEADER + lines(1));
    stray[BLOCK - 3] = 0x41;
    expect(readJournalSegment(stray).damage).toMatchObject({ kind: "corrupt" });
    expect(readJournalSegment(stray).damage?.problem).toContain(`at byte ${BLOCK - 3}`);
  });

  it("refuses data that does not begin with the header, and a header of an unknown version", () => {
    const headless = readJournalSegment(segment(lines(2)));
    expect(headless).toMatchObject({ values: [], torn: false, damage: { kind: "corrupt" } });
    expect(headless.damage?.problem).toMatch(/does not begin with the journal header/);
    // The header's beginning and no padding: cut short after it was written, not a torn append.
    expect(readJournalSegment(Buffer.from(JOURNAL_HEADER.slice(0, 10)))).toMatchObject({
      torn: false,
      damage: { kind: "truncated" },
    });
    const future = readJournalSegment(segment(`{"journal":"a2a-snapshot","version":3}\n${lines(1)}`));
    expect(future).toMatchObject({ values: [], damage: { kind: "corrupt" } });
    expect(future.damage?.problem).toContain('"version":3');
  });

  it("is replayed line by line: each line checked as it is parsed, no string of the whole data made", async () => {
    // Reading a segment whole held every parsed line at once, and decoded its data into one string,
    // two bytes a character as soon as one line goes beyond Latin-1: a start read a large thread
    // state several times slower. Work per line is counted here, not timed.
    const dir = await dirs.make();
    const korean = `${JSON.stringify({ id: "m3", n: 3, text: "토큰 갱신이 만료 직전 요청에서 401" })}\n`;
    const text = JOURNAL_HEADER + lines(3) + korean + lines(6).slice(lineOf(0).length * 4);
    await writeFile(join(dir, journalFileName(1)), segment(text));
    const parse = vi.spyOn(JSON, "parse");
    const decode = vi.spyOn(Buffer.prototype, "toString");
    const parsedWhenChecked: number[] = [];
    const { latest } = await replayJournal({
      actorsDir: dir,
      names: [journalFileName(1)],
      check: (_key, value) => {
        parsedWhenChecked.push(parse.mock.calls.length);
        return value;
      },
      damaged: () => {},
    });
    expect([...latest.keys()]).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
    expect(parsedWhenChecked).toEqual([1, 2, 3, 4, 5, 6]);
    const longestLine = Math.max(...text.split("\n").map((line) => line.length));
    const decoded = decode.mock.results.map((result) => String(result.value).length);
    expect(decoded.length).toBeGreaterThanOrEqual(6);
    expect(Math.max(...decoded)).toBeLessThanOrEqual(longestLine);
  });

  it("hands each record to `each` as it is parsed, and then keeps none in `values`", () => {
    const taken: unknown[] = [];
    const reading = readJournalSegment(segment(`${JOURNAL_HEADER}${lineOf(0)}{oops\n${lineOf(1)}`), (v) =>
      taken.push(v),
    );
    expect(taken).toEqual([
      { id: "m0", n: 0 },
      { id: "m1", n: 1 },
    ]);
    expect(reading).toMatchObject({ values: [], torn: false, damage: { kind: "corrupt", linesLost: 1 } });
    expect(reading.damage?.problem).toContain("line 3:");
  });
});

describe("replaying for each id's latest record", () => {
  /** `count` lines: id m<k> for line k, cycling through `ids` ids, each line's `n` its number. */
  const puts = (count: number, ids: number): string =>
    Array.from({ length: count }, (_, n) => `${JSON.stringify({ id: `m${n % ids}`, n })}\n`).join("");

  async function replay(segments: string[], check = (_key: string, value: unknown) => value) {
    const dir = await dirs.make();
    const names = segments.map((_, k) => journalFileName(k + 1));
    for (const [k, data] of segments.entries()) await writeFile(join(dir, names[k] ?? ""), segment(data));
    const damaged: string[] = [];
    const parse = vi.spyOn(JSON, "parse");
    const { latest } = await replayJournal({
      actorsDir: dir,
      names,
      check,
      damaged: (_file, _bytes, damage) => void damaged.push(damage.problem),
    });
    const parsed = parse.mock.calls.length;
    parse.mockRestore();
    return { latest, parsed, damaged };
  }

  it("parses each id's last line only: the work grows with the ids, not with the lines since the last fold", async () => {
    const few = await replay([JOURNAL_HEADER + puts(100, 10)]);
    const many = await replay([JOURNAL_HEADER + puts(5_000, 10), JOURNAL_HEADER + puts(5_000, 10)]);
    expect(few.parsed).toBe(10);
    expect(many.parsed).toBe(10);
    expect([...many.latest.values()]).toEqual(
      Array.from({ length: 10 }, (_, k) => ({ id: `m${k}`, n: 4_990 + k })),
    );
  });

  it("keeps the order of each id's last line, across segments", async () => {
    const { latest } = await replay([
      JOURNAL_HEADER + puts(3, 3), // m0 m1 m2
      `${JOURNAL_HEADER}${JSON.stringify({ id: "m0", n: 9 })}\n`,
    ]);
    expect([...latest.entries()]).toEqual([
      ["m1", { id: "m1", n: 1 }],
      ["m2", { id: "m2", n: 2 }],
      ["m0", { id: "m0", n: 9 }],
    ]);
  });

  it("an id's last line that is unusable or not JSON gives way to its last usable one, and the bad line is reported", async () => {
    const data = `${JOURNAL_HEADER}${puts(4, 2)}{"id":"m1","n":oops\n`; // m0 m1 m0 m1, then a broken m1
    const { latest, damaged } = await replay([data], (_key, value) =>
      (value as { n: number }).n === 2 ? undefined : value,
    );
    expect(latest.get("m0")).toEqual({ id: "m0", n: 0 });
    expect(latest.get("m1")).toEqual({ id: "m1", n: 3 });
    expect(damaged).toEqual([expect.stringMatching(/^line 6: not valid JSON/)]);
  });

  it("reads a line whose id is not where the stores write it (first, ASCII, no escapes) whole", async () => {
    const odd = [
      { id: "m0", n: 1 },
      { id: 'm"1', n: 2 },
      { n: 3, id: "m0" },
      { id: 'm"1', n: 4 },
      { id: "회의", n: 5 },
      { id: "회의", n: 6 },
    ];
    const { latest, parsed } = await replay([
      JOURNAL_HEADER + odd.map((line) => `${JSON.stringify(line)}\n`).join(""),
    ]);
    expect(latest).toEqual(
      new Map([
        ["m0", { id: "m0", n: 3 }],
        ['m"1', { id: 'm"1', n: 4 }],
        ["회의", { id: "회의", n: 6 }],
      ]),
    );
    // m0's last line, parsed to find its id, makes its first skipped; the other ids cost a parse a line.
    expect(parsed).toBe(5);
  });
});
