import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { TableReader } from '../../src/ingest/table/reader.js';

/**
 * The one table reader against csv-parse, the library it stands in for (kept because it is several
 * times faster: test/bench/table-reader.bench.mjs), on generated files that are not written by the
 * reader's own writer: plain, quoted and long cells, empty cells, quotes inside cells (doubled, or
 * stray: which both must refuse), delimiters , ; tab |, each record ending in its own CRLF, LF or
 * CR, a BOM or not, a final line break or not, a quote left open at the end. csv-parse reads the
 * whole text; the table reader reads it in random pieces. Same rows, or both refuse.
 * The seed is printed; FC_SEED=… replays a failure (fast-check also prints seed and path).
 */
const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
console.log(`table reader vs csv-parse: seed ${seed} (replay with FC_SEED=${seed})`);

const DELIMITERS = [',', ';', '\t', '|'] as const;
const EOLS = ['\r\n', '\n', '\r'] as const;
// What csv-parse is told so that it reads as the table reader does: each record ends at its own
// CRLF, LF or CR; a leading BOM is not data; rows may differ in length.
const CSV_PARSE = { record_delimiter: ['\r\n', '\n', '\r'], bom: true, relax_column_count: true };

const anyChar = fc.constantFrom('a', 'Z', '7', ' ', ',', ';', '\t', '|', '"', '\r', '\n', 'é', '€', '😀', '=', '-');
const textOf = (delimiter: string, maxLength: number) =>
  fc
    .string({ unit: anyChar, maxLength })
    .map((s) => [...s].filter((c) => c !== delimiter && c !== '"' && c !== '\r' && c !== '\n').join(''));
const quoted = (value: string) => `"${value.replaceAll('"', '""')}"`;

/** One cell as it is written in the file, for a delimiter. */
function cellText(delimiter: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: textOf(delimiter, 10) },
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 10, arbitrary: fc.string({ unit: anyChar, maxLength: 12 }).map(quoted) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.string({ unit: anyChar, minLength: 1, maxLength: 8 }), fc.integer({ min: 300, max: 20_000 }))
        .map(([unit, times]) => unit.repeat(Math.ceil(times / unit.length)))
        .chain((long) =>
          fc.constantFrom(
            quoted(long),
            [...long].filter((c) => c !== delimiter && c !== '"' && c !== '\r' && c !== '\n').join(''),
          ),
        ),
    },
  );
}

/** What a file may get wrong, which both readers must refuse: a stray quote, text after a closing quote, a quote left open. */
const FLAWS = ['stray quote', 'text after a closing quote', 'quote left open'] as const;

const file = fc.constantFrom(...DELIMITERS).chain((delimiter) =>
  fc.record({
    delimiter: fc.constant(delimiter),
    records: fc.array(fc.array(cellText(delimiter), { minLength: 1, maxLength: 6 }), { minLength: 0, maxLength: 10 }),
    eols: fc.array(fc.constantFrom(...EOLS), { minLength: 1, maxLength: 10 }),
    bom: fc.boolean(),
    finalEol: fc.boolean(),
    flaw: fc.oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom(...FLAWS), at: fc.nat() }) },
    ),
    cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
  }),
);

interface FileShape {
  delimiter: string;
  records: string[][];
  eols: string[];
  bom: boolean;
  finalEol: boolean;
  flaw: { kind: (typeof FLAWS)[number]; at: number } | null;
  cuts: number[];
}

function compose(f: FileShape): string {
  const records = f.records.map((cells) => [...cells]);
  if (f.flaw && f.flaw.kind !== 'quote left open' && records.length) {
    const record = records[f.flaw.at % records.length]!;
    const i = f.flaw.at % record.length;
    record[i] = f.flaw.kind === 'stray quote' ? `x"${record[i]}` : `"${record[i]!.replaceAll('"', '')}"z`;
  }
  const lines = records.map((cells) => cells.join(f.delimiter));
  let text = f.bom ? '\ufeff' : '';
  lines.forEach((line, i) => {
    text += line;
    if (i < lines.length - 1 || f.finalEol) text += f.eols[i % f.eols.length];
  });
  if (f.flaw?.kind === 'quote left open') text += `${f.delimiter}"left open`;
  return text;
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

type Outcome = { rows: string[][] } | { refused: unknown };

function tableReader(pieces: string[], delimiter: string): Outcome {
  const rows: string[][] = [];
  try {
    const reader = new TableReader({ delimiter, file: 'generated.csv' });
    for (const piece of pieces) reader.write(piece, (cells) => rows.push(cells));
    reader.end((cells) => rows.push(cells));
    return { rows };
  } catch (err) {
    return { refused: err };
  }
}

function csvParse(text: string, delimiter: string): Outcome {
  try {
    return { rows: parse(text, { ...CSV_PARSE, delimiter }) as string[][] };
  } catch (err) {
    return { refused: err };
  }
}

describe('the table reader reads what csv-parse reads', () => {
  it('same rows, or both refuse, on 1,500 generated files', () => {
    let refused = 0;
    let runs = 0;
    fc.assert(
      fc.property(file, (shape) => {
        runs++;
        const text = compose(shape);
        const expected = csvParse(text, shape.delimiter);
        const got = tableReader(cutAt(text, shape.cuts), shape.delimiter);
        if ('refused' in expected) {
          refused++;
          expect('refused' in got ? got.refused : got.rows).toBeInstanceOf(InputError);
        } else {
          if ('refused' in got) throw got.refused;
          expect(got.rows).toEqual(expected.rows);
        }
      }),
      { seed, numRuns: 1500 },
    );
    // The generator must reach both sides of the comparison.
    expect(refused).toBeGreaterThan(runs / 10);
    expect(refused).toBeLessThan(runs / 2);
  });
});
