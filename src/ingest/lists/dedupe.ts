import type { ListValueKind } from './normalise.js';

/**
 * Sets of distinct list values whose memory is bounded by the values, not the rows, and that
 * do not stop at the 2^24 entries where a JavaScript Set or Map throws a RangeError.
 * Values are expected normalised and valid (fixed-width digits for the numeric kinds).
 */
export interface DistinctSet {
  /** Adds the value; false when it was already there. */
  add(value: string): boolean;
  readonly size: number;
}

/** The numeric kinds also take the value as a number (parsed once by the caller). */
export interface NumericDistinctSet extends DistinctSet {
  addNumber(n: number): boolean;
}

export function isNumericDistinctSet(set: DistinctSet): set is NumericDistinctSet {
  return typeof (set as Partial<NumericDistinctSet>).addNumber === 'function';
}

/** Parses a string of ASCII digits (at most 15, so it stays exact) into a number. */
export function digitsToNumber(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) n = n * 10 + (value.charCodeAt(i) - 48);
  return n;
}

/**
 * One bit per possible value of a fixed number of digits: 10^9 bits (125 MB of address space)
 * for SSNs, 1.25 kB for last fours, 12.5 kB for ZIPs. The zero-filled buffer comes from the
 * operating system page by page, so a short list only touches a few pages.
 */
export class DigitBitmap implements NumericDistinctSet {
  private readonly bits: Uint8Array;
  size = 0;

  constructor(readonly digits: number) {
    if (digits < 1 || digits > 10) throw new RangeError(`DigitBitmap supports 1 to 10 digits, got ${digits}`);
    this.bits = new Uint8Array(Math.ceil(10 ** digits / 8));
  }

  add(value: string): boolean {
    return this.addNumber(digitsToNumber(value));
  }

  addNumber(n: number): boolean {
    const byte = Math.floor(n / 8);
    const mask = 1 << (n % 8);
    const bits = this.bits;
    if ((bits[byte]! & mask) !== 0) return false;
    bits[byte] = bits[byte]! | mask;
    this.size++;
    return true;
  }

  has(value: string): boolean {
    const n = digitsToNumber(value);
    return (this.bits[Math.floor(n / 8)]! & (1 << (n % 8))) !== 0;
  }
}

const EMPTY = 0;
const MAX_LOAD = 0.7;

/**
 * Open-addressing hash set of non-negative integers: 4-byte slots for values below 2^32 - 1
 * (`small`: SSNs, routing numbers), 8-byte slots up to 2^53 (phones). About 6 or 12 bytes per
 * distinct value, against ~80 for a Set of strings.
 */
export class NumericHashSet implements NumericDistinctSet {
  private slots: Uint32Array | Float64Array;
  private mask: number;
  size = 0;

  constructor(
    initialCapacity = 1 << 14,
    private readonly small = false,
  ) {
    let capacity = 16;
    while (capacity < initialCapacity) capacity *= 2;
    this.slots = small ? new Uint32Array(capacity) : new Float64Array(capacity);
    this.mask = capacity - 1;
  }

  /** Bytes per slot. */
  get slotBytes(): number {
    return this.small ? 4 : 8;
  }

  add(value: string): boolean {
    return this.addNumber(digitsToNumber(value));
  }

  /** `n` must be an integer in [0, 2^53 - 1). */
  addNumber(n: number): boolean {
    const stored = n + 1; // 0 marks an empty slot
    const slots = this.slots;
    const mask = this.mask;
    let i = hash(n) & mask;
    while (true) {
      const s = slots[i]!;
      if (s === EMPTY) break;
      if (s === stored) return false;
      i = (i + 1) & mask;
    }
    slots[i] = stored;
    this.size++;
    if (this.size > MAX_LOAD * slots.length) this.grow();
    return true;
  }

  hasNumber(n: number): boolean {
    const stored = n + 1;
    let i = hash(n) & this.mask;
    while (true) {
      const s = this.slots[i]!;
      if (s === EMPTY) return false;
      if (s === stored) return true;
      i = (i + 1) & this.mask;
    }
  }

  /** Slots allocated (8 bytes each). */
  get capacity(): number {
    return this.slots.length;
  }

  forEachNumber(fn: (n: number) => void): void {
    const slots = this.slots;
    for (let j = 0; j < slots.length; j++) if (slots[j] !== EMPTY) fn(slots[j]! - 1);
  }

  private grow(): void {
    const old = this.slots;
    this.slots = this.small ? new Uint32Array(old.length * 2) : new Float64Array(old.length * 2);
    this.mask = this.slots.length - 1;
    for (let j = 0; j < old.length; j++) {
      const s = old[j]!;
      if (s === EMPTY) continue;
      let i = hash(s - 1) & this.mask;
      while (this.slots[i] !== EMPTY) i = (i + 1) & this.mask;
      this.slots[i] = s;
    }
  }
}

/** Mixes both 32-bit halves (murmur3 finaliser), so numbers sharing low digits spread out. */
function hash(n: number): number {
  const lo = n >>> 0;
  const hi = n > 0xffffffff ? Math.floor(n / 4294967296) >>> 0 : 0;
  let h = lo ^ Math.imul(hi, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Fixed-width digit values (SSNs): a hash set while the list is short, switching to a
 * DigitBitmap when the hash table would grow past the bitmap's size. A million SSNs then
 * cost ~16 MB instead of 125 MB, and a hundred million still cost 125 MB.
 */
export class CompactDigitSet implements NumericDistinctSet {
  private hashed: NumericHashSet | undefined;
  private bitmap: DigitBitmap | undefined;
  /** Size at which the hash table would next grow past the bitmap's bytes. */
  private readonly switchAt: number;

  constructor(
    readonly digits: number,
    initialCapacity = 1 << 14,
  ) {
    const bitmapBytes = Math.ceil(10 ** digits / 8);
    this.hashed = new NumericHashSet(initialCapacity, 10 ** digits < 2 ** 32 - 1);
    let capacity = this.hashed.capacity;
    while (capacity * 2 * this.hashed.slotBytes < bitmapBytes) capacity *= 2;
    this.switchAt = Math.floor(MAX_LOAD * capacity);
  }

  get size(): number {
    return this.hashed ? this.hashed.size : this.bitmap!.size;
  }

  /** Which structure holds the values now (for tests and benchmarks). */
  get mode(): 'hash' | 'bitmap' {
    return this.hashed ? 'hash' : 'bitmap';
  }

  add(value: string): boolean {
    return this.addNumber(digitsToNumber(value));
  }

  addNumber(n: number): boolean {
    const hashed = this.hashed;
    if (hashed) {
      if (hashed.size >= this.switchAt && !hashed.hasNumber(n)) {
        this.bitmap = new DigitBitmap(this.digits);
        hashed.forEachNumber((m) => this.bitmap!.addNumber(m));
        this.hashed = undefined;
        return this.bitmap.addNumber(n);
      }
      return hashed.addNumber(n);
    }
    return this.bitmap!.addNumber(n);
  }
}

/** Below the engine's 2^24 limit with room to spare. */
const SHARD_LIMIT = 1 << 23;

/** Strings (emails, names): JavaScript Sets, a new one started whenever the last one fills up. */
export class LargeStringSet implements DistinctSet {
  private readonly shards: Set<string>[] = [new Set()];
  size = 0;

  constructor(private readonly shardLimit = SHARD_LIMIT) {}

  add(value: string): boolean {
    const shards = this.shards;
    for (let i = 0; i < shards.length; i++) if (shards[i]!.has(value)) return false;
    let last = shards[shards.length - 1]!;
    if (last.size >= this.shardLimit) {
      last = new Set();
      shards.push(last);
    }
    last.add(value);
    this.size++;
    return true;
  }

  get shardCount(): number {
    return this.shards.length;
  }
}

/** Hash tables start no bigger than this however large the input looks (8 or 16 MB). */
const MAX_PRESIZE = 1 << 21;

/**
 * Initial slots for about `expected` values: saves the rehashing of a growing table on big
 * files, within MAX_PRESIZE so that a file of repeats cannot make it large.
 */
function presize(expected: number | undefined): number {
  if (!expected || expected <= 0) return 1 << 14;
  let capacity = 1 << 14;
  while (capacity < MAX_PRESIZE && capacity * MAX_LOAD < expected) capacity *= 2;
  return capacity;
}

/** The structure suited to a kind of value; `expected` is a guess of how many will come. */
export function createDistinctSet(kind: ListValueKind, expected?: number): DistinctSet {
  switch (kind) {
    case 'ssn':
      return new CompactDigitSet(9, presize(expected));
    case 'ssn4':
      return new DigitBitmap(4);
    case 'zip':
      return new DigitBitmap(5);
    case 'phone':
      // 10^10 possible phones would be 1.25 GB of bits.
      return new NumericHashSet(presize(expected));
    case 'routing':
      // Routing lists are short (~28k numbers exist).
      return new NumericHashSet(1 << 10, true);
    case 'email':
    case 'name':
      return new LargeStringSet();
  }
}
