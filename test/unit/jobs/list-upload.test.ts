import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { BodySource, JsonBody } from '../../../src/api/client.js';
import { UsageError, ValidationError } from '../../../src/errors.js';
import { CollectedValues } from '../../../src/jobs/list-body.js';
import {
  checkListName,
  checkListType,
  runListUpload,
  serviceProblems,
  type ListUploadEvent,
  type ListUploadOptions,
} from '../../../src/jobs/list-upload.js';
import { maskLongNumbers } from '../../../src/io/mask.js';
import { describeCsvFrom, describeRead, readAs } from '../../../src/cli/views/list-report.js';
import type { List, ListType, ListWrite } from '../../../src/schema/lists.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/lists/', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'leadctl-list-upload-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Call {
  method: 'create' | 'update';
  listId?: number;
  body: ListWrite;
  /** The body text of a second call of the body source: a retry must get the same bytes. */
  again: string;
}

async function text(body: JsonBody<ListWrite>): Promise<string> {
  if (typeof body !== 'function') return JSON.stringify(body);
  let s = '';
  for await (const chunk of (body as BodySource)())
    s += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  return s;
}

function fakeApi(refuse?: (body: ListWrite) => ValidationError | undefined) {
  const calls: Call[] = [];
  const answer = async (method: Call['method'], body: JsonBody<ListWrite>, listId?: number): Promise<List> => {
    const first = await text(body);
    const parsed = JSON.parse(first) as ListWrite;
    calls.push({ method, listId, body: parsed, again: await text(body) });
    const refusal = refuse?.(parsed);
    if (refusal) throw refusal;
    return {
      id: listId ?? 41,
      name: parsed.name,
      type: parsed.type,
      deleted_at: null,
      created_at: '2026-01-01T00:00:00Z',
      updated_at: '2026-01-01T00:00:00Z',
    };
  };
  return {
    calls,
    api: {
      createList: (body: JsonBody<ListWrite>) => answer('create', body),
      updateList: (listId: number, body: JsonBody<ListWrite>) => answer('update', body, listId),
    },
  };
}

/**
 * Whether this process still has `path` open, after a moment for an asynchronous close (a handle
 * left to the garbage collector would still be open, and warn on stderr when collected).
 */
async function stillOpen(path: string): Promise<boolean> {
  const open = () =>
    readdirSync('/proc/self/fd').some((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  for (let i = 0; i < 50 && open(); i++) await new Promise((r) => setTimeout(r, 20));
  return open();
}

function run(
  options: Partial<ListUploadOptions> & { input: string; type: ListType },
  fake = fakeApi(),
  stdin?: string,
) {
  const io = {
    cwd: FIXTURES,
    now: () => new Date(),
    stdin: Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
  };
  return runListUpload({ name: 'test list', ...options }, { io, api: async () => fake.api as never });
}

describe('runListUpload on the fixtures', () => {
  it('stops on invalid rows by default: the first problems, masked, and nothing sent', async () => {
    const fake = fakeApi();
    const result = await run({ input: 'ssn-messy.csv', type: 'Social Security Numbers' }, fake);
    expect(result.outcome).toBe('invalid');
    expect(fake.calls).toEqual([]);
    expect(result.problemCount).toBe(8);
    expect(result.problems.map((p) => p.row)).toEqual([11, 12, 13, 14, 15, 16, 17, 18]);
    expect(result.problems[0]).toEqual({
      row: 11,
      value: '***-**-3456',
      reason: 'SSN area number 000 is never issued',
    });
    // 12-345-678 was typed short; 1234567 is what a spreadsheet makes of 001234567.
    expect(result.problems[5]!.reason).toBe(
      'SSN must have exactly 9 digits (dashes, spaces, dots or slashes between them are fine)',
    );
    expect(result.problems[6]!.reason).toBe(
      '7 digits, not 9: a spreadsheet dropped the leading zeros: format the column as Text (or give it a custom number format of 9 zeros) and export again',
    );
    expect(result.summary).toMatchObject({
      rows_read: 19,
      blank: 1,
      valid: 10,
      duplicates: 3,
      rejected: 8,
      distinct: 7,
      uploaded: 0,
      list_id: null,
    });
    // No unmasked SSN anywhere in what is shown.
    expect(JSON.stringify(result.problems)).not.toMatch(/\d{3}-?\d{2}-?\d{4}/);
  });

  it('uploads the distinct normalised values with --skip-invalid, in file order, as a re-creatable body', async () => {
    const fake = fakeApi();
    const result = await run({ input: 'ssn-messy.csv', type: 'Social Security Numbers', skipInvalid: true }, fake);
    expect(result.outcome).toBe('uploaded');
    expect(fake.calls).toHaveLength(1);
    const call = fake.calls[0]!;
    expect(call.method).toBe('create');
    expect(call.body).toEqual({
      name: 'test list',
      type: 'Social Security Numbers',
      list: ['123456789', '234567890', '345678901', '456789012', '567890123', '078051120', '219099999'],
    });
    expect(call.again).toBe(JSON.stringify(call.body));
    expect(result.summary).toMatchObject({ list_id: 41, uploaded: 7, normalised: 9, rejected: 8 });
    expect(result.list?.id).toBe(41);
  });

  it('sends nothing with --validate-only', async () => {
    const fake = fakeApi();
    const result = await run(
      { input: 'ssn-headerless.txt', type: 'Social Security Numbers', validateOnly: true },
      fake,
    );
    expect(result.outcome).toBe('validated');
    expect(fake.calls).toEqual([]);
    expect(result.summary).toMatchObject({
      validate_only: true,
      uploaded: 0,
      distinct: 5,
      header_row: null,
      format: 'lines',
    });
  });

  it('says the same thing on stderr and in the summary when plain lines give way to CSV', async () => {
    const events: ListUploadEvent[] = [];
    const io = {
      cwd: FIXTURES,
      now: () => new Date(),
      stdin: Readable.from([Buffer.from('123456789\n234567890\n"345678901"\n456789012\n')]),
    };
    const result = await runListUpload(
      { input: '-', name: 'l', type: 'Social Security Numbers', validateOnly: true },
      { io, onEvent: (e) => events.push(e) },
    );
    const reading = events.find((e) => e.type === 'reading');
    const switched = events.find((e) => e.type === 'csv-from');
    expect(reading).toMatchObject({ format: 'lines' });
    expect(switched).toEqual({ type: 'csv-from', file: 'stdin', row: 3, delimiter: ',' });
    expect(result.summary).toMatchObject({ format: 'csv', csv_from_row: 3, distinct: 4 });
    const said = [
      describeRead({ file: reading!.file, format: 'lines', column: null, header_row: null }),
      describeCsvFrom('stdin', 3),
    ].join('\n');
    expect(said).toContain('as one value per line');
    expect(said).toContain('as CSV');
    expect(readAs(result.summary)).toBe('one value per line, CSV from row 3');
    expect(readAs({ format: 'lines', csv_from_row: null })).toBe('one value per line');
  });

  it('reads the gzipped copy exactly like the plain file', async () => {
    const plain = fakeApi();
    const zipped = fakeApi();
    await run({ input: 'ssn-headerless.txt', type: 'Social Security Numbers' }, plain);
    await run({ input: 'ssn-headerless.txt.gz', type: 'Social Security Numbers' }, zipped);
    expect(zipped.calls[0]!.body.list).toEqual(plain.calls[0]!.body.list);
    expect(plain.calls[0]!.body.list).toEqual(['123456789', '234567890', '345678901', '456789012', '001010001']);
  });

  it('reads standard input for "-"', async () => {
    const fake = fakeApi();
    const result = await run({ input: '-', type: 'ZIP Codes' }, fake, 'zip\n02134\n10001-0001\n02134\n');
    expect(result.summary).toMatchObject({ file: 'stdin', duplicates: 1, uploaded: 2 });
    expect(fake.calls[0]!.body.list).toEqual(['02134', '10001']);
  });

  it('replaces the items of a list on update', async () => {
    const fake = fakeApi();
    const result = await run({ input: 'zip-codes-semicolon.csv', type: 'ZIP Codes', listId: 7 }, fake);
    expect(fake.calls[0]).toMatchObject({ method: 'update', listId: 7 });
    expect(fake.calls[0]!.body.list).toEqual(['02134', '10001', '94107']);
    expect(result.summary.list_id).toBe(7);
  });

  it.each([
    // file, type, expected summary counts, expected uploaded list
    [
      'customers-export.csv',
      'Social Security Numbers',
      { rows_read: 7, blank: 1, valid: 4, duplicates: 1, rejected: 2 },
      ['123456789', '234567890', '345678901'],
    ],
    [
      'ssn-last-four.csv',
      'Last Four of Social Security Numbers',
      { rows_read: 7, valid: 4, duplicates: 1, rejected: 3 },
      ['0123', '6789', '4567'],
    ],
    [
      'zip-codes.csv',
      'ZIP Codes',
      { rows_read: 9, valid: 6, duplicates: 1, rejected: 3 },
      ['90210', '02134', '10001', '60614', '94107'],
    ],
    [
      'phones.csv',
      'Telephone Numbers',
      { rows_read: 10, valid: 5, duplicates: 2, rejected: 5 },
      ['3125550142', '6465550199', '2125550173'],
    ],
    [
      'emails.csv',
      'Email Addresses',
      { rows_read: 9, valid: 5, duplicates: 1, rejected: 4 },
      ['jane.doe@example.com', 'john_smith+promo@mail.example.org', 'mary@example.net', 'carol@example.co.uk'],
    ],
    [
      'routing-numbers.csv',
      'Bank Routing Numbers',
      { rows_read: 9, valid: 6, duplicates: 1, rejected: 3 },
      ['021000021', '011000015', '121000358', '026009593', '322271627'],
    ],
    [
      'employers.csv',
      'Employer Names',
      { rows_read: 9, blank: 1, valid: 8, duplicates: 2, rejected: 0 },
      ['Acme Corporation', 'Globex, Inc.', 'Initech LLC', 'Umbrella Corp', 'Stark Industries', 'Wayne Enterprises'],
    ],
    [
      'affiliates.json',
      'Affiliates',
      { rows_read: 8, blank: 2, valid: 5, duplicates: 1, rejected: 1 },
      ['LeadGen Partners', 'leadgen partners', 'Affiliate 42', '42'],
    ],
    [
      'phones-excel-unicode.txt',
      'Telephone Numbers',
      { rows_read: 2, valid: 2, rejected: 0 },
      ['4155550132', '4155550188'],
    ],
  ] as const)('%s (%s)', async (input, type, counts, list) => {
    const fake = fakeApi();
    const result = await run({ input, type: type as ListType, skipInvalid: true }, fake);
    expect(result.summary).toMatchObject(counts);
    expect(fake.calls[0]!.body.list).toEqual(list);
    const s = result.summary;
    // Every row is accounted for.
    expect(s.blank + s.valid + s.rejected).toBe(s.rows_read);
    expect(s.distinct + s.duplicates).toBe(s.valid);
  });
});

describe('rejects file', () => {
  it('lists every problem as CSV with file, row, masked value and reason', async () => {
    const path = join(out, 'ssn-rejects.csv');
    const result = await run({
      input: 'ssn-messy.csv',
      type: 'Social Security Numbers',
      rejectsPath: path,
      skipInvalid: true,
    });
    expect(result.summary.rejects_file).toBe(path);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('file,row,value,reason');
    expect(lines).toHaveLength(9);
    expect(lines[1]).toBe('ssn-messy.csv,11,***-**-3456,SSN area number 000 is never issued');
    expect(lines[8]).toBe(
      'ssn-messy.csv,18,***-**-FGHI,"SSN must have exactly 9 digits (dashes, spaces, dots or slashes between them are fine)"',
    );
  });

  it('keeps values of other types as they were typed, quoting when needed', async () => {
    const path = join(out, 'customers-rejects.csv');
    await run({
      input: 'customers-export.csv',
      type: 'Affiliates',
      column: 'state',
      rejectsPath: path,
      validateOnly: true,
    });
    expect(readFileSync(path, 'utf8')).toBe(
      'file,row,value,reason\ncustomers-export.csv,8,"C-1007,Short,Row","has only 3 fields; column 5 (""state"") is missing"\n',
    );
  });

  it('is written, with its header only, even when nothing is wrong', async () => {
    const path = join(out, 'none.csv');
    await run({ input: 'ssn-headerless.txt', type: 'Social Security Numbers', rejectsPath: path, validateOnly: true });
    expect(readFileSync(path, 'utf8')).toBe('file,row,value,reason\n');
  });

  it('refuses a path that cannot be written before reading anything, and closes the input', async () => {
    await expect(
      run({ input: 'ssn-headerless.txt', type: 'Social Security Numbers', rejectsPath: join(out, 'no/such/dir.csv') }),
    ).rejects.toThrow(/cannot write the rejects file .*folder does not exist/);
    if (existsSync('/proc/self/fd')) expect(await stillOpen(join(FIXTURES, 'ssn-headerless.txt'))).toBe(false);
  });
});

describe('personal numbers in reports', () => {
  it('masks SSNs and account numbers in other columns of a quoted row, whatever the list type', async () => {
    const csv =
      'email,ssn,account\na@example.com,123-45-6789,000123456789\nb@example.com,234-56-7890,004417712345,extra\n';
    const result = await run(
      { input: '-', type: 'Email Addresses', column: 'email', skipInvalid: true, validateOnly: true },
      fakeApi(),
      csv,
    );
    expect(result.problems).toEqual([
      {
        row: 3,
        value: 'b@example.com,***-**-7890,********2345,extra',
        reason: expect.stringMatching(/^has 4 fields but the file has 3 columns/),
      },
    ]);
  });

  it('masks a full SSN typed into a last-four list', async () => {
    const result = await run(
      { input: '-', type: 'Last Four of Social Security Numbers', skipInvalid: true, validateOnly: true },
      fakeApi(),
      '6789\n123-45-6789\n',
    );
    expect(result.problems.map((p) => p.value)).toEqual(['***-**-6789']);
  });

  it('leaves runs of fewer than eight digits (ids, ZIPs, phone parts) as they are', () => {
    expect(maskLongNumbers('C-1007,02134,(312) 555-0142,12345678,2024-01-05')).toBe(
      'C-1007,02134,(312) 555-0142,****5678,****-01-05',
    );
  });
});

describe('refusals', () => {
  it.runIf(existsSync('/proc/self/fd'))('closes the file when a row past the limit stops the reading', async () => {
    const path = join(out, 'one-long-line.txt');
    writeFileSync(path, '7'.repeat(5 * 1024 * 1024));
    await expect(run({ input: path, type: 'Social Security Numbers', validateOnly: true })).rejects.toThrow(
      /longer than 4 MiB/,
    );
    expect(await stillOpen(path)).toBe(false);
  });

  it('refuses a rejects file that is the input itself, before touching it', async () => {
    const input = join(out, 'same.txt');
    writeFileSync(input, '123-45-6789\n');
    await expect(run({ input, type: 'Social Security Numbers', rejectsPath: input })).rejects.toThrow(
      /--rejects .* is the input file itself/,
    );
    expect(readFileSync(input, 'utf8')).toBe('123-45-6789\n');
  });

  it('refuses --column for a JSON array', async () => {
    await expect(run({ input: 'affiliates.json', type: 'Affiliates', column: '2' })).rejects.toThrow(
      /--column does not apply to affiliates.json/,
    );
  });

  it('refuses an empty result', async () => {
    const fake = fakeApi();
    const result = await run(
      { input: '-', type: 'Social Security Numbers', skipInvalid: true },
      fake,
      'SSN\n000-00-0000\n\n',
    );
    expect(result.outcome).toBe('empty');
    expect(fake.calls).toEqual([]);
    expect((await run({ input: '-', type: 'Email Addresses' }, fake, '')).outcome).toBe('empty');
  });

  it("maps the service's 422 row messages back to the rows of the input file", async () => {
    const fake = fakeApi(
      (body) =>
        new ValidationError(
          'the service refused the request',
          { list: [`Row 2: SSN is on a deny list`, 'Row 99: out of range'], name: ['taken'] },
          {
            details: { body: { message: 'The given data was invalid.', errors: {} }, items: body.list.length },
            http: { status: 422, body: { message: 'The given data was invalid.', errors: {} } },
          },
        ),
    );
    const path = join(out, 'refused.csv');
    const result = await run(
      { input: 'ssn-messy.csv', type: 'Social Security Numbers', skipInvalid: true, rejectsPath: path },
      fake,
    );
    expect(result.outcome).toBe('refused');
    expect(result.serviceMessage).toBe('The given data was invalid.');
    // Item 2 of the upload (234567890) came from row 3 of the file.
    expect(result.problems[0]).toEqual({
      row: 3,
      value: '*****7890',
      reason: 'refused by the service: SSN is on a deny list',
    });
    expect(result.problems[1]).toEqual({ value: '', reason: 'item 99 of the upload: out of range' });
    expect(result.problems[2]).toEqual({ value: '', reason: 'name: taken' });
    expect(result.summary.uploaded).toBe(0);
    expect(result.summary.rejected).toBe(8 + 3);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(1 + 8 + 3);
    expect(lines[9]).toBe('ssn-messy.csv,3,*****7890,refused by the service: SSN is on a deny list');
  });

  it('rethrows other service errors untouched', async () => {
    const boom = new Error('network down');
    const io = { cwd: FIXTURES, now: () => new Date(), stdin: Readable.from([]) };
    const api = { createList: async () => Promise.reject(boom), updateList: async () => Promise.reject(boom) };
    await expect(
      runListUpload(
        { input: 'ssn-headerless.txt', name: 'x', type: 'Social Security Numbers' },
        { io, api: async () => api },
      ),
    ).rejects.toBe(boom);
  });

  it('stops reading when the signal is aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('interrupted by SIGINT');
    controller.abort(reason);
    const io = { cwd: FIXTURES, now: () => new Date(), stdin: Readable.from([]) };
    await expect(
      runListUpload(
        { input: 'ssn-headerless.txt', name: 'x', type: 'Social Security Numbers' },
        { io, signal: controller.signal },
      ),
    ).rejects.toBe(reason);
  });
});

describe('serviceProblems', () => {
  it('reads Laravel-style list.N keys as 0-based indexes', () => {
    const collected = new CollectedValues('email');
    collected.push('a@example.com', 5);
    collected.push('b@example.com', 9);
    expect(serviceProblems({ 'list.1': ['The list.1 field is invalid.'] }, collected)).toEqual([
      { row: 9, value: 'b@example.com', reason: 'refused by the service: The list.1 field is invalid.' },
    ]);
  });
});

describe('checks before reading', () => {
  it('refuses a blank or over-long name', () => {
    expect(() => checkListName('   ')).toThrow(UsageError);
    expect(() => checkListName('x'.repeat(256))).toThrow(/256 characters long; the service allows at most 255/);
    expect(checkListName('x'.repeat(255))).toHaveLength(255);
  });

  it('accepts aliases and exact names in any case, and lists them on a mistake', () => {
    expect(checkListType('ssn4')).toBe('Last Four of Social Security Numbers');
    expect(checkListType('ROUTING')).toBe('Bank Routing Numbers');
    expect(checkListType('zip codes')).toBe('ZIP Codes');
    try {
      checkListType('ssns');
      throw new Error('expected a UsageError');
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).exitCode).toBe(2);
      expect((err as UsageError).hint).toContain('ssn, ssn4, zip, phone, email, routing, employer, affiliate');
    }
  });
});

describe('CollectedValues', () => {
  it('keeps leading zeros of numeric kinds and the source row of each item', async () => {
    const c = new CollectedValues('ssn');
    c.push('001010001', 4);
    c.push('123456789', 7);
    expect(c.valueAt(0)).toBe('001010001');
    expect(c.rowAt(1)).toBe(7);
    expect(c.rowAt(2)).toBeUndefined();
    let body = '';
    for await (const chunk of c.jsonBody('n', 'Social Security Numbers')) body += chunk;
    expect(JSON.parse(body)).toEqual({ name: 'n', type: 'Social Security Numbers', list: ['001010001', '123456789'] });
  });

  it('streams large lists in chunks and escapes strings', async () => {
    const c = new CollectedValues('name');
    for (let i = 0; i < 20_000; i++) c.push(`Employer "${i}" \\ Ltd`, i + 2);
    const chunks: string[] = [];
    for await (const chunk of c.jsonBody('big "one"', 'Employer Names')) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    const parsed = JSON.parse(chunks.join('')) as ListWrite;
    expect(parsed.name).toBe('big "one"');
    expect(parsed.list).toHaveLength(20_000);
    expect(parsed.list[19_999]).toBe('Employer "19999" \\ Ltd');
  });

  it('holds phone numbers above 2^32 exactly', async () => {
    const c = new CollectedValues('phone');
    c.push('9895550142', 2);
    expect(c.valueAt(0)).toBe('9895550142');
  });
});
