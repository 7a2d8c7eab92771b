import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../../src/errors.js';
import { readJsonValues } from '../../../../src/ingest/lms/rows.js';
import { MAX_FIELD_CHARS, MAX_RECORD_CHARS } from '../../../../src/ingest/table/reader.js';

function source(pieces: string[]) {
  return { name: 'x.ndjson', gzipped: false, stream: Readable.from(pieces) };
}

async function ndjson(pieces: string[]) {
  const values: Array<[number, unknown]> = [];
  const bad: Array<[number, string]> = [];
  const count = await readJsonValues(
    source(pieces),
    'ndjson',
    undefined,
    (value, line) => values.push([line, value]),
    (line, reason) => bad.push([line, reason.slice(0, 14)]),
  );
  return { values, bad, count };
}

async function refusal(run: () => Promise<unknown>): Promise<InputError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
}

describe('NDJSON, read as it streams', () => {
  it('a value per line, with line numbers, blank lines counted, a broken line one bad record', async () => {
    const r = await ndjson(['{"a":1}\r\n\n{"a"', ':2}\n{broken\n', '{"a":"\\n3"}']);
    expect(r.values).toEqual([
      [1, { a: 1 }],
      [3, { a: 2 }],
      [5, { a: '\n3' }],
    ]);
    expect(r.bad).toEqual([[4, 'not valid JSON']]);
    expect(r.count).toBe(4);
  });

  it('refuses a line past the record limit, naming it, without holding the rest', async () => {
    const pieces = ['{"a":1}\n{"b":"'];
    for (let n = 0; n <= MAX_RECORD_CHARS; n += 1 << 18) pieces.push('q'.repeat(1 << 18));
    const err = await refusal(() => ndjson(pieces));
    expect(err.message).toBe('x.ndjson, row 2: the line is longer than 4 MiB of text, with no line break yet');
  });

  it('refuses a value past the cell limit in a line under the record limit', async () => {
    const value = `${'\\"'.repeat(10)}${'w'.repeat(MAX_FIELD_CHARS)}`;
    const err = await refusal(() => ndjson([`{"ok":"yes"}\n{"a":"short","b":"${value}"}\n`]));
    expect(err.message).toBe('x.ndjson, row 2: holds a value of 1,048,596 characters; values are limited to 1,048,576');
    // Just under: read as usual.
    const fits = await ndjson([`{"b":"${'w'.repeat(MAX_FIELD_CHARS - 1)}"}\n`]);
    expect(fits.count).toBe(1);
  });
});
