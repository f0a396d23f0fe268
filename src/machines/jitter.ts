/**
 * A deterministic source of jitter kept in a machine's context: machines may not call Math.random,
 * and a seed (chosen by the runtime from its injected `random`) survives a snapshot where a function
 * would not. mulberry32: a tiny well-known PRNG, written out because no maintained package offers a
 * pure `(seed) => [value, nextSeed]` step.
 */
export function nextRandom(seed: number): { value: number; seed: number } {
  const next = (seed + 0x6d2b79f5) | 0;
  let t = next;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return { value: ((t ^ (t >>> 14)) >>> 0) / 4294967296, seed: next };
}
