import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { sortByCustomer } from '../../../../src/ingest/lms/line-sort.js';
import { compareIds } from '../../../../src/ingest/lms/staging.js';
import { streamGroups } from '../../../../src/ingest/lms/stream.js';
import { TempFolder } from '../../../../src/ingest/lms/temp-folder.js';
import { MAX_FIELD_CHARS } from '../../../../src/ingest/table/reader.js';
import { IDENTITY_MAPPING } from '../../../../src/ingest/mapping/mapping.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-line-sort-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const HEADER = 'customer_id,loan_id,lead_id,loan_amount,applied_at,is_lead_loan,payment_id,payment_at';

/** The text in chunks of `chunk` characters, as the decoder hands them on (at most 64K characters). */
function source(text: string, chunk: number) {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += chunk) chunks.push(text.slice(i, i + chunk));
  return { name: 'export.csv', stream: Readable.from(chunks, { objectMode: true }), gzipped: false };
}

describe('the line sort', () => {
  it('hands the sorted text on in chunks of about the size asked for, the same text in all', async () => {
    const customers = Array.from({ length: 40 }, (_, i) => `C${String(39 - i).padStart(2, '0')}`);
    const lines = customers.flatMap((c) => [1, 2].map((p) => `${c},L1,x,100,2024-01-01,Y,P${p},2024-02-01\n`));
    const text = `${HEADER}\n${lines.join('')}`;
    const chunksOf = async (outChars: number | undefined, runChars?: number) => {
      const folder = new TempFolder(work);
      try {
        const sorted = await sortByCustomer(
          { input: source(text, 100), role: 'loans' },
          { mapping: IDENTITY_MAPPING, folder, outChars, runChars },
        );
        const chunks: string[] = [];
        for await (const chunk of sorted!.input.stream) chunks.push(chunk as string);
        return chunks;
      } finally {
        folder.close();
      }
    };
    const whole = await chunksOf(undefined);
    expect(whole).toHaveLength(1);
    for (const runChars of [undefined, 500]) {
      const small = await chunksOf(200, runChars);
      expect(small.join('')).toBe(whole[0]);
      // A chunk ends after the customer that takes it to 200 characters: two lines of 42 at most past it.
      expect(Math.max(...small.map((c) => c.length))).toBeLessThan(200 + 2 * 42);
      expect(small.length).toBeGreaterThan(10);
    }
  });

  it('never hands the reader a line over a megabyte, whose refusal would name the sorted row', async () => {
    // Row 2 holds a value past the reader's limit; row 3's customer sorts first, so in the sorted
    // text the long line is row 3. The line ends inside the chunk that brings its last 64K
    // characters: the cut never held it whole as an unfinished line.
    const long = `Z,L1,${'x'.repeat(MAX_FIELD_CHARS + 24)},100,2024-01-01,Y,P1,2024-02-01\n`;
    const text = `${HEADER}\n${long}A,L1,x,100,2024-01-01,Y,P1,2024-02-01\n`;
    const folder = new TempFolder(work);
    try {
      const sorted = await sortByCustomer(
        { input: source(text, 1 << 16), role: 'rows' },
        { mapping: IDENTITY_MAPPING, folder },
      );
      // Given up (the staging then names row 2), or read with the file's rows: never row 3.
      if (sorted === undefined) return;
      const groups = streamGroups(sorted.input, {
        mapping: IDENTITY_MAPPING,
        src: 0,
        problems: () => {},
        rows: sorted.rows,
      });
      let error: unknown;
      try {
        for await (const _ of groups);
      } catch (err) {
        error = err;
      }
      expect(String(error)).toMatch(/export\.csv, row 2, column 3: the value holds/);
    } finally {
      folder.close();
    }
  });

  it('sorts lines past its first buffer, a customer larger than a run among them, on disk', async () => {
    // One customer's 3,000 lines together (one piece, cut over many chunks, larger than a run and
    // than the buffer the lines are first encoded into), then customers taking turns; not ASCII.
    const lines: { customerId: string; row: number; text: string }[] = [];
    for (let i = 0; i < 5000; i++) {
      const customerId = i < 3000 ? 'M' : ['Ç', 'A', 'B😀'][i % 3]!;
      const text = `${customerId},L${i % 7},é€${i},100,2024-01-01,Y,P${i},2024-02-01\n`;
      lines.push({ customerId, row: i + 2, text });
    }
    const text = `${HEADER}\n${lines.map((l) => l.text).join('')}`;
    const expected = [...lines].sort((a, b) => compareIds(a.customerId, b.customerId) || a.row - b.row);
    const folder = new TempFolder(work);
    try {
      const sorted = await sortByCustomer(
        { input: source(text, 1 << 16), role: 'rows' },
        { mapping: IDENTITY_MAPPING, folder, runChars: 50_000 },
      );
      expect(sorted).toBeDefined();
      expect(readdirSync(folder.dir).filter((name) => name.endsWith('.run.text')).length).toBeGreaterThan(2);
      let out = '';
      for await (const part of sorted!.input.stream) out += part as string;
      expect(out).toBe(`${HEADER}\n${expected.map((l) => l.text).join('')}`);
      expect(sorted!.rows.of(1)).toBe(1);
      expected.forEach((l, i) => expect(sorted!.rows.of(i + 2)).toBe(l.row));
    } finally {
      folder.close();
    }
  });

  it('holds lines across slabs: a line, and a character, split between two slabs, on disk and in memory', async () => {
    // Slabs of 16 bytes: nearly every line spans two or more, and characters of 2 to 4 bytes fall
    // on their edges at every offset; the rows' numbers span chunks of 4 as well.
    const lines: { customerId: string; row: number; text: string }[] = [];
    for (let i = 0; i < 400; i++) {
      const customerId = ['B😀', 'A', 'Ç'][i % 3]!;
      const text = `${customerId},L${i % 5},${['é', 'é€', '€😀', '😀😀é'][i % 4]}${'x'.repeat(i % 11)},1,2024-01-01,Y,P${i},\n`;
      lines.push({ customerId, row: i + 2, text });
    }
    const text = `${HEADER}\n${lines.map((l) => l.text).join('')}`;
    const expected = [...lines].sort((a, b) => compareIds(a.customerId, b.customerId) || a.row - b.row);
    for (const runChars of [1000, 1 << 20]) {
      const folder = new TempFolder(work);
      try {
        const sorted = await sortByCustomer(
          { input: source(text, 777), role: 'rows' },
          { mapping: IDENTITY_MAPPING, folder, runChars, slabBytes: 16 },
        );
        expect(sorted).toBeDefined();
        const runs = readdirSync(folder.dir).filter((name) => name.endsWith('.run.text')).length;
        expect(runs > 2).toBe(runChars === 1000);
        let out = '';
        for await (const part of sorted!.input.stream) out += part as string;
        expect(out).toBe(`${HEADER}\n${expected.map((l) => l.text).join('')}`);
        expected.forEach((l, i) => expect(sorted!.rows.of(i + 2)).toBe(l.row));
      } finally {
        folder.close();
      }
    }
  });
});
