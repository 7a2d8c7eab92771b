import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../../src/errors.js';
import type { InputSource } from '../../../../src/ingest/sources.js';
import {
  checkDelimiter,
  checkHeaderNames,
  chooseDelimiter,
  EMPTY_INPUT_HINT,
  MAX_RECORD_CHARS,
  noRecords,
  sniffDelimiter,
  TableReader,
  type TableOptions,
  type TableRow,
  tableBatches,
} from '../../../../src/ingest/table/reader.js';

const CHUNK = 256 * 1024;

function read(pieces: string[], options: Partial<TableOptions> = {}) {
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

const source = (name: string, chunks: string[]): InputSource => ({
  name,
  stream: Readable.from(chunks),
  gzipped: false,
});

async function batches(chunks: string[], onChunk?: (chunk: string) => void) {
  const got: TableRow[][] = [];
  for await (const batch of tableBatches(source('in.csv', chunks), { delimiter: ',' }, onChunk)) got.push(batch);
  return got;
}

describe('blank lines', () => {
  it('are each a row of one empty cell, numbered, all one frozen record (no array per blank line)', () => {
    const rows = read(['a,b\n\n\r\n', '\nc,d\n\n"q"\n\n'], {});
    expect(rows.map((r) => [r.cells, r.row, r.quoted])).toEqual([
      [['a', 'b'], 1, false],
      [[''], 2, false],
      [[''], 3, false],
      [[''], 4, false],
      [['c', 'd'], 5, false],
      [[''], 6, false],
      [['q'], 7, true],
      [[''], 8, false],
    ]);
    const blanks = rows.filter((r) => r.cells.length === 1 && r.cells[0] === '' && !r.quoted);
    expect(new Set(blanks.map((r) => r.cells)).size).toBe(1);
    expect(Object.isFrozen(blanks[0]!.cells)).toBe(true);
    // A quoted empty value is a record of its own, not the blank one.
    expect(read(['""\n'])[0]!.cells).not.toBe(blanks[0]!.cells);
  });
});

describe('the delimiter', () => {
  it('is one character other than a quote or a line break', () => {
    for (const ok of [',', ';', '\t', '|', ' ', 'x']) expect(() => checkDelimiter(ok)).not.toThrow();
    for (const bad of ['', ',,', '"', '\r', '\n', '\r\n']) {
      const err = failure(() => checkDelimiter(bad));
      expect(err.message).toBe(
        `the delimiter must be one character other than a quote or a line break, got ${JSON.stringify(bad)}`,
      );
    }
    expect(() => new TableReader({ delimiter: '"', file: 'x.csv' })).toThrow(InputError);
  });

  it('sniffed from a header: the most frequent of , ; tab | outside quotes, the first of a tie, comma when none', () => {
    expect(sniffDelimiter('a;b;c,d')).toEqual({ char: ';', count: 2 });
    expect(sniffDelimiter('a\tb\tc')).toEqual({ char: '\t', count: 2 });
    expect(sniffDelimiter('a|b')).toEqual({ char: '|', count: 1 });
    expect(sniffDelimiter('"a;b;c";d,e,')).toEqual({ char: ',', count: 2 });
    expect(sniffDelimiter('"x;y""z;w"|q')).toEqual({ char: '|', count: 1 });
    expect(sniffDelimiter('a;b,c')).toEqual({ char: ',', count: 1 });
    expect(sniffDelimiter('a|b;c')).toEqual({ char: ';', count: 1 });
    expect(sniffDelimiter('abc')).toEqual({ char: ',', count: 0 });
    expect(sniffDelimiter('')).toEqual({ char: ',', count: 0 });
    expect(sniffDelimiter('a:b:c;d', [':', ';'])).toEqual({ char: ':', count: 2 });
  });

  it('chosen: the one named (checked), else sniffed from the first line only, BOM aside; the input replays what was read', async () => {
    const named = await chooseDelimiter(source('a.csv', ['a;b\n']), '|');
    expect(named.delimiter).toBe('|');
    await expect(chooseDelimiter(source('a.csv', ['a;b\n']), '"')).rejects.toThrow(InputError);

    const sniffed = await chooseDelimiter(source('b.csv', ['\uFEFFa;b;c\n1,2,3,4,5\n', 'more\n']));
    expect(sniffed.delimiter).toBe(';');
    const replayed: string[] = [];
    for await (const chunk of sniffed.input.stream) replayed.push(String(chunk));
    expect(replayed.join('')).toBe('\uFEFFa;b;c\n1,2,3,4,5\nmore\n');
    expect(sniffed.input.name).toBe('b.csv');

    expect((await chooseDelimiter(source('c.csv', ['a\tb\r\nc;d;e;f']))).delimiter).toBe('\t');
    expect((await chooseDelimiter(source('d.csv', ['a|b|c']))).delimiter).toBe('|');
    expect((await chooseDelimiter(source('e.csv', []))).delimiter).toBe(',');
  });
});

describe('header names', () => {
  it('refuses duplicates (trimmed, any case) and empty names, naming the columns; trailing empty names are allowed', () => {
    expect(() => checkHeaderNames('h.csv', ['id', 'Name', 'email', '', ' '])).not.toThrow();
    expect(() => checkHeaderNames('h.csv', [])).not.toThrow();
    expect(failure(() => checkHeaderNames('h.csv', ['id', 'Name', ' name ', 'x'])).message).toBe(
      'h.csv, row 1: header has the column name "name" (columns 2 and 3) more than once',
    );
    expect(failure(() => checkHeaderNames('h.csv', ['a', 'b', 'A', 'B', 'a'])).message).toBe(
      'h.csv, row 1: header has the column names "A" (columns 1 and 3), "B" (columns 2 and 4), "a" (columns 1 and 5) more than once',
    );
    expect(failure(() => checkHeaderNames('h.csv', ['a', '', 'b'])).message).toBe(
      'h.csv, row 1: header has no name for column 2',
    );
    expect(failure(() => checkHeaderNames('h.csv', ['', 'a', ' ', 'a', ''])).message).toBe(
      'h.csv, row 1: header has the column name "a" (columns 2 and 4) more than once and has no name for columns 1, 3',
    );
    const err = failure(() => checkHeaderNames('h.csv', ['x', 'X']));
    expect(err.hint).toBe('give every column a distinct name in the header row');
    expect(err.location).toEqual({ file: 'h.csv', row: 1 });
    // The caller's notion of a name: here case counts.
    expect(() => checkHeaderNames('h.csv', ['x', 'X'], (n) => n)).not.toThrow();
  });
});

describe('reading an input in batches', () => {
  it('one batch per chunk that completes rows, blank lines left out but counted, every chunk seen', async () => {
    const seen: string[] = [];
    const got = await batches(['id,n\n1,a\n\n2', ',b\n', '3,c'], (chunk) => seen.push(chunk));
    expect(got).toEqual([
      [
        { cells: ['id', 'n'], row: 1 },
        { cells: ['1', 'a'], row: 2 },
      ],
      [{ cells: ['2', 'b'], row: 4 }],
      [{ cells: ['3', 'c'], row: 5 }],
    ]);
    expect(seen).toEqual(['id,n\n1,a\n\n2', ',b\n', '3,c']);
  });

  it('an empty input is refused with the hint about a failed export; blank lines alone are no header either', async () => {
    for (const chunks of [[], [''], ['\uFEFF']]) {
      const err = await batches(chunks).then(
        () => undefined,
        (e: unknown) => e as InputError,
      );
      expect(err).toBeInstanceOf(InputError);
      expect(err!.message).toBe('in.csv: is empty (no header row)');
      expect(err!.hint).toBe(EMPTY_INPUT_HINT);
    }
    expect(await batches(['\n'])).toEqual([]);
  });

  it('the rows before a malformed one are handed on, then the error', async () => {
    const got: TableRow[][] = [];
    let failed: unknown;
    try {
      for await (const batch of tableBatches(source('m.csv', ['a,b\n1,2\n3,x"y\n4,5\n']), { delimiter: ',' }))
        got.push(batch);
    } catch (err) {
      failed = err;
    }
    expect(got).toEqual([
      [
        { cells: ['a', 'b'], row: 1 },
        { cells: ['1', '2'], row: 2 },
      ],
    ]);
    expect((failed as Error).message).toBe(
      'm.csv, row 3, column 2: is not valid CSV: a quote inside an unquoted value (quote the whole value and double the quote: "")',
    );
  });

  it('a header alone is no records, named by file', () => {
    const err = noRecords(['a.csv', 'b.csv']);
    expect(err.message).toBe('a.csv, b.csv: no records (a header or an empty document alone)');
    expect(err.hint).toBe(EMPTY_INPUT_HINT);
  });
});

describe('refusals name row, column and the value', () => {
  it('a quote never closed: the row and column where it opened, and the start of the value', () => {
    const err = failure(() => read(['a,b\n1,"abc\n2,3\n']));
    expect(err.message).toBe(
      'x.csv, row 2, column 2: is not valid CSV: a quoted value starts here and its closing quote is missing',
    );
    expect(err.hint).toBe('the value begins "\\"abc"');
    expect(err.location).toEqual({ file: 'x.csv', row: 2, column: 2 });
  });

  it('the start of the value it quotes shows an SSN or account number by its last four only', () => {
    const err = failure(() => read(['"123-45-6789,Maria 000123456789\n']));
    expect(err.hint).toBe('the value begins "\\"***-**-6789,Maria ********6789"');
  });

  it('text after a closing quote, and a long value cut at 40 characters', () => {
    const long = 'y'.repeat(60);
    const err = failure(() => read([`h\n"${long}"z\n`]));
    expect(err.message).toBe(
      'x.csv, row 2, column 1: is not valid CSV: unexpected text after a closing quote (a quote inside a quoted value must be doubled: "")',
    );
    expect(err.hint).toBe(`the value begins ${JSON.stringify(`"${'y'.repeat(39)}…`)}`);
    const short = failure(() => read([`"${'w'.repeat(36)}"z\n`]));
    expect(short.hint).toBe(`the value begins ${JSON.stringify(`"${'w'.repeat(36)}"z`)}`);
    const forty = failure(() => read([`"${'w'.repeat(37)}"z\n`]));
    expect(forty.hint).toBe(`the value begins ${JSON.stringify(`"${'w'.repeat(37)}"z…`)}`);
    const third = failure(() => read(['a;b;"c"d\n'], { delimiter: ';' }));
    expect(third.location).toEqual({ file: 'x.csv', row: 1, column: 3 });
  });

  it('a stray quote in the third column of the fourth row', () => {
    const err = failure(() => read(['a,b,c\n1,2,3\n\n4,5,6"\n']));
    expect(err.location).toEqual({ file: 'x.csv', row: 4, column: 3 });
    expect(err.hint).toBe('the value begins "6\\""');
  });

  it('counts rows from firstRow when reading starts part-way into a file', () => {
    const rows: number[] = [];
    const reader = new TableReader({ delimiter: ',', file: 'x.csv', firstRow: 10 });
    reader.write('a\nb\n', (_cells, row) => rows.push(row));
    expect(rows).toEqual([10, 11]);
    expect(reader.rows).toBe(2);
    const err = failure(() => reader.write('"c\n', () => {}) ?? reader.end(() => {}));
    expect(err.location.row).toBe(12);
  });

  it('a record over a small limit names the column of its last delimiter, in KiB or characters', () => {
    const kib = new TableReader({ delimiter: ',', file: 'x.csv', maxRecordChars: 1024 });
    const err = failure(() => kib.write(`a,b,c${'x'.repeat(2000)}\n`, () => {}));
    expect(err.message).toBe('x.csv, row 1, column 3: the row is longer than 1 KiB of text, with no line break yet');
    expect(err.hint).toBe(
      'a value this long is most often a quoted value whose closing quote is missing, or a file that is not CSV',
    );
    const odd = new TableReader({ delimiter: ';', file: 'x.csv', maxRecordChars: 100 });
    const quoted = failure(() => odd.write(`"${';'.repeat(150)}`, () => {}));
    expect(quoted.message).toBe(
      'x.csv, row 1, column 151: the row is longer than 100 characters of text, with no line break yet',
    );
    // Held back across chunks: the pieces are counted together.
    const held = new TableReader({ delimiter: ',', file: 'x.csv', maxRecordChars: 100 });
    held.write('h\n', () => {});
    held.write('a,b', () => {});
    const over = failure(() => {
      for (let i = 0; i < 10; i++) held.write(',cccccccccc', () => {});
    });
    expect(over.location).toEqual({ file: 'x.csv', row: 2, column: 11 });
  });

  it('a record exactly at the limit is read', () => {
    const reader = new TableReader({ delimiter: ',', file: 'x.csv', maxRecordChars: 10, maxFieldChars: 10 });
    const rows: string[][] = [];
    reader.write('0123456789\n"01234567"\n', (cells) => rows.push(cells));
    reader.write('abcd', (cells) => rows.push(cells));
    reader.write('efghij', (cells) => rows.push(cells));
    reader.end((cells) => rows.push(cells));
    expect(rows).toEqual([['0123456789'], ['01234567'], ['abcdefghij']]);
  });

  it('a quoted value over the cell limit, in the slow path, names its column', () => {
    const reader = new TableReader({ delimiter: ',', file: 'x.csv', maxFieldChars: 5 });
    const err = failure(() => reader.write('a,"1\n23456"\n', () => {}));
    expect(err.message).toBe('x.csv, row 1, column 2: the value holds 7 characters; values are limited to 5');
    const thousands = new TableReader({ delimiter: ',', file: 'x.csv', maxFieldChars: 1000 });
    expect(failure(() => thousands.write(`${'v'.repeat(1001)}\n`, () => {})).message).toBe(
      'x.csv, row 1, column 1: the value holds 1,001 characters; values are limited to 1,000',
    );
  });
});

describe('edges of the text', () => {
  it('a BOM is dropped from the first chunk only', () => {
    expect(read(['\uFEFFa,b\n', '\uFEFFc\n']).map((r) => r.cells)).toEqual([['a', 'b'], ['\uFEFFc']]);
    // The first chunk is the first with text in it: an empty one before it changes nothing.
    expect(read(['', '\uFEFFa,b\n', '\uFEFFc\n']).map((r) => r.cells)).toEqual([['a', 'b'], ['\uFEFFc']]);
  });

  it('records exactly at the limits are read, in one chunk or cut, quoted with a line break or not', () => {
    const limits = { maxRecordChars: 10, maxFieldChars: 10 };
    expect(read(['abcdefghij', '\n'], limits).map((r) => r.cells)).toEqual([['abcdefghij']]);
    expect(read(['"012\n5678"\n'], limits).map((r) => r.cells)).toEqual([['012\n5678']]);
    expect(read(['"012\n5678', '"\n'], limits).map((r) => r.cells)).toEqual([['012\n5678']]);
    expect(() => read(['abcdefghijk', '\n'], limits)).toThrow(/longer than 10 characters/);
    expect(() => read(['"012\n56789"\n'], limits)).toThrow(/longer than 10 characters/);
    const cells = { maxRecordChars: 20, maxFieldChars: 10 };
    expect(read(['"0123\n56789"\n'], cells).map((r) => r.cells)).toEqual([['0123\n56789']]);
    expect(() => read(['"0123\n567890"\n'], cells)).toThrow(/the value holds 11 characters/);
  });

  it('what ends a file without a final line break', () => {
    expect(read(['a,""']).map((r) => r.cells)).toEqual([['a', '']]);
    expect(read(['a,']).map((r) => r.cells)).toEqual([['a', '']]);
    expect(read(['""']).map((r) => r.cells)).toEqual([['']]);
    expect(read(['x\n"a\nb"']).map((r) => r.cells)).toEqual([['x'], ['a\nb']]);
    expect(read(['x\n']).map((r) => r.cells)).toEqual([['x']]);
    expect(read(['x\r']).map((r) => r.cells)).toEqual([['x']]);
    expect(read(['"a\r', '"']).map((r) => r.cells)).toEqual([['a\r']]);
    expect(read(['"a"', '"b"\r', '\n']).map((r) => r.cells)).toEqual([['a"b']]);
  });

  it('a delimiter sniffed from an empty first line is the comma', async () => {
    expect((await chooseDelimiter(source('f.csv', ['\na;b;c\n']))).delimiter).toBe(',');
    expect((await chooseDelimiter(source('g.csv', ['\r\na|b\n']))).delimiter).toBe(',');
  });
});

describe('the slow path (line breaks inside quotes) and the chunk ends it meets', () => {
  it('a quote or a CR at a chunk end waits for the next chunk; a line break ends the record at the right place', () => {
    expect(read(['"a\nb"', '"c"\n']).map((r) => r.cells)).toEqual([['a\nb"c']]);
    expect(read(['"a\nb"\r', '\nc\n']).map((r) => r.cells)).toEqual([['a\nb'], ['c']]);
    expect(read(['"a\nb"\nxy\n']).map((r) => r.cells)).toEqual([['a\nb'], ['xy']]);
    expect(read(['"a\nb"\rxy\r\n"c\rd"\r\nz']).map((r) => r.cells)).toEqual([['a\nb'], ['xy'], ['c\rd'], ['z']]);
    expect(read(['\nabc\n', '\n']).map((r) => [r.row, r.cells])).toEqual([
      [1, ['']],
      [2, ['abc']],
      [3, ['']],
    ]);
  });

  it('a quoted value with a line break marks its record quoted; relaxed, a quote after a delimiter still opens one', () => {
    expect(read(['"multi\nline"\n']).map((r) => [r.cells, r.quoted])).toEqual([[['multi\nline'], true]]);
    expect(read(['a,"b\nc"\n'], { relaxQuotes: true }).map((r) => r.cells)).toEqual([['a', 'b\nc']]);
  });

  it('lines ending in CR alone are read as they come, not held to the record limit', () => {
    expect(read(['a\rb\rc\rd\re\rf\r', 'g\r'], { maxRecordChars: 10 }).map((r) => r.cells)).toEqual(
      ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((c) => [c]),
    );
    // A long file of short rows whose last one is cut by the chunk: only that row counts.
    expect(read(['abcdefgh\nxy', 'z\n'], { maxRecordChars: 10 }).map((r) => r.cells)).toEqual([['abcdefgh'], ['xyz']]);
    expect(read(['abcdefgh\n"a\nb"\n'], { maxRecordChars: 10 }).map((r) => r.cells)).toEqual([['abcdefgh'], ['a\nb']]);
  });

  it('the column of a record over the limit counts that record only, not the rows before it', () => {
    const limits = { maxRecordChars: 10 };
    expect(failure(() => read(['x,y\nabcdefghijkl'], limits)).location).toEqual({ file: 'x.csv', row: 2, column: 1 });
    expect(failure(() => read(['x,y\nabcdefghijkl\n'], limits)).location).toEqual({ file: 'x.csv', row: 2, column: 1 });
    expect(failure(() => read(['x,y\na,"bcdefghijklmn'], limits)).location).toEqual({
      file: 'x.csv',
      row: 2,
      column: 2,
    });
    const held = failure(() => read(['h,i,j\na', 'bcdefghijk', 'lmnopq'], limits));
    expect(held.location).toEqual({ file: 'x.csv', row: 2, column: 1 });
  });

  it('a value over the cell limit says how to check the file; the empty-export hint says what to do', () => {
    const reader = new TableReader({ delimiter: ',', file: 'x.csv', maxFieldChars: 2 });
    expect(failure(() => reader.write('abc\n', () => {})).hint).toBe(
      'check that the file is the export you meant (and that its quotes are balanced)',
    );
    expect(EMPTY_INPUT_HINT).toBe(
      'an empty export usually means the job that writes it failed or has not finished: check it, then run the command again',
    );
  });

  it('a first line with no line break is sniffed whole', async () => {
    expect((await chooseDelimiter(source('h.csv', ['a;b|c|']))).delimiter).toBe('|');
  });
});
