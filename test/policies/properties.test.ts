// Property tests for the numeric policies: calculateBackoffMs and calculateSimilarity.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  A2AErrorCategory,
  type A2AErrorInfo,
  calculateBackoffMs,
  calculateSimilarity,
} from "../../src/policies/entryPoint.js";

const info = (retryAfterMs?: number): A2AErrorInfo => ({
  category: A2AErrorCategory.TRANSIENT,
  code: "server_overload",
  message: "LLM 서버 과부하",
  retryable: true,
  attempt: 0,
  maxAttempts: 3,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

/** A value of random() in [0, 1). */
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const attempts = fc.oneof(fc.nat({ max: 40 }), fc.nat({ max: 2_000 }));

/** min(base·2^attempt, max) ± 25%: the bounds when there is no usable retryAfterMs. */
function bounds(attempt: number, baseMs: number, maxMs: number) {
  const capped = Math.min(baseMs * 2 ** attempt, maxMs);
  return { low: Math.floor(0.75 * capped), high: Math.floor(1.25 * capped) };
}

describe("calculateBackoffMs properties", () => {
  it("without retryAfterMs: within [floor(0.75·m), floor(1.25·m)], m = min(base·2^attempt, max), never above 1.25·max", () => {
    fc.assert(
      fc.property(
        attempts,
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        unit,
        (attempt, baseMs, maxMs, r) => {
          const ms = calculateBackoffMs(attempt, info(), { baseMs, maxMs, random: () => r });
          const { low, high } = bounds(attempt, baseMs, maxMs);
          expect(Number.isInteger(ms)).toBe(true);
          expect(ms).toBeGreaterThanOrEqual(low);
          expect(ms).toBeLessThanOrEqual(high);
          expect(ms).toBeLessThanOrEqual(1.25 * maxMs);
        },
      ),
    );
  });

  it("without retryAfterMs and with the defaults 2000 / 60000: the same bounds", () => {
    fc.assert(
      fc.property(attempts, unit, (attempt, r) => {
        const ms = calculateBackoffMs(attempt, info(), { random: () => r });
        const { low, high } = bounds(attempt, 2_000, 60_000);
        expect(ms).toBeGreaterThanOrEqual(low);
        expect(ms).toBeLessThanOrEqual(high);
        expect(ms).toBeLessThanOrEqual(75_000);
      }),
    );
  });

  it("a retryAfterMs that is not positive is ignored", () => {
    fc.assert(
      fc.property(
        attempts,
        unit,
        fc.oneof(fc.constant(0), fc.constant(-0), fc.integer({ min: -1_000_000, max: -1 })),
        (attempt, r, retryAfterMs) => {
          const ms = calculateBackoffMs(attempt, info(retryAfterMs), { random: () => r });
          const { low, high } = bounds(attempt, 2_000, 60_000);
          expect(ms).toBeGreaterThanOrEqual(low);
          expect(ms).toBeLessThanOrEqual(high);
        },
      ),
    );
  });

  it("a positive retryAfterMs is returned exactly, whatever the attempt, options and random", () => {
    fc.assert(
      fc.property(
        attempts,
        fc.oneof(
          fc.integer({ min: 1, max: 2_000_000_000 }),
          fc.double({ min: Number.MIN_VALUE, max: 1e9, noNaN: true, noDefaultInfinity: true }),
        ),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 10_000_000 }),
        unit,
        (attempt, retryAfterMs, baseMs, maxMs, r) => {
          expect(calculateBackoffMs(attempt, info(retryAfterMs), { baseMs, maxMs, random: () => r })).toBe(
            retryAfterMs,
          );
          expect(calculateBackoffMs(attempt, info(retryAfterMs))).toBe(retryAfterMs);
        },
      ),
    );
  });
});

const WHITESPACE = [" ", "\t", "\n", "\r", "\u3000", "\u00a0"] as const;
const blank = fc.array(fc.constantFrom(...WHITESPACE), { maxLength: 8 }).map((parts) => parts.join(""));
const word = fc.oneof(
  fc.constantFrom("작업", "완료", "배포", "리뷰", "hello", "Hello", "HELLO", "world", "a", "b", "?", "done."),
  fc.string({ minLength: 1, maxLength: 6 }).filter((s) => /^\S+$/.test(s)),
);
const wordList = fc.array(word, { minLength: 1, maxLength: 12 });
const separator = fc
  .array(fc.constantFrom(...WHITESPACE), { minLength: 1, maxLength: 3 })
  .map((p) => p.join(""));
/** Joins words with arbitrary runs of whitespace, with optional whitespace around. */
const joinWith = (words: readonly string[], seps: readonly string[], lead: string, trail: string) =>
  lead + words.map((w, i) => (i === 0 ? w : `${seps[i % seps.length] ?? " "}${w}`)).join("") + trail;
const anyText = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), blank);

describe("calculateSimilarity properties", () => {
  it("is symmetric and in [0, 1]", () => {
    fc.assert(
      fc.property(anyText, anyText, (a, b) => {
        const ab = calculateSimilarity(a, b);
        expect(ab).toBe(calculateSimilarity(b, a));
        expect(ab).toBeGreaterThanOrEqual(0);
        expect(ab).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("is symmetric and in [0, 1] on texts that share words", () => {
    fc.assert(
      fc.property(wordList, wordList, (a, b) => {
        const ta = a.join(" ");
        const tb = b.join(" ");
        const ab = calculateSimilarity(ta, tb);
        expect(ab).toBe(calculateSimilarity(tb, ta));
        expect(ab).toBeGreaterThanOrEqual(0);
        expect(ab).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("is 1 for identical texts that have words", () => {
    fc.assert(
      fc.property(
        anyText.filter((s) => /\S/.test(s)),
        (text) => {
          expect(calculateSimilarity(text, text)).toBe(1);
        },
      ),
    );
  });

  it("is 1 for the same words with other whitespace, order and repetitions", () => {
    fc.assert(
      fc.property(
        wordList.chain((ws) =>
          fc.tuple(
            fc.constant(ws),
            fc.shuffledSubarray(ws, { minLength: ws.length, maxLength: ws.length }),
            fc.array(separator, { minLength: 1, maxLength: 4 }),
            blank,
            blank,
          ),
        ),
        ([words, shuffled, seps, lead, trail]) => {
          const a = words.join(" ");
          const b = joinWith([...shuffled, ...shuffled], seps, lead, trail);
          expect(calculateSimilarity(a, b)).toBe(1);
        },
      ),
    );
  });

  it("is 0 when either text has no words", () => {
    fc.assert(
      fc.property(blank, anyText, (empty, other) => {
        expect(calculateSimilarity(empty, other)).toBe(0);
        expect(calculateSimilarity(other, empty)).toBe(0);
      }),
    );
  });

  it("matches Jaccard over the lower-cased word sets", () => {
    fc.assert(
      fc.property(wordList, wordList, (a, b) => {
        const setA = new Set(a.map((w) => w.toLowerCase()));
        const setB = new Set(b.map((w) => w.toLowerCase()));
        const shared = [...setA].filter((w) => setB.has(w)).length;
        const union = new Set([...setA, ...setB]).size;
        expect(calculateSimilarity(a.join(" "), b.join("\n"))).toBeCloseTo(shared / union, 12);
      }),
    );
  });
});
