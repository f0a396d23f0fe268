/**
 * 53-bit hashes of record ids (exact in a double), sorted per archive hour: "may this hour hold id X?"
 * is a binary search over 8 bytes a record. A false "maybe" (about 1 in 10^9 at 1 million ids) costs a read.
 */

const TWO_POW_21 = 2 ** 21;

/** The id's hash: 32 bits of FNV-1a and 21 of a second FNV-1a with another basis. */
export function idHash(id: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193) ^ (b >>> 13);
  }
  return (a >>> 0) * TWO_POW_21 + ((b >>> 0) >>> 11);
}

/** Bytes one hash takes in an `.ids` file (a little-endian double). */
export const HASH_BYTES = 8;

/** The hashes in an `.ids` file's bytes; a torn last entry (a crash mid-append) is left out. */
export function decodeHashes(bytes: Uint8Array): Float64Array {
  const count = Math.floor(bytes.byteLength / HASH_BYTES);
  const out = new Float64Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * HASH_BYTES);
  for (let i = 0; i < count; i++) out[i] = view.getFloat64(i * HASH_BYTES, true);
  return out;
}

export function encodeHashes(hashes: readonly number[]): Buffer {
  const out = Buffer.alloc(hashes.length * HASH_BYTES);
  hashes.forEach((hash, i) => out.writeDoubleLE(hash, i * HASH_BYTES));
  return out;
}

/** Whether a number is a hash idHash could have made (an `.ids` file may hold garbage). */
function isHash(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/**
 * The hashes of one archive hour: sorted, plus the few added since (merged in now and then). Those read
 * from a file are sorted when first needed: an open reads a month of hours, and a start may look in none.
 */
export class HashSet53 {
  private sorted: Float64Array | undefined;
  private recent: number[] = [];

  constructor(private unsorted: Float64Array = new Float64Array(0)) {}

  /** Hashes held, duplicates included (a record appended twice). */
  get size(): number {
    return this.checked().length + this.recent.length;
  }

  add(hashes: readonly number[]): void {
    this.recent.push(...hashes);
    if (this.recent.length > 256) this.merge();
  }

  has(hash: number): boolean {
    return sortedHas(this.checked(), hash) || this.recent.includes(hash);
  }

  /** Every hash held, in no order, garbage read from a file included: for an index, which sorts them. */
  parts(): ReadonlyArray<ArrayLike<number>> {
    return [this.sorted ?? this.unsorted, this.recent];
  }

  /** How many different hashes: the number of different ids, but for a collision. */
  distinct(): number {
    this.merge();
    const sorted = this.checked();
    let count = 0;
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) count++;
    return count;
  }

  private checked(): Float64Array {
    if (this.sorted === undefined) {
      this.sorted = this.unsorted.filter(isHash).sort();
      this.unsorted = EMPTY;
    }
    return this.sorted;
  }

  private merge(): void {
    if (this.recent.length === 0) return;
    const sorted = this.checked();
    const all = new Float64Array(sorted.length + this.recent.length);
    all.set(sorted);
    all.set(this.recent, sorted.length);
    this.sorted = all.sort();
    this.recent = [];
  }
}

const EMPTY = new Float64Array(0);

/**
 * Whether any of several HashSet53s may hold a hash, in one lookup: their hashes in one sorted array
 * (garbage read from a file too, which only costs a look in the hours), and a Set of those added
 * since. Stale once the added are an eighth as many (make it anew then: an add costs O(log n)
 * amortized), and after a set loses hashes (a removal is not followed).
 */
export class HashIndex {
  private readonly added = new Set<number>();

  private constructor(private readonly sorted: Float64Array) {}

  static of(sets: Iterable<HashSet53>): HashIndex {
    const parts = [...sets].flatMap((set) => set.parts());
    const all = new Float64Array(parts.reduce((n, part) => n + part.length, 0));
    let at = 0;
    for (const part of parts) {
      all.set(part, at);
      at += part.length;
    }
    return new HashIndex(all.sort());
  }

  get stale(): boolean {
    return this.added.size > 256 + this.sorted.length / 8;
  }

  has(hash: number): boolean {
    return sortedHas(this.sorted, hash) || this.added.has(hash);
  }

  add(hashes: readonly number[]): void {
    for (const hash of hashes) this.added.add(hash);
  }
}

function sortedHas(sorted: Float64Array, hash: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const value = sorted[mid] as number;
    if (value === hash) return true;
    if (value < hash) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
