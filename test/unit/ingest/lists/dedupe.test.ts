import { describe, expect, it } from 'vitest';
import {
  CompactDigitSet,
  createDistinctSet,
  DigitBitmap,
  digitsToNumber,
  LargeStringSet,
  NumericHashSet,
} from '../../../../src/ingest/lists/dedupe.js';

/** Deterministic pseudo-random integers below `max`. */
function numbers(count: number, max: number, seed = 7): number[] {
  let s = seed;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(Math.floor((s / 4294967296) * max));
  }
  return out;
}

/** The reference answer: which adds a Set says are new. */
function expected(values: number[]): boolean[] {
  const seen = new Set<number>();
  return values.map((v) => (seen.has(v) ? false : (seen.add(v), true)));
}

describe('digitsToNumber', () => {
  it('parses fixed-width digit strings, leading zeros included', () => {
    expect(digitsToNumber('000000001')).toBe(1);
    expect(digitsToNumber('078051120')).toBe(78051120);
    expect(digitsToNumber('9999999999')).toBe(9999999999);
  });
});

describe('DigitBitmap', () => {
  it('reports each value new exactly once', () => {
    const set = new DigitBitmap(4);
    expect(set.add('0123')).toBe(true);
    expect(set.add('0123')).toBe(false);
    expect(set.add('1230')).toBe(true);
    expect(set.add('0000')).toBe(true);
    expect(set.add('9999')).toBe(true);
    expect(set.size).toBe(4);
    expect(set.has('0123')).toBe(true);
    expect(set.has('0124')).toBe(false);
  });

  it('agrees with a Set on random values', () => {
    const values = numbers(50_000, 100_000);
    const set = new DigitBitmap(5);
    expect(values.map((v) => set.addNumber(v))).toEqual(expected(values));
    expect(set.size).toBe(new Set(values).size);
  });
});

describe('NumericHashSet', () => {
  it('agrees with a Set through many growths, for phone-sized numbers', () => {
    const values = numbers(200_000, 9_999_999_999).map((v, i) => (i % 5 === 0 ? 2_000_000_000 + (i % 1000) : v));
    const set = new NumericHashSet(16);
    expect(values.map((v) => set.addNumber(v))).toEqual(expected(values));
    expect(set.size).toBe(new Set(values).size);
    expect(set.capacity).toBeGreaterThan(set.size);
  });

  it('handles zero and values above 2^32 (phones) in 8-byte slots', () => {
    const set = new NumericHashSet();
    expect(set.addNumber(0)).toBe(true);
    expect(set.addNumber(0)).toBe(false);
    expect(set.add('9999999999')).toBe(true);
    expect(set.hasNumber(9999999999)).toBe(true);
    expect(set.hasNumber(9999999998)).toBe(false);
    expect(set.slotBytes).toBe(8);
  });

  it('uses 4-byte slots for 9-digit values and still agrees with a Set', () => {
    const values = numbers(30_000, 999_999_999);
    const set = new NumericHashSet(16, true);
    expect(set.slotBytes).toBe(4);
    expect(values.map((v) => set.addNumber(v))).toEqual(expected(values));
  });
});

describe('CompactDigitSet', () => {
  it('starts as a hash set and moves to a bitmap when that is smaller, losing nothing', () => {
    // 5 digits: the bitmap is 12.5 kB, smaller than the first hash table: it switches at its first growth.
    const set = new CompactDigitSet(5);
    expect(set.mode).toBe('hash');
    const values = numbers(40_000, 100_000);
    expect(values.map((v) => set.addNumber(v))).toEqual(expected(values));
    expect(set.mode).toBe('bitmap');
    expect(set.size).toBe(new Set(values).size);
    // Values added before the switch are still known.
    expect(set.addNumber(values[0]!)).toBe(false);
  });

  it('stays a hash set for a short SSN list', () => {
    const set = new CompactDigitSet(9);
    for (const v of numbers(1000, 999_999_999)) set.addNumber(v);
    expect(set.mode).toBe('hash');
  });
});

describe('LargeStringSet', () => {
  it('opens a new shard when one fills up, and still finds values in the earlier ones', () => {
    const set = new LargeStringSet(100);
    for (let i = 0; i < 250; i++) expect(set.add(`user${i}@example.com`)).toBe(true);
    expect(set.shardCount).toBe(3);
    expect(set.add('user5@example.com')).toBe(false);
    expect(set.add('user150@example.com')).toBe(false);
    expect(set.add('user249@example.com')).toBe(false);
    expect(set.size).toBe(250);
  });
});

describe('createDistinctSet', () => {
  it('chooses a structure per kind', () => {
    expect(createDistinctSet('ssn')).toBeInstanceOf(CompactDigitSet);
    expect(createDistinctSet('ssn4')).toBeInstanceOf(DigitBitmap);
    expect(createDistinctSet('zip')).toBeInstanceOf(DigitBitmap);
    expect(createDistinctSet('phone')).toBeInstanceOf(NumericHashSet);
    expect(createDistinctSet('routing')).toBeInstanceOf(NumericHashSet);
    expect(createDistinctSet('email')).toBeInstanceOf(LargeStringSet);
    expect(createDistinctSet('name')).toBeInstanceOf(LargeStringSet);
  });
});
