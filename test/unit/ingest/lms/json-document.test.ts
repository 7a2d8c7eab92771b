import { describe, expect, it } from 'vitest';
import { InputError } from '../../../../src/errors.js';
import { JsonDocumentReader } from '../../../../src/ingest/lms/json-document.js';
import { MAX_FIELD_CHARS, MAX_RECORD_CHARS } from '../../../../src/ingest/table/reader.js';

/** `null`: no array key (the records of `customers push`). */
function read(pieces: string | string[], arrayKey: string | null = 'customers') {
  const values: Array<[number, unknown]> = [];
  const reader = new JsonDocumentReader('x.json', arrayKey ?? undefined, (value, position) =>
    values.push([position, value]),
  );
  for (const piece of typeof pieces === 'string' ? [pieces] : pieces) reader.write(piece);
  const count = reader.end();
  return { values, count };
}

/** Every way of cutting `text` in two, and one character at a time. */
function cuts(text: string): string[][] {
  const out: string[][] = [[...text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

function refusal(run: () => unknown): InputError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
}

describe('the records of a JSON document, read as it streams', () => {
  it('an array: each item, with its position, however the text is cut', () => {
    const text = '\ufeff[ {"customer_id":"A","loans":[{"x":"a\\"]}\\\\"}]} , 2, "s", null,[1,[2]] ,true,-1.5e3 ]\n';
    const expected = JSON.parse(text.slice(1)).map((v: unknown, i: number) => [i + 1, v]);
    for (const pieces of cuts(text)) expect(read(pieces).values).toEqual(expected);
  });

  it('an object holding the records array: its items; the other members are checked and set aside', () => {
    const text = '{"exported":{"at":"2026-01-01","by":["lms"]},"customers":[{"id":1},{"id":2}],"count":2}';
    for (const pieces of cuts(text))
      expect(read(pieces)).toEqual({
        values: [
          [1, { id: 1 }],
          [2, { id: 2 }],
        ],
        count: 2,
      });
  });

  it('without an array key: one object is one record, an array its items', () => {
    expect(read('{"customer_id":"A"}', null).values).toEqual([[1, { customer_id: 'A' }]]);
    expect(read('[{"a":1},{"a":2}]', null).count).toBe(2);
    expect(read('[]').count).toBe(0);
  });

  it('refuses what is not such a document, saying where', () => {
    const message = (text: string, key: string | null = 'customers') => refusal(() => read(text, key)).message;
    expect(message('{"data":[1]}')).toBe('x.json: must hold an array or an object with a "customers" array');
    expect(message('{"customers":{"a":1}}')).toBe('x.json: must hold an array or an object with a "customers" array');
    expect(message('"text"', null)).toBe('x.json: must hold an array or an object');
    expect(message('')).toBe('x.json: is not valid JSON: the document is empty');
    expect(message('[{"a":1},]')).toBe('x.json: is not valid JSON: a "," after item 1 is followed by "]"');
    expect(message('[{"a":1} {"a":2}]')).toBe('x.json: is not valid JSON: expected "," or "]" after item 1, found "{"');
    expect(message('[{"a":1}, {"a":')).toBe('x.json: is not valid JSON: the document ends inside item 2');
    expect(message('[{"a":1}')).toBe(
      'x.json: is not valid JSON: the document ends before its closing bracket (after item 1)',
    );
    expect(message('[1] [2]')).toBe('x.json: is not valid JSON: unexpected "[" after the end of the document');
    expect(message('[{"a":tru}]')).toMatch(/^x\.json: is not valid JSON: item 1: /);
    expect(message('[12"a"]')).toBe('x.json: is not valid JSON: expected "," or "]" after item 1, found "\\""');
  });

  it('refuses a record or a value past the table reader limits, without holding more', () => {
    const long = 'v'.repeat(MAX_FIELD_CHARS + 1);
    expect(refusal(() => read(['[{"a":"', long, '"}]'])).message).toMatch(
      /^x\.json: item 1 holds a value of 1,048,57\d characters or more; values are limited to 1,048,576$/,
    );
    // Many short values: the record as a whole is too long.
    const cell = '"0123456789",'.repeat(1000);
    const pieces = ['[{"a":['];
    for (let n = 0; n < MAX_RECORD_CHARS; n += cell.length) pieces.push(cell);
    expect(refusal(() => read(pieces)).message).toBe('x.json: item 1 is longer than 4 MiB of text');
    // An endless string: refused at the limit, whatever follows.
    const reader = new JsonDocumentReader('y.json', 'customers', () => {});
    reader.write('{"customers":[{"a":"');
    const chunk = 'z'.repeat(1 << 18);
    let written = 0;
    refusal(() => {
      for (let i = 0; i < 100; i++) {
        reader.write(chunk);
        written += chunk.length;
      }
    });
    expect(written).toBeLessThanOrEqual(MAX_FIELD_CHARS);
  });
});
