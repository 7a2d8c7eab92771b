import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonDocumentReader } from '../../src/ingest/lms/json-document.js';

/**
 * The streaming JSON reader of batch-shape exports against JSON.parse: generated documents (an
 * array of any JSON values, or an object with a "customers" array among other members), written
 * compact or indented, cut in random pieces, give the same records in the same order.
 * The seed is printed; FC_SEED=… replays a failure.
 */
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
console.log(`JSON document reader: seed ${seed} (replay with FC_SEED=${seed})`);

const items = fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 8 });
const others = fc.dictionary(
  fc.string({ maxLength: 6 }).filter((k) => k !== 'customers' && k !== '__proto__'),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);
const document = fc.record({
  items,
  wrapped: fc.boolean(),
  before: others,
  after: others,
  indent: fc.constantFrom(undefined, 0, 1, 2, '\t'),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
});

function cutAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * text.length)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let last = 0;
  for (const p of points) {
    if (p > last) pieces.push(text.slice(last, p));
    last = p;
  }
  pieces.push(text.slice(last));
  return pieces;
}

describe('the JSON document reader reads what JSON.parse reads', () => {
  it('the same records, in order, from 1,000 generated documents in random pieces', () => {
    fc.assert(
      fc.property(document, ({ items, wrapped, before, after, indent, cuts }) => {
        const value = wrapped ? { ...before, customers: items, ...after } : items;
        const text = JSON.stringify(value, null, indent);
        const got: unknown[] = [];
        const reader = new JsonDocumentReader('generated.json', 'customers', (v, position) => {
          expect(position).toBe(got.length + 1);
          got.push(v);
        });
        for (const piece of cutAt(text, cuts)) reader.write(piece);
        expect(reader.end()).toBe(items.length);
        // JSON.parse is the reference (it turns -0 into 0 as the reader does).
        expect(got).toEqual(JSON.parse(JSON.stringify(items)));
      }),
      { seed, numRuns: 1000 },
    );
  });
});
