import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { OutputFormat } from '../../../src/cli/context.js';
import { Output, type Column } from '../../../src/output/render.js';

function capture(format: OutputFormat, color = false) {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
  return { out: new Output(stream, { format, color }), text: () => text };
}

interface Row {
  id: number;
  name: string;
  ssn: string;
  meta?: { a: number };
}

const rows: Row[] = [
  { id: 1, name: 'Alpha, Inc.', ssn: '123456789', meta: { a: 1 } },
  { id: 22, name: 'Beta "B"', ssn: '987654321' },
];
const columns: Column<Row>[] = [
  { key: 'id', header: 'ID', align: 'right' },
  { key: 'name', header: 'Name' },
  { key: 'ssn', header: 'SSN', mask: 'ssn' },
  { key: 'meta', header: 'Meta' },
];

describe('Output.list', () => {
  it('json: one array document of the columns with raw values', async () => {
    const c = capture('json');
    await c.out.list(rows, columns);
    expect(JSON.parse(c.text())).toEqual([
      { id: 1, name: 'Alpha, Inc.', ssn: '123456789', meta: { a: 1 } },
      { id: 22, name: 'Beta "B"', ssn: '987654321', meta: null },
    ]);
  });

  it('ndjson: one line per record', async () => {
    const c = capture('ndjson');
    await c.out.list(rows, columns, { jsonRow: (r) => ({ id: r.id }) });
    expect(c.text()).toBe('{"id":1}\n{"id":22}\n');
  });

  it('csv: a header of keys, quoting where needed, objects as JSON', async () => {
    const c = capture('csv');
    await c.out.list(rows, columns);
    expect(c.text()).toBe('id,name,ssn,meta\n1,"Alpha, Inc.",123456789,"{""a"":1}"\n22,"Beta ""B""",987654321,\n');
  });

  it('table: headings, masked personal data, no colour codes without colour', async () => {
    const c = capture('table');
    await c.out.list(rows, columns);
    const text = c.text();
    expect(text).toContain('ID');
    expect(text).toContain('Alpha, Inc.');
    expect(text).toContain('*****6789');
    expect(text).not.toContain('123456789');
    expect(text).not.toMatch(/\u001b\[/);
  });

  it('table: nothing in a cell acts on the terminal, masked ones included; JSON keeps the value', async () => {
    const hostile: Row[] = [{ id: 3, name: 'A\u001b[2Jco', ssn: '\u001b]0;pwned\u0007123-45-6789\u202e' }];
    const c = capture('table');
    await c.out.list(hostile, columns);
    expect(c.text()).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(c.text()).toContain('A\\x1b[2Jco');
    expect(c.text()).not.toContain('123-45');
    const j = capture('json');
    await j.out.list(hostile, columns);
    expect(JSON.parse(j.text())[0].name).toBe('A\u001b[2Jco');
  });

  it('table: masks a column even when it has its own format', async () => {
    const c = capture('table');
    await c.out.list(rows, [
      {
        key: 'account',
        header: 'Account',
        value: () => '000123456789',
        format: (v) => `acct ${String(v)}`,
        mask: 'account',
      },
    ]);
    expect(c.text()).toContain('**** ********6789');
    expect(c.text()).not.toContain('123456789');
  });

  it('table: says so when there is nothing', async () => {
    const c = capture('table');
    await c.out.list([], columns, { empty: 'No rows.' });
    expect(c.text()).toBe('No rows.\n');
    const j = capture('json');
    await j.out.list([], columns, { empty: 'No rows.' });
    expect(JSON.parse(j.text())).toEqual([]);
  });
});

describe('Output.record and document', () => {
  it('prints one record as an object or a two-column table', async () => {
    const j = capture('json');
    await j.out.record(rows[0]!, columns);
    expect(JSON.parse(j.text())).toMatchObject({ id: 1, ssn: '123456789' });
    const t = capture('table');
    await t.out.record(rows[0]!, columns);
    expect(t.text()).toMatch(/SSN.*\*{5}6789/);
  });

  it('prints a free-form document as JSON, or the human text on a table run', async () => {
    const j = capture('json');
    await j.out.document({ ok: true }, () => 'All good');
    expect(JSON.parse(j.text())).toEqual({ ok: true });
    const t = capture('table');
    await t.out.document({ ok: true }, () => 'All good');
    expect(t.text()).toBe('All good\n');
    const c = capture('csv');
    // A summary is one spreadsheet row: nested fields are columns of their own, lists JSON in their cell.
    await c.out.document(
      { ok: true, bad: false, live: { a: 1, deeper: { b: 'x,y' } }, list: [1, 2], empty: {}, n: null },
      () => 'All good',
    );
    expect(c.text()).toBe('ok,bad,live.a,live.deeper.b,list,empty,n\ntrue,false,1,"x,y","[1,2]",{},\n');
    const n = capture('ndjson');
    await n.out.document({ ok: true }, () => 'All good');
    expect(n.text()).toBe('{"ok":true}\n');
  });
});

describe('Output.stream', () => {
  for (const format of ['json', 'ndjson', 'csv', 'table'] as const) {
    it(`${format}: streamed output equals the listed output`, async () => {
      const listed = capture(format);
      await listed.out.list(rows, columns);
      const streamed = capture(format);
      const writer = await streamed.out.stream(columns);
      for (const r of rows) await writer.write(r);
      await writer.end();
      if (format === 'json') expect(JSON.parse(streamed.text())).toEqual(JSON.parse(listed.text()));
      else expect(streamed.text()).toBe(listed.text());
    });
  }

  it('json: an empty stream is an empty array, csv an empty stream is the header', async () => {
    const j = capture('json');
    await (await j.out.stream(columns)).end();
    expect(JSON.parse(j.text())).toEqual([]);
    const c = capture('csv');
    await (await c.out.stream(columns)).end();
    expect(c.text()).toBe('id,name,ssn,meta\n');
  });
});
