import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Chunker, customersBody, type Chunk } from '../../../../src/jobs/push/chunker.js';
import type { ValidCustomer } from '../../../../src/jobs/push/validate.js';

// Generated customers (multi-byte text included) and limits, against what a body must be: the
// customers' JSON in order, comma-separated, in the batch envelope; greedy cuts within both limits.

const body = (jsons: readonly string[]) => `{"customers":[${jsons.join(',')}]}`;

function customer(id: string, text: string): ValidCustomer {
  const json = JSON.stringify({ customer_id: id, text });
  return { customerId: id, json, loans: 1, payments: 0, trace: { customerId: id, src: 0, row: 1, loans: [] } };
}

const scenario = fc.record({
  texts: fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 30 })), {
    maxLength: 60,
  }),
  maxCustomers: fc.integer({ min: 1, max: 8 }),
  maxBytes: fc.integer({ min: 20, max: 400 }),
  // Which chunks are released (answered) as soon as they close: their buffers go back to the pool.
  releaseMask: fc.array(fc.boolean(), { minLength: 60, maxLength: 60 }),
  slice: fc.tuple(fc.nat(), fc.nat()),
});

describe('Chunker (generated customers and limits)', () => {
  it('cuts greedily within both limits, and every body is the customers in order, byte for byte', () => {
    fc.assert(
      fc.property(scenario, ({ texts, maxCustomers, maxBytes, releaseMask, slice }) => {
        const list = texts.map((t, i) => customer(`C${i}`, t));
        const jsons = list.map((c) => c.json);
        const chunker = new Chunker({ maxCustomers, maxBytes });
        const chunks: Chunk[] = [];
        const released = new Set<number>();
        const close = (chunk: Chunk | undefined) => {
          if (!chunk) return;
          chunks.push(chunk);
          if (releaseMask[chunk.index % releaseMask.length]) {
            chunk.release();
            released.add(chunk.index);
          }
        };
        for (const c of list) close(chunker.add(c));
        close(chunker.finish());

        expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
        expect(chunks.flatMap((c) => c.customers.map((x) => x.customerId))).toEqual(list.map((c) => c.customerId));
        let at = 0;
        for (const [k, chunk] of chunks.entries()) {
          const own = jsons.slice(at, at + chunk.customers.length);
          at += chunk.customers.length;
          expect(chunk.customers.length).toBeGreaterThan(0);
          expect(chunk.customers.length).toBeLessThanOrEqual(maxCustomers);
          expect(chunk.bytes).toBe(Buffer.byteLength(body(own)));
          if (chunk.customers.length > 1) expect(chunk.bytes).toBeLessThanOrEqual(maxBytes);
          const next = chunks[k + 1];
          if (next) {
            // Greedy: the next customer did not fit in this chunk.
            const withNext = Buffer.byteLength(body([...own, jsons[at]!]));
            expect(chunk.customers.length === maxCustomers || withNext > maxBytes).toBe(true);
          }
          if (released.has(chunk.index)) {
            expect(() => customersBody(chunk.customers)).toThrow(/released/);
            expect(() => chunk.customers[0]!.json).toThrow(/released/);
            continue;
          }
          const whole = customersBody(chunk.customers);
          expect(whole.toString('utf8')).toBe(body(own));
          // The bytes written while chunking are sent as they are: a view of them, never a copy.
          const again = customersBody(chunk.customers);
          expect(again.buffer === whole.buffer && again.byteOffset === whole.byteOffset).toBe(true);
          expect(chunk.customers.map((c) => c.json)).toEqual(own);
          // A run of a chunk's customers (a split request), and the same customers out of order.
          const from = slice[0] % chunk.customers.length;
          const to = from + 1 + (slice[1] % (chunk.customers.length - from));
          const part = chunk.customers.slice(from, to);
          expect(customersBody(part).toString('utf8')).toBe(body(own.slice(from, to)));
          const reversed = [...chunk.customers].reverse();
          expect(customersBody(reversed).toString('utf8')).toBe(body([...own].reverse()));
        }
        expect(at).toBe(list.length);
      }),
      { numRuns: 300 },
    );
  });

  it('writes the empty batch for no customers, and builds a body for customers it never placed', () => {
    expect(customersBody([]).toString()).toBe('{"customers":[]}');
    const loose = [customer('A', 'é'), customer('B', '')];
    expect(customersBody(loose).toString()).toBe(body(loose.map((c) => c.json)));
  });

  it('a customer larger than the byte limit travels alone', () => {
    const big = customer('BIG', 'x'.repeat(500));
    const chunker = new Chunker({ maxCustomers: 10, maxBytes: 100 });
    expect(chunker.add(customer('A', 'a'))).toBeUndefined();
    const first = chunker.add(big);
    expect(first?.customers.map((c) => c.customerId)).toEqual(['A']);
    const second = chunker.add(customer('B', 'b'));
    expect(second?.customers.map((c) => c.customerId)).toEqual(['BIG']);
    expect(customersBody(second!.customers).toString()).toBe(body([big.json]));
    expect(chunker.finish()?.customers.map((c) => c.customerId)).toEqual(['B']);
  });
});
