import fc from 'fast-check';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { openInput } from '../../src/ingest/sources.js';
import { TableReader, tableBatches } from '../../src/ingest/table/reader.js';

/**
 * Files as other systems write them: random cells (delimiters, quotes, CR, LF, non-ASCII), each
 * record ending in its own CRLF, LF or CR, quoting where needed or everywhere, a BOM or not, a final
 * line break or not, fed in random pieces. The reader must give back exactly the generated rows.
 * The seed is printed; FC_SEED=… replays a failure.
 */
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
console.log(`table reader property tests: seed ${seed} (replay with FC_SEED=${seed})`);
const params = (numRuns: number) => ({ seed, numRuns });

const DELIMITERS = [',', ';', '\t', '|'] as const;
const EOLS = ['\r\n', '\n', '\r'] as const;
const cellChars = fc.constantFrom('a', 'Z', '7', ' ', ',', ';', '\t', '|', '"', '\r', '\n', 'é', '€', '😀', '=', '-');
const cell = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: fc.constantFrom('a', 'b', '1', ' ', '.'), maxLength: 8 }) },
  { weight: 2, arbitrary: fc.string({ unit: cellChars, maxLength: 10 }) },
);
const table = fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 });

interface Written {
  text: string;
  rows: string[][];
}

function quote(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}

function write(
  rows: string[][],
  delimiter: string,
  eols: string[],
  quoteAll: boolean,
  finalEol: boolean,
  bom: boolean,
): Written {
  const lines = rows.map((cells) =>
    cells
      .map((c) =>
        quoteAll || c.includes(delimiter) || /["\r\n]/.test(c) || (cells.length === 1 && c === '') ? quote(c) : c,
      )
      .join(delimiter),
  );
  let text = bom ? '\ufeff' : '';
  lines.forEach((line, i) => {
    text += line;
    if (i < lines.length - 1 || finalEol) text += eols[i % eols.length];
  });
  return { text, rows };
}

function readAll(pieces: string[], delimiter: string): string[][] {
  const out: string[][] = [];
  const reader = new TableReader({ delimiter, file: 'generated.csv' });
  for (const piece of pieces) reader.write(piece, (cells) => out.push(cells));
  reader.end((cells) => out.push(cells));
  return out;
}

function cutAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * text.length)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let last = 0;
  for (const p of points) {
    if (p > last) pieces.push(text.slice(last, p));
    last = Math.max(last, p);
  }
  pieces.push(text.slice(last));
  return pieces.filter((p) => p.length);
}

const file = fc.record({
  rows: table,
  delimiter: fc.constantFrom(...DELIMITERS),
  eols: fc.array(fc.constantFrom(...EOLS), { minLength: 1, maxLength: 3 }),
  quoteAll: fc.boolean(),
  finalEol: fc.boolean(),
  bom: fc.boolean(),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
});

describe('the one tabular reader on generated files', () => {
  it('gives back exactly the generated rows, whatever the line endings, quoting, BOM and chunking (1,000 files)', () => {
    fc.assert(
      fc.property(file, ({ rows, delimiter, eols, quoteAll, finalEol, bom, cuts }) => {
        const { text } = write(rows, delimiter, eols, quoteAll, finalEol, bom);
        expect(readAll(cutAt(text, cuts), delimiter)).toEqual(rows);
      }),
      params(1000),
    );
  });

  it('names the row of a quote never closed (the last row: a later quote would close it), and reads every row before it', () => {
    fc.assert(
      fc.property(table, fc.constantFrom(...EOLS), (rows, eol) => {
        const bad = rows.length - 1;
        const lines = rows.map((cells) => cells.map(quote).join(','));
        lines[bad] = `${lines[bad]},"never closed`;
        const seen: string[][] = [];
        const reader = new TableReader({ delimiter: ',', file: 'broken.csv' });
        let error: unknown;
        try {
          reader.write(lines.join(eol), (cells) => seen.push(cells));
          reader.end((cells) => seen.push(cells));
        } catch (err) {
          error = err;
        }
        expect(error).toBeInstanceOf(InputError);
        expect((error as InputError).location).toMatchObject({ file: 'broken.csv', row: bad + 1 });
        expect(seen).toEqual(rows.slice(0, bad));
      }),
      params(300),
    );
  });

  it('reads the same rows from UTF-8, UTF-16LE, Latin-1 and gzip bytes through openInput (200 files)', async () => {
    await fc.assert(
      fc.asyncProperty(table, fc.constantFrom('utf-8', 'utf-16le', 'latin1', 'gzip'), async (rows, how) => {
        const latin = rows.map((cells) => cells.map((c) => c.replace(/[^\x00-\xff]/gu, 'x')));
        const expected = how === 'latin1' ? latin : rows;
        const { text } = write(expected, ',', ['\r\n', '\n'], false, true, false);
        let bytes: Buffer;
        if (how === 'utf-16le') bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
        else if (how === 'latin1') bytes = Buffer.from(text, 'latin1');
        else if (how === 'gzip') bytes = gzipSync(Buffer.from(text, 'utf8'));
        else bytes = Buffer.from(text, 'utf8');
        const input = await openInput('-', {
          stdin: Readable.from([bytes]) as never,
          cwd: '/',
          input: how === 'latin1' ? { encoding: 'latin1' } : {},
        });
        const got: string[][] = [];
        for await (const batch of tableBatches(input, { delimiter: ',' })) for (const r of batch) got.push(r.cells);
        expect(got).toEqual(expected.filter((cells) => !(cells.length === 1 && cells[0] === '')));
      }),
      params(200),
    );
  });
});
