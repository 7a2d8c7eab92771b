import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ENTRY_HEX, RawIndex } from '../../../../src/jobs/delta/raw-index.js';
import { DeltaRecord } from '../../../../src/jobs/delta/record.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-raw-index-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const defaultMax = DeltaRecord.rawIndexMax;
afterEach(() => {
  DeltaRecord.rawIndexMax = defaultMax;
});

const hex = (bytes: number[]) => Buffer.from(bytes).toString('hex');
const counts = (n: number) => n.toString(16).padStart(8, '0');

describe('RawIndex', () => {
  it('finds every digest it holds with its counts, and nothing else (property)', () => {
    const digest = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => Buffer.from(a));
    fc.assert(
      fc.property(
        fc.uniqueArray(digest, { selector: (d) => d.toString('hex'), maxLength: 60 }),
        digest,
        (held, other) => {
          const entries = [...held].reverse();
          const index = new RawIndex(entries.map((d, i) => hex([...d]) + counts(i) + counts(i * 1000 + 7)).join(''));
          expect(index.size).toBe(held.length);
          entries.forEach((d, i) =>
            expect(index.find(d.toString('hex'))).toEqual({ loans: i, payments: i * 1000 + 7 }),
          );
          if (!held.some((d) => d.equals(other))) expect(index.find(other.toString('hex'))).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it("tells apart digests whose first 32 bits are the same (the table's key), however many (property)", () => {
    const tail = fc.uint8Array({ minLength: 12, maxLength: 12 }).map((a) => Buffer.from(a).toString('hex'));
    fc.assert(
      fc.property(
        fc.constantFrom('00000000', 'ffffffff', '7fffffff', 'a1b2c3d4'),
        fc.uniqueArray(tail, { maxLength: 40 }),
        tail,
        (first, tails, otherTail) => {
          const index = new RawIndex(tails.map((t, i) => first + t + counts(i) + counts(i + 1)).join(''));
          expect(index.size).toBe(tails.length);
          tails.forEach((t, i) => expect(index.find(first + t)).toEqual({ loans: i, payments: i + 1 }));
          if (!tails.includes(otherTail)) expect(index.find(first + otherTail)).toBeUndefined();
          // Only whole digests match: a prefix or a digest with its counts is not one.
          if (tails.length > 0) {
            expect(index.find(first + tails[0]!.slice(0, -2))).toBeUndefined();
            expect(index.find(first + tails[0]! + counts(0))).toBeUndefined();
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('an empty record holds nothing; a string that is not whole entries is refused', () => {
    expect(new RawIndex('').find('00'.repeat(16))).toBeUndefined();
    expect(() => new RawIndex('AB'.repeat(ENTRY_HEX / 2 + 1))).toThrow();
  });
});

describe("the record's raw lookups, read at once or one at a time", () => {
  function record(name: string) {
    return DeltaRecord.open(
      join(work, name, 'state'),
      join(work, name, 'config'),
      {
        profile: 'p',
        baseUrl: 'http://127.0.0.1:1',
      },
      true,
    )!;
  }

  it('give the same answers: recorded lines with their counts, only beside the payload, recent, of another run', () => {
    const answers: unknown[] = [];
    for (const max of [defaultMax, 0]) {
      DeltaRecord.rawIndexMax = max;
      const r = record(`same-${max}`);
      const lines = r.rawDigester('context');
      const customer = (n: number) => ({
        id: r.digest('customer', `c${n}`),
        payload: r.digest('payload', `p${n}`),
        raw: { digest: lines(`lines of ${n}`), loans: n, payments: 10 * n },
      });
      r.settle([customer(1), customer(2)], [], 100, 'old');
      r.settle([customer(3)], [], 500, 'this');
      r.settle([customer(4)], [], 10, 'older');
      // A payload sent since by a version that kept no raw digest: the lines no longer count.
      r.settle([{ id: r.digest('customer', 'c2'), payload: r.digest('payload', 'other') }], [], 100, 'old');
      const asked = [1, 2, 3, 4, 5].map((n) => lines(`lines of ${n}`));
      answers.push(r.knownRaw(asked, 'this', 50));
      r.close();
    }
    expect(answers[0]).toEqual([{ loans: 1, payments: 10 }, undefined, undefined, undefined, undefined]);
    expect(answers[1]).toEqual(answers[0]);
  });
});
