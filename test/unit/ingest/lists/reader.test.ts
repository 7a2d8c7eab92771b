import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../../../src/errors.js';
import type { ListCell } from '../../../../src/ingest/lists/cells.js';
import { headerMatcher, normaliserFor } from '../../../../src/ingest/lists/normalise.js';
import { openListReader, type ListReader } from '../../../../src/ingest/lists/reader.js';
import { openInput } from '../../../../src/ingest/sources.js';
import { MAX_FIELD_CHARS, MAX_RECORD_CHARS } from '../../../../src/ingest/table/reader.js';
import { validateListItem } from '../../../../src/schema/list-items.js';
import type { ListType } from '../../../../src/schema/lists.js';

interface Open {
  type?: ListType;
  column?: string;
  header?: boolean;
  /** Split the text into chunks of this many characters (exercises chunk boundaries). */
  chunk?: number;
  /** As named with --delimiter. */
  delimiter?: string;
}

/** `text` as one string (cut into `chunk`s), or as the chunks themselves. */
async function open(text: string | string[], options: Open = {}): Promise<ListReader> {
  const type = options.type ?? 'Social Security Numbers';
  const size = options.chunk ?? 1 << 20;
  const chunks: Buffer[] = [];
  if (typeof text !== 'string') chunks.push(...text.map((t) => Buffer.from(t)));
  else for (let i = 0; i < text.length; i += size) chunks.push(Buffer.from(text.slice(i, i + size)));
  const source = await openInput('-', { cwd: '.', stdin: Readable.from(chunks) });
  const normalise = normaliserFor(type);
  return openListReader(source, {
    column: options.column,
    delimiter: options.delimiter,
    header: options.header,
    headerMatches: headerMatcher(type),
    looksLikeValue: (cell) => validateListItem(type, normalise(cell)) === null,
    batchSize: 3,
  });
}

async function rows(reader: ListReader): Promise<Array<[number, ListCell]>> {
  const out: Array<[number, ListCell]> = [];
  for await (const batch of reader.batches()) batch.cells.forEach((cell, i) => out.push([batch.firstRow + i, cell]));
  return out;
}

async function read(text: string, options: Open = {}) {
  const reader = await open(text, options);
  const all = await rows(reader);
  return { reader, rows: all };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('plain one-value-per-line files', () => {
  it('numbers rows as a spreadsheet does: header is row 1, blank lines count', async () => {
    const { reader, rows: r } = await read('SSN\n123-45-6789\n\n234567890\n');
    expect(reader.format).toBe('lines');
    expect(reader.headerRow).toBe(1);
    expect(reader.column).toMatchObject({ header: true, index: 0, name: 'SSN' });
    expect(r).toEqual([
      [2, '123-45-6789'],
      [3, ''],
      [4, '234567890'],
    ]);
  });

  it('has no header when the first line is a value', async () => {
    const { reader, rows: r } = await read('123456789\n234567890');
    expect(reader.headerRow).toBeUndefined();
    expect(r).toEqual([
      [1, '123456789'],
      [2, '234567890'],
    ]);
  });

  it('strips CR of CRLF line ends, also across chunk boundaries', async () => {
    const { rows: r } = await read('ssn\r\n123456789\r\n234567890\r\n345678901\r\n', { chunk: 7 });
    expect(r).toEqual([
      [2, '123456789'],
      [3, '234567890'],
      [4, '345678901'],
    ]);
  });

  it('reads old Mac line ends (a lone CR) as line ends, still one value per line', async () => {
    const { reader, rows: r } = await read('SSN\r123456789\r\r234567890\r', { chunk: 4 });
    expect(reader.format).toBe('lines');
    expect(r).toEqual([
      [2, '123456789'],
      [3, ''],
      [4, '234567890'],
    ]);
  });

  it('finds the header after leading blank lines and keeps counting them', async () => {
    const { reader, rows: r } = await read('\n\nSSN\n123456789\n');
    expect(reader.headerRow).toBe(3);
    expect(r).toEqual([
      [1, ''],
      [2, ''],
      [4, '123456789'],
    ]);
  });

  it('takes a non-value with letters on row 1 as a header, and a header label always', async () => {
    expect((await open('Social Security Number\n123456789\n')).headerRow).toBe(1);
    expect((await open('Employer\nAcme\n', { type: 'Employer Names' })).headerRow).toBe(1);
    // A name list cannot tell "Acme" from a header: it is data.
    expect((await open('Acme\nGlobex\n', { type: 'Employer Names' })).headerRow).toBeUndefined();
  });

  it('obeys --header and --no-header', async () => {
    expect((await open('Acme\nGlobex\n', { type: 'Employer Names', header: true })).headerRow).toBe(1);
    const { reader, rows: r } = await read('SSN\n123456789\n', { header: false });
    expect(reader.headerRow).toBeUndefined();
    expect(r[0]).toEqual([1, 'SSN']);
  });

  it('hands the rest of the file to the CSV parser at the first quoted line, keeping row numbers', async () => {
    const lines = [
      'ssn',
      ...Array.from({ length: 20 }, (_, i) => String(100000000 + i)),
      '"123-45-6789"',
      '234567890',
      '"Smith, Jr"',
    ];
    const { reader, rows: r } = await read(lines.join('\n') + '\n', { chunk: 16 });
    expect(reader.format).toBe('csv');
    expect(reader.csvFromRow).toBe(22);
    expect(r).toHaveLength(23);
    expect(r[0]).toEqual([2, '100000000']);
    expect(r[20]).toEqual([22, '123-45-6789']);
    expect(r[21]).toEqual([23, '234567890']);
    // A single-column file with an unquoted comma: a row problem, not a silent truncation.
    expect(r[22]).toEqual([24, 'Smith, Jr']);
  });

  it('reports an unquoted comma in a single-column file as a problem of that row', async () => {
    const { rows: r } = await read('Employer\nAcme\nGlobex, Inc.\n', { type: 'Employer Names' });
    expect(r[0]).toEqual([2, 'Acme']);
    expect(r[1]![0]).toBe(3);
    expect(r[1]![1]).toMatchObject({ raw: 'Globex, Inc.' });
    expect((r[1]![1] as { problem: string }).problem).toMatch(/has 2 fields but the file has 1 column/);
  });

  it('ignores a trailing empty field (a stray comma)', async () => {
    const { rows: r } = await read('123456789,\n234567890\n');
    expect(r).toEqual([
      [1, '123456789'],
      [2, '234567890'],
    ]);
  });

  it('gives no rows for an empty file or a header alone', async () => {
    expect((await read('')).rows).toEqual([]);
    const headerOnly = await read('SSN\n');
    expect(headerOnly.reader.headerRow).toBe(1);
    expect(headerOnly.rows).toEqual([]);
    expect((await read('\n\n')).rows).toEqual([
      [1, ''],
      [2, ''],
    ]);
  });
});

describe('CSV files', () => {
  const customers = 'customer_id,name,ssn,state\nC1,"Smith, John",123-45-6789,TX\nC2,Lee,234567890,CA\n';

  it('finds the column whose header names the type', async () => {
    const { reader, rows: r } = await read(customers);
    expect(reader.format).toBe('csv');
    expect(reader.column).toMatchObject({ index: 2, name: 'ssn', header: true, width: 4 });
    expect(r).toEqual([
      [2, '123-45-6789'],
      [3, '234567890'],
    ]);
  });

  it('takes --column by header name (any case) or by number from 1', async () => {
    expect((await read(customers, { column: 'SSN' })).rows[0]).toEqual([2, '123-45-6789']);
    expect((await read(customers, { column: 'customer_id', type: 'Affiliates' })).rows[0]).toEqual([2, 'C1']);
    const byNumber = await read(customers, { column: '3' });
    expect(byNumber.reader.headerRow).toBe(1);
    expect(byNumber.rows[1]).toEqual([3, '234567890']);
  });

  it('refuses a --column that does not exist, listing the columns', async () => {
    const err = await rejection(open(customers, { column: 'social' }));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toContain('no column named "social"');
    expect(err.message).toContain('3: "ssn"');
    const tooFar = await rejection(open(customers, { column: '9' }));
    expect(tooFar.message).toContain('has only 4 columns');
  });

  it('asks for --column when no header names the type, or several do', async () => {
    const none = await rejection(open('a,b\n1,2\n'));
    expect(none).toBeInstanceOf(UsageError);
    expect(none.message).toMatch(/has 2 columns .* none is named for the list's type; choose one with --column/);
    const several = await rejection(
      open('home_phone,cell_phone\n3125550142,3125550143\n', { type: 'Telephone Numbers' }),
    );
    expect(several.message).toContain('several columns could hold the values');
    // An exact label wins over looser ones.
    expect((await open('phone,cell_phone\n3125550142,3125550143\n', { type: 'Telephone Numbers' })).column?.index).toBe(
      0,
    );
  });

  it('reads a headerless multi-column file by column number', async () => {
    const { reader, rows: r } = await read('C1,123456789\nC2,234567890\n', { column: '2' });
    expect(reader.headerRow).toBeUndefined();
    expect(r).toEqual([
      [1, '123456789'],
      [2, '234567890'],
    ]);
  });

  it('counts a quoted value spanning lines as one row, like a spreadsheet', async () => {
    const { rows: r } = await read('Employer\n"Umbrella\nCorp"\nAcme\n', { type: 'Employer Names' });
    expect(r).toEqual([
      [2, 'Umbrella\nCorp'],
      [3, 'Acme'],
    ]);
  });

  it('detects semicolon and tab delimiters from the first line', async () => {
    expect((await read('id;zip\n1;02134\n', { type: 'ZIP Codes' })).rows).toEqual([[2, '02134']]);
    expect((await read('id\tzip\n1\t02134\n', { type: 'ZIP Codes' })).rows).toEqual([[2, '02134']]);
  });

  it('reports rows missing the column or with extra fields, and keeps going', async () => {
    const { rows: r } = await read('id,ssn\n1,123456789\n2\n3,234567890,extra\n,\n4,345678901\n');
    expect(r[0]).toEqual([2, '123456789']);
    expect(r[1]![1]).toMatchObject({ problem: 'has only 1 field; column 2 ("ssn") is missing', raw: '2' });
    expect((r[2]![1] as { problem: string }).problem).toMatch(/has 3 fields but the file has 2 columns/);
    expect(r[3]).toEqual([5, '']);
    expect(r[4]).toEqual([6, '345678901']);
  });

  it('refuses a quote that is never closed, naming the row where it starts', async () => {
    const reader = await open('id,ssn\n1,123456789\n2,"234567890\n3,345678901\n');
    const err = await rejection(rows(reader));
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toBe(
      'stdin, row 3, column 2: is not valid CSV: a quoted value starts here and its closing quote is missing',
    );
  });

  it("accepts a spreadsheet's quoted header and BOM-free CRLF text", async () => {
    const { reader, rows: r } = await read('"Email Address","Name"\r\n"Jane@Example.com","Jane"\r\n', {
      type: 'Email Addresses',
    });
    expect(reader.column?.index).toBe(0);
    expect(r).toEqual([[2, 'Jane@Example.com']]);
  });
});

describe('JSON arrays', () => {
  it('reads strings, keeps numbers as written, and treats null as blank', async () => {
    const { reader, rows: r } = await read('[ "123-45-6789", 234567890, null, "a\\"b" ]', { chunk: 5 });
    expect(reader.format).toBe('json');
    expect(r).toEqual([
      [1, '123-45-6789'],
      [2, '234567890'],
      [3, ''],
      [4, 'a"b'],
    ]);
  });

  it('reports objects, arrays and booleans as problems of their item', async () => {
    const { rows: r } = await read('[{"ssn": "1"}, [1,2], true, "ok"]');
    expect(r.map(([row]) => row)).toEqual([1, 2, 3, 4]);
    expect(r[0]![1]).toMatchObject({ problem: 'is an object, not a value', raw: '{"ssn": "1"}' });
    expect(r[1]![1]).toMatchObject({ problem: 'is an array, not a value' });
    expect(r[2]![1]).toMatchObject({ problem: 'is the boolean true, not a value' });
    expect(r[3]).toEqual([4, 'ok']);
  });

  it('refuses malformed JSON with the item it happened at', async () => {
    expect((await rejection(read('["a", "b" "c"]'))).message).toBe(
      'stdin, row 2: expected "," or "]" after item 2, found """',
    );
    expect((await rejection(read('["a",]'))).message).toContain('a "," after item 1 is followed by "]"');
    expect((await rejection(read('["a", "b"'))).message).toContain('ends after item 2 without the closing "]"');
    expect((await rejection(read('["a", "b'))).message).toContain('item 2: a string is never closed');
  });
});

// The list reader is a layer over the one table reader: its delimiter, its limits, its rows.

async function refusal(run: () => Promise<unknown>): Promise<InputError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
}

describe('--delimiter', () => {
  it('splits on ";" when named: "987654321;abc" is two fields, a problem of its row, and CSV from there', async () => {
    const reader = await open('SSN\n123456789\n987654321;abc\n234567890\n', { delimiter: ';' });
    expect(reader.format).toBe('lines');
    const r = await rows(reader);
    expect(r[0]).toEqual([2, '123456789']);
    expect(r[1]![0]).toBe(3);
    expect(r[1]![1]).toEqual({
      problem: 'has 2 fields but the file has 1 column (a value containing ";" must be in double quotes)',
      raw: '987654321;abc',
    });
    expect(r[2]).toEqual([4, '234567890']);
    expect(reader).toMatchObject({ format: 'csv', csvFromRow: 3, delimiter: ';' });
  });

  it('finds the column of a ";" file, and leaves commas inside values alone', async () => {
    const reader = await open('id;ssn;employer\n1;123-45-6789;Globex, Inc.\n', { delimiter: ';' });
    expect(reader.column).toMatchObject({ index: 1, name: 'ssn', width: 3 });
    expect(await rows(reader)).toEqual([[2, '123-45-6789']]);
    const names = await open('Employer\nGlobex, Inc.\nAcme\n', { delimiter: ';', type: 'Employer Names' });
    expect(await rows(names)).toEqual([
      [2, 'Globex, Inc.'],
      [3, 'Acme'],
    ]);
    expect(names.format).toBe('lines');
  });

  it('is found on the first line when not named, a tab included', async () => {
    const reader = await open('id\tzip\n1\t02134\n', { type: 'ZIP Codes' });
    expect(reader.delimiter).toBe('\t');
    expect(await rows(reader)).toEqual([[2, '02134']]);
  });
});

describe('rows', () => {
  it('keeps spreadsheet row numbers when blank lines come before a CSV header', async () => {
    const reader = await open('\n\nid,ssn\n1,123456789\n\n2,234567890\n');
    expect(reader.headerRow).toBe(3);
    expect(await rows(reader)).toEqual([
      [1, ''],
      [2, ''],
      [4, '123456789'],
      [5, ''],
      [6, '234567890'],
    ]);
  });

  it('trims values the same way in plain lines and in CSV', async () => {
    expect(await rows(await open('SSN\n 123456789 \n'))).toEqual([[2, '123456789']]);
    expect(await rows(await open('id,ssn\n1, 123456789 \n'))).toEqual([[2, '123456789']]);
  });
});

describe('limits: those of the table reader', () => {
  it('refuses a line longer than the record limit, naming its row', async () => {
    const long = '1'.repeat(MAX_RECORD_CHARS + 10);
    const chunks = ['SSN\n123456789\n'];
    for (let i = 0; i < long.length; i += 1 << 18) chunks.push(long.slice(i, i + (1 << 18)));
    const err = await refusal(async () => rows(await open(chunks)));
    expect(err.message).toMatch(/^stdin, row 3, column 1: the row is longer than 4 MiB of text/);
  });

  it('refuses a value longer than the cell limit, in a file of one column or several', async () => {
    const value = `"${'7'.repeat(MAX_FIELD_CHARS + 1)}"`;
    const single = await refusal(async () => rows(await open(`SSN\n${value}\n`)));
    expect(single.message).toMatch(
      /row 2, column 1: the value holds 1,048,577 characters; values are limited to 1,048,576$/,
    );
    const first = await refusal(() => open(`${value}\n`));
    expect(first.location).toMatchObject({ row: 1, column: 1 });
  });

  it('refuses a JSON item past the limits, even one still open at the end of a chunk', async () => {
    const item = 'x'.repeat(MAX_FIELD_CHARS + 1);
    const err = await refusal(async () =>
      rows(await open(['["123456789", "', item.slice(0, 1000), item.slice(1000), '"]'])),
    );
    expect(err.message).toBe('stdin, row 2: item 2 holds 1,048,579 characters; values are limited to 1,048,576');
    const endless = ['["'];
    for (let i = 0; i < 20; i++) endless.push('y'.repeat(1 << 18));
    const open2 = await refusal(async () => rows(await open(endless)));
    expect(open2.message).toBe(
      'stdin, row 1: item 1 is longer than 4 MiB of text (is the file a JSON list of values?)',
    );
  });
});
