import { asText } from "../InvalidInputError.js";

/** Jaccard similarity of the texts' lower-cased whitespace-separated words, in [0, 1]; 0 with no words. */
export function calculateSimilarity(a: string, b: string): number {
  const wordsA = words(a);
  const wordsB = words(b);
  let shared = 0;
  for (const word of wordsA) if (wordsB.has(word)) shared += 1;
  const union = wordsA.size + wordsB.size - shared;
  return union === 0 ? 0 : shared / union;
}

function words(text: unknown): Set<string> {
  const source = asText(text) ?? "";
  return new Set(source.toLowerCase().split(/\s+/).filter(Boolean));
}
