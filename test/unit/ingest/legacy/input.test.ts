import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { InputError } from '../../../../src/errors.js';
import { parseLegacyInput, readLegacyInput } from '../../../../src/ingest/legacy/input.js';

describe('parseLegacyInput', () => {
  it('reads one JSON object as one lead', () => {
    const r = parseLegacyInput('{"first_name":"Ann"}', 'a.json');
    expect(r.shape).toBe('object');
    expect(r.leads).toEqual([{ number: 1, data: { first_name: 'Ann' } }]);
  });

  it('reads a JSON array as several leads, numbered from 1', () => {
    const r = parseLegacyInput('[{"a":1},\n {"a":2}]', 'a.json');
    expect(r.shape).toBe('array');
    expect(r.leads.map((l) => [l.number, l.data.a])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it('reads NDJSON with line numbers, skipping blank lines, CRLF and a BOM', () => {
    const r = parseLegacyInput('\ufeff{"a":1}\r\n\r\n{"a":2}\r\n', 'leads.ndjson');
    expect(r.shape).toBe('ndjson');
    expect(r.leads).toEqual([
      { number: 1, line: 1, data: { a: 1 } },
      { number: 2, line: 3, data: { a: 2 } },
    ]);
  });

  it('names the file, line and column of a JSON syntax error', () => {
    let err: unknown;
    try {
      parseLegacyInput('{\n  "a": 1,\n  "b": }\n', 'bad.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toMatch(/^bad\.json: not valid JSON: .*line 3/);
    expect((err as InputError).exitCode).toBe(2);
  });

  it('names the NDJSON line that does not parse', () => {
    expect(() => parseLegacyInput('{"a":1}\n{"a":}\n', 'x.ndjson')).toThrow(/x\.ndjson: line 2 is not valid JSON/);
    // Cut short (no closing brace): still a line of NDJSON, since the first line is a whole lead.
    expect(() =>
      parseLegacyInput('{"customer_id":"200001"}\n{"customer_id": "200002", "loan_id": \n', 'x.ndjson'),
    ).toThrow(/x\.ndjson: line 2 is not valid JSON/);
  });

  it('refuses empty input, an empty array and values that are not objects', () => {
    expect(() => parseLegacyInput('  \n', 'e.json')).toThrow(/e\.json: the lead file is empty/);
    expect(() => parseLegacyInput('[]', 'e.json')).toThrow(/holds no leads/);
    expect(() => parseLegacyInput('[{"a":1}, 5]', 'e.json')).toThrow(
      /e\.json: lead 2 is number, expected a JSON object/,
    );
    expect(() => parseLegacyInput('"hello"', 'e.json')).toThrow(/the lead is string/);
  });
});

describe('readLegacyInput', () => {
  it('reads `-` from stdin and calls it stdin in messages', async () => {
    const stdin = Readable.from([Buffer.from('{"a":1}\n{"a":2}\n')]);
    const r = await readLegacyInput('-', { stdin, cwd: process.cwd() });
    expect(r.source).toBe('stdin');
    expect(r.leads).toHaveLength(2);
  });

  it('reads a file relative to the working directory and reports a missing one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'legacy-input-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'one.json'), JSON.stringify({ first_name: 'Bo' }));
    const r = await readLegacyInput('one.json', { stdin: Readable.from([]), cwd: dir });
    expect(r.leads[0]!.data).toEqual({ first_name: 'Bo' });
    await expect(readLegacyInput('missing.json', { stdin: Readable.from([]), cwd: dir })).rejects.toThrow(
      /missing\.json: no such file/,
    );
  });
});
