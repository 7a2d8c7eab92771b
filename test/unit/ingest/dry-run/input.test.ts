import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildDryRunRequest,
  lookbacksFrom,
  openDryRunFile,
  parseLookback,
} from '../../../../src/ingest/dry-run/input.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../../fixtures/dry-run');

describe('parseLookback', () => {
  it('takes days or off', () => {
    expect(parseLookback('30', '--x')).toBe(30);
    expect(parseLookback('0', '--x')).toBe(0);
    expect(parseLookback('OFF', '--x')).toBe(false);
    expect(parseLookback(undefined, '--x')).toBeUndefined();
    expect(() => parseLookback('-1', '--purchased-lookback')).toThrow(
      /--purchased-lookback must be a whole number of days or "off", got "-1"/,
    );
    expect(() => parseLookback('3.5', '--x')).toThrow(/whole number/);
  });
  it('names the service fields', () => {
    expect(lookbacksFrom({ purchasedLookback: '30', underwritingLookback: 'off' })).toEqual({
      previously_purchased_lookback_window: 30,
      underwriting_cost_lookback_window: false,
    });
    expect(lookbacksFrom({})).toEqual({});
  });
});

describe('buildDryRunRequest', () => {
  it("names a spreadsheet's doing: scientific notation, a lost leading zero, a placeholder", () => {
    expect(buildDryRunRequest('1.23457E+08', undefined, {})).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^ssn: Excel wrote this number in scientific notation/)],
    });
    expect(buildDryRunRequest('12345678', undefined, {})).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^ssn: 8 digits, not 9: a spreadsheet dropped the leading zero/)],
    });
    expect(buildDryRunRequest('123-45-6789', 'N/A', {})).toEqual({
      ok: false,
      problems: [
        'email: a placeholder for a missing value: leave the cell empty instead (an empty cell sends no value)',
      ],
    });
    expect(buildDryRunRequest('#N/A', 'ann@example.com', {})).toEqual({
      ok: false,
      problems: ['ssn: a placeholder for a missing value: leave the cell empty instead (an empty cell sends no value)'],
    });
  });
  it('strips SSN delimiters and trims the email', () => {
    expect(
      buildDryRunRequest('123-45 6789', ' ann@example.com ', { underwriting_cost_lookback_window: false }),
    ).toEqual({
      ok: true,
      request: {
        social_security_number: '123456789',
        email: 'ann@example.com',
        underwriting_cost_lookback_window: false,
      },
    });
  });
  it('refuses an SSN that is not 9 digits, a bad email, and nothing at all, in words', () => {
    expect(buildDryRunRequest('12-34', undefined, {})).toEqual({
      ok: false,
      problems: ['ssn: must be 9 digits (spaces, dashes and dots are ignored)'],
    });
    const email = buildDryRunRequest(undefined, 'ann@', {});
    expect(email.ok).toBe(false);
    expect(!email.ok && email.problems[0]).toMatch(/^email: email address has an invalid domain/);
    expect(buildDryRunRequest(undefined, undefined, {})).toEqual({
      ok: false,
      problems: ['give an SSN or an email (or both)'],
    });
    expect(buildDryRunRequest('', ' ', {})).toEqual({
      ok: false,
      problems: ['no ssn or email: at least one is needed'],
    });
  });
});

describe('openDryRunFile', () => {
  it('finds the ssn and email columns and numbers rows as a spreadsheet does', async () => {
    const file = await openDryRunFile(
      join(FIXTURES, 'applicants.csv'),
      { stdin: Readable.from([]), cwd: process.cwd() },
      { lookbacks: {} },
    );
    expect(file.header).toEqual(['applicant', 'ssn', 'email']);
    expect([file.ssnColumn, file.emailColumn]).toEqual(['ssn', 'email']);
    const rows = [];
    for await (const r of file.rows)
      rows.push({ row: r.row, ok: r.check.ok, problems: r.check.ok ? undefined : r.check.problems });
    expect(rows).toEqual([
      { row: 2, ok: true, problems: undefined },
      { row: 3, ok: true, problems: undefined },
      { row: 4, ok: true, problems: undefined },
      { row: 5, ok: false, problems: ['ssn: must be 9 digits (spaces, dashes and dots are ignored)'] },
      { row: 6, ok: false, problems: [expect.stringMatching(/^email: /)] },
      { row: 7, ok: false, problems: ['no ssn or email: at least one is needed'] },
      { row: 8, ok: true, problems: undefined },
      { row: 9, ok: false, problems: ['has 4 fields, the header has 3'] },
    ]);
  });

  it('uses the named columns and refuses a file without either', async () => {
    const csv = 'Name,Social,Mail\nA,123456789,a@example.com\n';
    const file = await openDryRunFile(
      '-',
      { stdin: Readable.from([Buffer.from(csv)]), cwd: '.' },
      { ssnColumn: 'social', emailColumn: 'MAIL', lookbacks: {} },
    );
    const first = await file.rows.next();
    expect(first.value?.check).toEqual({
      ok: true,
      request: { social_security_number: '123456789', email: 'a@example.com' },
    });
    await expect(
      openDryRunFile('-', { stdin: Readable.from([Buffer.from(csv)]), cwd: '.' }, { lookbacks: {} }),
    ).rejects.toThrow(/stdin, row 1: has no ssn or email column; its columns are: Name, Social, Mail/);
    await expect(
      openDryRunFile(
        '-',
        { stdin: Readable.from([Buffer.from(csv)]), cwd: '.' },
        { ssnColumn: 'tax_id', lookbacks: {} },
      ),
    ).rejects.toThrow(/has no column "tax_id" \(--ssn-column\)/);
  });
});
