import { describe, expect, it } from 'vitest';
import { InputError } from '../../../../src/errors.js';
import { MAX_RECORD_CHARS, TableReader } from '../../../../src/ingest/table/reader.js';

const CHUNK = 256 * 1024;

function read(pieces: string[], options: { delimiter?: string; relaxQuotes?: boolean } = {}) {
  const rows: { cells: string[]; row: number; quoted: boolean }[] = [];
  const reader = new TableReader({ delimiter: options.delimiter ?? ',', file: 'x.csv', ...options });
  const take = (cells: string[], row: number) => rows.push({ cells, row, quoted: reader.lastRecordQuoted });
  for (const piece of pieces) reader.write(piece, take);
  reader.end(take);
  return rows;
}

function failure(run: () => unknown): InputError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
}

describe('a record longer than a chunk', () => {
  it('is refused once past the record limit, naming row and column, without reading on', () => {
    const reader = new TableReader({ delimiter: ',', file: 'big.txt' });
    const chunk = 'a,'.repeat(CHUNK / 2);
    let written = 0;
    const err = failure(() => {
      reader.write('id\n', () => {});
      // An endless line (a 200 MB file with no line break, /dev/zero): the error comes at the limit.
      for (let i = 0; i < 1000; i++) {
        reader.write(chunk, () => {});
        written += chunk.length;
      }
    });
    expect(written).toBeLessThanOrEqual(MAX_RECORD_CHARS);
    expect(err.message).toMatch(
      /^big\.txt, row 2, column \d+: the row is longer than 4 MiB of text, with no line break yet$/,
    );
    expect(err.location).toMatchObject({ file: 'big.txt', row: 2 });
  });

  it('reads a long line whole when its line break comes, however many chunks it took', () => {
    const long = 'x'.repeat(3 * CHUNK + 17);
    const text = `a,b\n1,${long},2\n3,4`;
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += CHUNK) pieces.push(text.slice(i, i + CHUNK));
    expect(read(pieces).map((r) => r.cells)).toEqual([
      ['a', 'b'],
      ['1', long, '2'],
      ['3', '4'],
    ]);
  });

  it('keeps a quoted value with line breaks that spans chunks, and a CR cut from its LF', () => {
    const value = `${'y'.repeat(CHUNK)}\r\n${'z'.repeat(CHUNK)}`;
    const text = `"${value}",end\r\nlast\r`;
    const cut = text.length - 2;
    expect(read([text.slice(0, CHUNK), text.slice(CHUNK, cut), text.slice(cut)]).map((r) => r.cells)).toEqual([
      [value, 'end'],
      ['last'],
    ]);
    // A CR ending one chunk, and a next chunk with no line break: the CR ended the record.
    expect(read(['a\r', 'b'.repeat(CHUNK), 'c\n']).map((r) => r.cells)).toEqual([['a'], ['b'.repeat(CHUNK) + 'c']]);
  });

  it('refuses a value over the cell limit even inside a short enough record', () => {
    const reader = new TableReader({ delimiter: ';', file: 'x.csv', maxFieldChars: 10 });
    const err = failure(() => reader.write('a;bb\nc;0123456789A\n', () => {}));
    expect(err.message).toBe('x.csv, row 2, column 2: the value holds 11 characters; values are limited to 10');
  });
});

describe('what a record was', () => {
  it('says whether a record had a quoted value (a list file is then CSV, not plain lines)', () => {
    const rows = read(['plain\n"quoted"\nO"Brien\n"multi\nline"\n'], { relaxQuotes: true });
    expect(rows.map((r) => [r.cells, r.quoted])).toEqual([
      [['plain'], false],
      [['quoted'], true],
      [['O"Brien'], false],
      [['multi\nline'], true],
    ]);
  });

  it('splits on the delimiter it is given, and on no other', () => {
    expect(read(['987654321;abc\n1,2;3\n'], { delimiter: ';' }).map((r) => r.cells)).toEqual([
      ['987654321', 'abc'],
      ['1,2', '3'],
    ]);
    expect(read(['a|b\tc\n'], { delimiter: '\t' }).map((r) => r.cells)).toEqual([['a|b', 'c']]);
  });
});
