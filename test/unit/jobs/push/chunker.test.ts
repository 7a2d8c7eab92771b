import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Chunker, customerJson, customersBody, type Chunk } from '../../../../src/jobs/push/chunker.js';
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
        const jsons = list.map(customerJson);
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
            expect(() => customerJson(chunk.customers[0]!)).toThrow(/released/);
            continue;
          }
          const whole = customersBody(chunk.customers);
          expect(whole.toString('utf8')).toBe(body(own));
          // The bytes written while chunking are sent as they are: a view of them, never a copy.
          const again = customersBody(chunk.customers);
          expect(again.buffer === whole.buffer && again.byteOffset === whole.byteOffset).toBe(true);
          expect(chunk.customers.map(customerJson)).toEqual(own);
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

  it('refuses to make up the JSON of a customer that has none and was never placed', () => {
    const none = { ...customer('N', 'n'), json: undefined };
    expect(() => customerJson(none)).toThrow(/customer N has no JSON/);
    expect(() => customersBody([none])).toThrow(/customer N has no JSON/);
  });

  it('writes the empty batch for no customers, and builds a body for customers it never placed', () => {
    expect(customersBody([]).toString()).toBe('{"customers":[]}');
    const loose = [customer('A', 'é'), customer('B', '')];
    expect(customersBody(loose).toString()).toBe(body(loose.map(customerJson)));
  });

  it('a customer larger than the byte limit travels alone', () => {
    const big = customer('BIG', 'x'.repeat(500));
    const chunker = new Chunker({ maxCustomers: 10, maxBytes: 100 });
    expect(chunker.add(customer('A', 'a'))).toBeUndefined();
    const first = chunker.add(big);
    expect(first?.customers.map((c) => c.customerId)).toEqual(['A']);
    const second = chunker.add(customer('B', 'b'));
    expect(second?.customers.map((c) => c.customerId)).toEqual(['BIG']);
    expect(customersBody(second!.customers).toString()).toBe(body([customerJson(big)]));
    expect(chunker.finish()?.customers.map((c) => c.customerId)).toEqual(['B']);
  });
});

describe('Chunker with bodies larger than a first buffer', () => {
  const KB = 1024;
  // A body is first given room for a whole chunk, up to a bound (32 MiB): 64 KiB here, to reach past it.
  const FIRST = 64 * KB;

  it('grows a body past its first buffer, by doubling or to what one customer needs, byte for byte', () => {
    const chunker = new Chunker({ maxCustomers: 100, maxBytes: 4 * KB * KB }, FIRST);
    // Small customers, then one larger than twice what the body holds so far.
    const list = [
      ...Array.from({ length: 5 }, (_, i) => customer(`S${i}`, 'é'.repeat(10 * KB))),
      customer('HUGE', 'x'.repeat(300 * KB)),
      customer('AFTER', 'y'.repeat(70 * KB)),
    ];
    for (const c of list) expect(chunker.add(c)).toBeUndefined();
    const chunk = chunker.finish()!;
    const jsons = list.map(customerJson);
    expect(customersBody(chunk.customers).toString('utf8')).toBe(body(jsons));
    expect(chunk.bytes).toBe(Buffer.byteLength(body(jsons)));
    expect(chunk.customers.map(customerJson)).toEqual(jsons);
  });

  it('a customer alone larger than the first buffer gets a body of its own size', () => {
    const chunker = new Chunker({ maxCustomers: 10, maxBytes: 1000 }, FIRST);
    const huge = customer('HUGE', 'z'.repeat(200 * KB));
    chunker.add(huge);
    const chunk = chunker.finish()!;
    expect(customersBody(chunk.customers).toString('utf8')).toBe(body([customerJson(huge)]));
  });

  it('the next chunk after a large one is cut right, in a body of its own', () => {
    const chunker = new Chunker({ maxCustomers: 2, maxBytes: 2 * KB * KB }, FIRST);
    const list = Array.from({ length: 6 }, (_, i) => customer(`C${i}`, String(i).repeat(100 * KB)));
    const chunks: Chunk[] = [];
    for (const c of list) {
      const closed = chunker.add(c);
      if (closed) chunks.push(closed);
    }
    chunks.push(chunker.finish()!);
    expect(chunks.map((c) => customersBody(c.customers).toString('utf8'))).toEqual([
      body([customerJson(list[0]!), customerJson(list[1]!)]),
      body([customerJson(list[2]!), customerJson(list[3]!)]),
      body([customerJson(list[4]!), customerJson(list[5]!)]),
    ]);
  });

  it('a chunk released twice gives its buffer back once: the two chunks after it never share one', () => {
    const chunker = new Chunker({ maxCustomers: 1, maxBytes: KB * KB }, FIRST);
    const first = chunker.add(customer('A', 'a'.repeat(100)));
    expect(first).toBeUndefined();
    const a = chunker.add(customer('B', 'b'.repeat(100)))!;
    a.release();
    a.release();
    const b = chunker.add(customer('C', 'c'.repeat(100)))!;
    const c = chunker.add(customer('D', 'd'.repeat(100)))!;
    const d = chunker.finish()!;
    expect(customersBody(b.customers).toString()).toBe(
      body([JSON.stringify({ customer_id: 'B', text: 'b'.repeat(100) })]),
    );
    expect(customersBody(c.customers).toString()).toBe(
      body([JSON.stringify({ customer_id: 'C', text: 'c'.repeat(100) })]),
    );
    expect(customersBody(d.customers).toString()).toBe(
      body([JSON.stringify({ customer_id: 'D', text: 'd'.repeat(100) })]),
    );
  });

  it('buffers given back are used again for later chunks, without mixing bytes', () => {
    const chunker = new Chunker({ maxCustomers: 3, maxBytes: KB * KB }, FIRST);
    const list = Array.from({ length: 30 }, (_, i) => customer(`C${i}`, 'é'.repeat((i * 7919) % 3000)));
    const open: { chunk: Chunk; jsons: string[] }[] = [];
    let k = 0;
    const take = (chunk: Chunk | undefined) => {
      if (!chunk) return;
      open.push({ chunk, jsons: chunk.customers.map(customerJson) });
      // Answered out of order: every other chunk at once, the rest later.
      if (k++ % 2 === 0) open.shift()!.chunk.release();
    };
    for (const c of list) take(chunker.add(c));
    take(chunker.finish());
    for (const { chunk, jsons } of open) expect(customersBody(chunk.customers).toString('utf8')).toBe(body(jsons));
  });
});

describe('Chunker bodies, allocated once', () => {
  it('gives every body room for a whole chunk, so a released one takes the next chunk whatever its size', () => {
    // Chunks growing by 10 KB, each released before the next: sized from the last chunk, a body
    // given back was too small for the next one, and each chunk took a new buffer.
    const chunker = new Chunker({ maxCustomers: 1, maxBytes: 1024 * 1024 });
    const buffers = new Set<ArrayBufferLike>();
    let previous = chunker.add(customer('C0', 'x'.repeat(100_000)));
    for (let i = 1; i <= 12; i++) {
      const next = chunker.add(customer(`C${i}`, 'x'.repeat(100_000 + 10_000 * i)));
      buffers.add(customersBody(next!.customers).buffer);
      next!.release();
      previous = next;
    }
    expect(previous).toBeDefined();
    // Two take turns: a chunk is closed (and answered) only once the next customer has a body.
    expect(buffers.size).toBe(2);
  });
});

describe('Chunker at the exact edges', () => {
  const FIRST = 64 * 1024;
  /** A customer whose JSON is exactly `size` bytes. */
  function sized(id: string, size: number): ValidCustomer {
    const bare = Buffer.byteLength(JSON.stringify({ customer_id: id, text: '' }));
    return customer(id, 'x'.repeat(size - bare));
  }

  it('a chunk that reaches the byte limit exactly keeps the customer that fills it', () => {
    const a = sized('A', 40);
    const b = sized('B', 40);
    // 14 + 40 + 1 + 40 + 2 = 97 bytes: a limit of 97 takes both, 96 does not.
    const exact = new Chunker({ maxCustomers: 10, maxBytes: 97 }, FIRST);
    exact.add(a);
    expect(exact.add(b)).toBeUndefined();
    expect(exact.finish()!.bytes).toBe(97);
    const under = new Chunker({ maxCustomers: 10, maxBytes: 96 }, FIRST);
    under.add(sized('A', 40));
    expect(under.add(sized('B', 40))?.customers.map((c) => c.customerId)).toEqual(['A']);
  });

  it('two customers that fill the first buffer to its last byte, or one byte past it, make whole bodies', () => {
    for (const total of [65_518, 65_519, 65_520, 65_521]) {
      const chunker = new Chunker({ maxCustomers: 10, maxBytes: 1024 * 1024 }, FIRST);
      const a = sized('A', 1000);
      const b = sized('B', total - 1000);
      chunker.add(a);
      chunker.add(b);
      const chunk = chunker.finish()!;
      const text = customersBody(chunk.customers).toString('utf8');
      expect(text.length, `customers of ${total} bytes`).toBe(total + 17);
      expect(text).toBe(body([customerJson(a), customerJson(b)]));
    }
  });

  it('customers from two chunks that happen to sit at the same places are not taken for one run', () => {
    const chunker = new Chunker({ maxCustomers: 2, maxBytes: 1024 * 1024 }, FIRST);
    const list = [sized('A0', 50), sized('A1', 50), sized('B0', 50), sized('B1', 50)];
    const chunks: Chunk[] = [];
    for (const c of list) {
      const closed = chunker.add(c);
      if (closed) chunks.push(closed);
    }
    chunks.push(chunker.finish()!);
    const [a, b] = chunks;
    const mixed = [a!.customers[0]!, b!.customers[1]!];
    expect(customersBody(mixed).toString()).toBe(body(mixed.map(customerJson)));
  });

  it('a placed customer followed by one never placed makes a body of both', () => {
    const chunker = new Chunker({ maxCustomers: 5, maxBytes: 1024 * 1024 }, FIRST);
    const placed = sized('P', 40);
    chunker.add(placed);
    const chunk = chunker.finish()!;
    const loose = sized('L', 30);
    expect(customersBody([chunk.customers[0]!, loose]).toString()).toBe(
      body([customerJson(placed), customerJson(loose)]),
    );
  });
});
