import { nextRandom } from "../../src/machines/flowRetry.js";

/** A repeatable `Math.random` stand-in from a seed (mulberry32, the machines' own jitter source). */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    const step = nextRandom(state);
    state = step.seed;
    return step.value;
  };
}
