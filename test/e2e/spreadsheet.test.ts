import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { pushEnv } from './push-helpers.js';
import { fixturePath } from './service-env.js';

/** First contact with a spreadsheet: each thing a spreadsheet does gets its cause and its fix. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-spreadsheet-'));
let sandbox: TestSandbox;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandboxProcess(['--data-dir', join(work, 'sandbox')]);
  env = pushEnv(sandbox);
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(work, { recursive: true, force: true });
});

const run = (args: string[]) => runBinary(args, { env, cwd: work });
const SCIENTIFIC =
  'Excel wrote this number in scientific notation, which has lost digits: format the column as Text and export again';
const EXCEL =
  'is an Excel workbook, not a CSV file: in Excel use File > Save As > CSV UTF-8 (comma delimited) and give leadctl that file';

describe('lists create on a file a spreadsheet wrote', () => {
  it('names scientific notation, placeholders and a lost leading zero, each with what to do', async () => {
    const rejects = join(work, 'list-rejects.csv');
    const r = await run([
      '-o',
      'table',
      'lists',
      'create',
      '--name',
      'From Excel',
      '--type',
      'ssn',
      '--rejects',
      rejects,
      fixturePath('spreadsheet', 'excel-general.csv'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('4 invalid rows; nothing was uploaded');
    const rows = parse(readFileSync(rejects, 'utf8'), { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => [row.row, row.reason])).toEqual([
      ['3', SCIENTIFIC],
      ['4', 'a placeholder for a missing value: leave the cell empty (empty rows are skipped) or remove the row'],
      ['5', 'a placeholder for a missing value: leave the cell empty (empty rows are skipped) or remove the row'],
      [
        '6',
        '8 digits, not 9: a spreadsheet dropped the leading zero: format the column as Text (or give it a custom number format of 9 zeros) and export again',
      ],
    ]);
    // The dashed SSNs of rows 2 and 8 are fine: no reason says dashes are not allowed.
    expect(r.stderr).not.toMatch(/no dashes/);
    expect(await sandbox.stats()).toMatchObject({ lists: 0 });
  });

  it.each(['ssns.xlsx', 'ssns.xls'])(
    'refuses a workbook (%s) by its first bytes, with or without --encoding, before any encoding error',
    async (name) => {
      for (const extra of [[], ['--encoding', 'latin1']]) {
        const r = await run([
          ...extra,
          'lists',
          'create',
          '--name',
          'Book',
          '--type',
          'ssn',
          fixturePath('spreadsheet', name),
        ]);
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`${fixturePath('spreadsheet', name)}: ${EXCEL}`);
        expect(r.stderr).not.toMatch(/UTF-8 text|--encoding latin1/);
      }
      expect(await sandbox.stats()).toMatchObject({ lists: 0 });
    },
  );

  it('refuses an OpenDocument spreadsheet with the LibreOffice words', async () => {
    const r = await run(['lists', 'create', '--name', 'Calc', '--type', 'ssn', fixturePath('spreadsheet', 'ssns.ods')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is an OpenDocument spreadsheet, not a CSV file: in LibreOffice use File > Save As');
  });
});

describe('customers push on a file a spreadsheet wrote', () => {
  it('rejects the damaged records with the cause and the fix, and sends the rest (exit 4)', async () => {
    const file = join(work, 'customers.csv');
    writeFileSync(
      file,
      [
        'customer_id,loan_id,lead_id,loan_amount,applied_at,loan_status',
        '100201,LN-2001,500201,50000,2026-03-06T16:15:00Z,Current',
        '100202,LN-2002,5.00202E+05,50000,2026-03-06T16:15:00Z,Current',
        '100203,LN-2003,500203,N/A,2026-03-06T16:15:00Z,Current',
        '100204,LN-2004,500204,50000,2026-03-06T16:15:00Z,#N/A',
        '1.00205E+05,LN-2005,500205,50000,2026-03-06T16:15:00Z,Current',
      ].join('\r\n') + '\r\n',
    );
    const rejects = join(work, 'customers-rejects.csv');
    const r = await run(['-o', 'json', 'customers', 'push', file, '--rejects', rejects]);
    expect(r.code).toBe(4);
    const summary = JSON.parse(r.stdout);
    expect(summary.customers).toMatchObject({ read: 5, accepted: 1 });
    const rows = parse(readFileSync(rejects, 'utf8'), { columns: true }) as Record<string, string>[];
    const byRow = Object.fromEntries(rows.map((row) => [row.row, `${row.field}: ${row.reason}`]));
    expect(byRow).toEqual({
      '3': `lead_loan.lead_id: ${SCIENTIFIC}`,
      '4': 'lead_loan.loan_amount: a placeholder for a missing value, but loan_amount is required: fill in the value or remove the row',
      '5': 'lead_loan.loan_status: a placeholder for a missing value: leave the cell empty instead (an empty cell sends no value)',
      '6': `customer_id: ${SCIENTIFIC}`,
    });
  });

  it('refuses a workbook given as the export, and as the mapping', async () => {
    const book = fixturePath('spreadsheet', 'ssns.xlsx');
    const asInput = await run(['customers', 'push', book]);
    expect(asInput.code).toBe(2);
    expect(asInput.stderr).toContain(`${book}: ${EXCEL}`);
    const csv = join(work, 'one.csv');
    writeFileSync(csv, 'customer_id,loan_id\n1,2\n');
    const asMapping = await run(['customers', 'push', csv, '--mapping', book]);
    expect(asMapping.code).toBe(2);
    expect(asMapping.stderr).toContain(`${book}: ${EXCEL}`);
  });
});
