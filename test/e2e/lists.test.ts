import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, stderrDocument } from '../helpers/binary.js';
import { startEnv, type Env } from './service-env.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/lists/', import.meta.url));

let env: Env;
/** Files written by the runs (rejects) go to env.dir; the runs read the fixtures from their folder. */
let root: string;
let sandbox: Env['sandbox'];

const run = (args: string[], input?: string) => env.run(args, { input, cwd: FIXTURES });
/** Any unmasked SSN-like run of digits, with or without dashes. */
const PLAIN_SSN = /\b\d{3}-?\d{2}-?\d{4}\b/;

beforeAll(async () => {
  env = await startEnv();
  sandbox = env.sandbox;
  root = env.dir;
});

afterAll(async () => {
  await env?.stop();
});

describe('lists create: the invalid-row policy', () => {
  it('stops at invalid rows (exit 2): first problems on stderr, masked; nothing uploaded', async () => {
    const before = await sandbox.stats();
    const r = await run(['lists', 'create', '--name', 'Messy', '--type', 'ssn', 'ssn-messy.csv']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toContain('ssn-messy.csv: 8 invalid rows:');
    // Grouped by reason, most frequent first, with the first row of each as an example.
    expect(errorLines(r.stderr)).toMatch(/│ rows │ reason\s+│ first \(row: value\)\s+│/);
    // What a file may hold (dashes are fine), and what a spreadsheet did to row 17's 001234567.
    expect(errorLines(r.stderr)).toMatch(/│\s+2 │ SSN must have exactly 9 digits \(dashes, spaces,\s+│ 16: /);
    expect(errorLines(r.stderr)).toMatch(/│\s+1 │ 7 digits, not 9: a spreadsheet dropped the\s+│ 17: /);
    expect(errorLines(r.stderr)).not.toMatch(/no dashes/);
    expect(errorLines(r.stderr)).toMatch(
      /│\s+1 │ SSN area number 000 is never(?: issued)?\s+│ 11: \*\*\*-\*\*-3456\s+│/,
    );
    expect(errorLines(r.stderr)).toContain('use --rejects FILE to write every problem, row by row, to a CSV file');
    expect(errorLines(r.stderr)).toContain('Error: ssn-messy.csv: 8 invalid rows; nothing was uploaded');
    expect(errorLines(r.stderr)).toContain('--skip-invalid');
    expect(errorLines(r.stderr)).not.toMatch(PLAIN_SSN);
    // Stdout piped (JSON implied): stdout stays clean; the JSON error document, with the problems, ends stderr.
    expect(r.stdout).toBe('');
    const doc = stderrDocument(r.stderr);
    expect(doc.error).toMatchObject({ code: 'invalid_input', exit_code: 2, details: { problem_count: 8 } });
    expect(doc.error.details.problems[0]).toEqual({
      row: 11,
      value: '***-**-3456',
      reason: 'SSN area number 000 is never issued',
    });
    const after = await sandbox.stats();
    expect(after.lists).toBe(before.lists);
  });

  it('counts the problems of one reason together instead of listing them one by one', async () => {
    const lines = [
      'SSN',
      ...Array.from({ length: 25 }, (_, i) => `000-00-${String(1000 + i)}`),
      '123-45-6789',
      '12345',
    ];
    const r = await run(['-o', 'table', 'lists', 'create', '--name', 'Many', '--type', 'ssn', '-'], lines.join('\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/│\s+25 │ SSN area number 000 is never(?: issued)?\s+│ 2: \*\*\*-\*\*-1000\s+│/);
    expect(r.stderr).toMatch(/│\s+1 │ SSN must have exactly 9 digits/);
    expect(r.stderr.match(/SSN area number 000/g)).toHaveLength(1);
    expect(r.stderr).toContain('26 invalid rows');
  });

  it('uploads the valid rows with --skip-invalid (exit 4) and writes every problem to --rejects', async () => {
    const rejects = join(root, 'ssn-rejects.csv');
    const r = await run([
      'lists',
      'create',
      '--name',
      'Messy SSNs',
      '--type',
      'ssn',
      '--skip-invalid',
      '--rejects',
      rejects,
      'ssn-messy.csv',
    ]);
    expect(r.code).toBe(4);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({
      name: 'Messy SSNs',
      type: 'Social Security Numbers',
      file: 'ssn-messy.csv',
      header_row: 1,
      rows_read: 19,
      blank: 1,
      valid: 10,
      normalised: 9,
      duplicates: 3,
      rejected: 8,
      uploaded: 7,
      rejects_file: rejects,
    });
    expect(summary.list_id).toBeGreaterThan(0);
    expect(typeof summary.elapsed_seconds).toBe('number');
    const csv = readFileSync(rejects, 'utf8').trimEnd().split('\n');
    expect(csv[0]).toBe('file,row,value,reason');
    expect(csv.slice(1).map((l) => l.split(',')[1])).toEqual(['11', '12', '13', '14', '15', '16', '17', '18']);
    expect(csv.join('\n')).not.toMatch(PLAIN_SSN);

    const got = await run(['lists', 'get', String(summary.list_id)]);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({
      id: summary.list_id,
      name: 'Messy SSNs',
      type: 'Social Security Numbers',
      archived: false,
      deleted_at: null,
    });
  });

  it('--validate-only reads and reports but sends nothing', async () => {
    // What two stats calls alone add to the request count (the stats call may count itself).
    const s0 = await sandbox.stats();
    const s1 = await sandbox.stats();
    const r = await run([
      'lists',
      'create',
      '--name',
      'Check',
      '--type',
      'phone',
      '--validate-only',
      '--skip-invalid',
      'phones.csv',
    ]);
    const s2 = await sandbox.stats();
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({
      list_id: null,
      validate_only: true,
      valid: 5,
      distinct: 3,
      uploaded: 0,
    });
    expect(s2.lists).toBe(s1.lists);
    expect(s2.requests.total - s1.requests.total).toBe(s1.requests.total - s0.requests.total);
  });

  it('refuses an unknown type or a long name before reading the file (which need not exist)', async () => {
    const badType = await run(['lists', 'create', '--name', 'x', '--type', 'ssns', 'does-not-exist.csv']);
    expect(badType.code).toBe(2);
    expect(errorLines(badType.stderr)).toContain('unknown list type "ssns"');
    expect(errorLines(badType.stderr)).not.toContain('does-not-exist');
    const longName = await run(['lists', 'create', '--name', 'n'.repeat(256), '--type', 'zip', 'does-not-exist.csv']);
    expect(longName.code).toBe(2);
    expect(errorLines(longName.stderr)).toContain('--name is 256 characters long; the service allows at most 255');
  });

  it('refuses a file with no valid value (exit 2)', async () => {
    const r = await run(
      ['lists', 'create', '--name', 'Nothing', '--type', 'email', '--skip-invalid', '-'],
      'Email\nnot-an-email\n\n',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('stdin: no valid values to upload (2 rows read: 1 blank, 1 rejected)');
  });

  it('names a missing file', async () => {
    const r = await run(['lists', 'create', '--name', 'x', '--type', 'zip', 'missing.csv']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toContain('Error: missing.csv: no such file');
  });
});

describe('lists create and update from every kind of input', () => {
  it('headerless .gz, then update from stdin replaces the items', async () => {
    const created = await run([
      'lists',
      'create',
      '--name',
      'Plain SSNs',
      '--type',
      'Social Security Numbers',
      'ssn-headerless.txt.gz',
    ]);
    expect(created.code).toBe(0);
    const summary = JSON.parse(created.stdout);
    expect(summary).toMatchObject({ header_row: null, rows_read: 7, blank: 1, duplicates: 1, uploaded: 5 });
    const before = await sandbox.stats();

    const updated = await run(
      ['lists', 'update', String(summary.list_id), '--name', 'Plain SSNs v2', '--yes', '--max-removed', '100%', '-'],
      'ssn\n123-45-6789\n234-56-7890\n',
    );
    expect(updated.code).toBe(0);
    expect(errorLines(updated.stderr)).toContain(`List ${summary.list_id} keeps its type Social Security Numbers`);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      list_id: summary.list_id,
      file: 'stdin',
      uploaded: 2,
      type: 'Social Security Numbers',
    });
    const after = await sandbox.stats();
    expect(after.list_items).toBe(before.list_items - 5 + 2);
    const got = JSON.parse((await run(['lists', 'get', String(summary.list_id)])).stdout);
    expect(got.name).toBe('Plain SSNs v2');

    // Without a terminal to ask on, replacing a list needs --yes: refused before anything is sent.
    const unconfirmed = await run(['lists', 'update', String(summary.list_id), '-'], 'ssn\n345-67-8901\n');
    expect(unconfirmed.code).toBe(2);
    expect(errorLines(unconfirmed.stderr)).toMatch(
      /Replace every value of list \d+ \("Plain SSNs v2"\) with the 1 value of stdin: this needs confirmation/,
    );
    expect((await sandbox.stats()).list_items).toBe(after.list_items);

    // A second list with an existing name asks too (the service would allow the duplicate).
    const twin = await run(['lists', 'create', '--name', 'plain ssns v2', '--type', 'ssn', '-'], 'ssn\n345-67-8901\n');
    expect(twin.code).toBe(2);
    expect(errorLines(twin.stderr)).toMatch(/A list named "plain ssns v2" exists already/);
  });

  it('a multi-column export: the ssn column is found by its header; table output for people', async () => {
    const r = await run([
      '-o',
      'table',
      'lists',
      'create',
      '--name',
      'Customers',
      '--type',
      'ssn',
      '--skip-invalid',
      'customers-export.csv',
    ]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('Reading customers-export.csv as CSV, column 4 (ssn), header on row 1');
    expect(r.stdout).toMatch(/^Uploaded:\s+3$/m);
    expect(r.stdout).toMatch(/^Rejected:\s+2$/m);
    expect(r.stderr).toContain('has only 3 fields; column 4 ("ssn") is missing');
  });

  it.each([
    ['ssn-last-four.csv', 'ssn4', 3],
    ['zip-codes.csv', 'zip', 5],
    ['emails.csv', 'email', 4],
    ['routing-numbers.csv', 'routing', 5],
    ['employers.csv', 'employer', 6],
    ['affiliates.json', 'affiliate', 4],
    ['phones-excel-unicode.txt', 'phone', 2],
  ])('%s as %s uploads %i values', async (file, type, uploaded) => {
    const r = await run(['lists', 'create', '--name', `fixture ${file}`, '--type', type, '--skip-invalid', file]);
    expect([0, 4]).toContain(r.code);
    expect(JSON.parse(r.stdout).uploaded).toBe(uploaded);
  });

  it('--column picks a column by number in a headerless file', async () => {
    const r = await run(
      ['lists', 'create', '--name', 'By number', '--type', 'zip', '--column', '2', '--no-header', '-'],
      '1,02134\n2,60614-1234\n',
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ column: '2', header_row: null, uploaded: 2, normalised: 1 });
  });

  it('asks for --column when several columns could hold the values', async () => {
    const r = await run(
      ['lists', 'create', '--name', 'Phones', '--type', 'phone', '-'],
      'home_phone,cell_phone\n3125550142,3125550143\n',
    );
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toContain(
      'several columns could hold the values (1: "home_phone", 2: "cell_phone"); choose one with --column',
    );
  });
});

describe('lists create --delimiter', () => {
  it('splits on ";" when named: a one-column list gets "987654321;abc" as a problem of its row, not as one value', async () => {
    const r = await run(
      ['lists', 'create', '--name', 'Semicolons', '--type', 'ssn', '--delimiter', ';', '-'],
      'SSN\n123-45-6789\n987654321;abc\n',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Row 3 of stdin has a quote or a semicolon: reading it and every row after it as CSV');
    const doc = stderrDocument(r.stderr);
    expect(doc.error.details.problems).toEqual([
      {
        row: 3,
        value: '********1;abc',
        reason: 'has 2 fields but the file has 1 column (a value containing ";" must be in double quotes)',
      },
    ]);
  });

  it('finds the column of a ";" file and uploads its values, commas inside values left alone', async () => {
    const r = await run(
      ['lists', 'create', '--name', 'Semicolon columns', '--type', 'employer', '--delimiter', 'semicolon', '-'],
      'id;employer;ssn\n1;Globex, Inc.;123-45-6789\n2;Acme;234-56-7890\n',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ format: 'csv', column: '2 (employer)', valid: 2, uploaded: 2 });
  });
});

describe('lists get', () => {
  let id: number;
  beforeAll(async () => {
    const r = await run(['lists', 'create', '--name', 'Formats', '--type', 'zip', '-'], '90210\n');
    id = JSON.parse(r.stdout).list_id;
  });

  it('in every output format', async () => {
    const json = JSON.parse((await run(['-o', 'json', 'lists', 'get', String(id)])).stdout);
    expect(Object.keys(json)).toEqual(['id', 'name', 'type', 'archived', 'deleted_at', 'created_at', 'updated_at']);
    expect(json).toMatchObject({ id, name: 'Formats', type: 'ZIP Codes', archived: false });
    const ndjson = (await run(['-o', 'ndjson', 'lists', 'get', String(id)])).stdout.trim().split('\n');
    expect(ndjson).toHaveLength(1);
    expect(JSON.parse(ndjson[0]!).id).toBe(id);
    const csv = (await run(['-o', 'csv', 'lists', 'get', String(id)])).stdout.trim().split('\n');
    expect(csv[0]).toBe('id,name,type,archived,created_at,updated_at');
    expect(csv[1]).toMatch(new RegExp(`^${id},Formats,ZIP Codes,false,\\d{4}-`));
    const table = (await run(['-o', 'table', 'lists', 'get', String(id)])).stdout;
    expect(table).toMatch(/^archived:\s+no$/m);
  });

  it('a list that does not exist is exit 2; a bad id is a usage error', async () => {
    const missing = await run(['lists', 'get', '999999']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('HTTP 404');
    const bad = await run(['lists', 'get', 'abc']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('a list id is a positive whole number');
  });
});
