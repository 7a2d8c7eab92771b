import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines } from '../helpers/binary.js';
import { fixturePath, readFixture, requestsTo, startEnv, type Env } from './service-env.js';

describe('dry-run (built binary against the sandbox)', () => {
  let env: Env;
  const accepted = readFixture('legacy', 'accepted.json');
  const suppressed = readFixture('legacy', 'suppressed.json');

  beforeAll(async () => {
    env = await startEnv();
    // One bought lead, and one refused by a suppression list (decisioned, so underwriting was spent).
    expect((await env.postRaw({ ...accepted, api_key: env.directKey })).result).toBe('A');
    const list = await env.run([
      'lists',
      'create',
      '--name',
      'Blocked SSNs',
      '--type',
      'ssn',
      fixturePath('legacy', 'suppression-ssns.csv'),
    ]);
    expect(list.code).toBe(0);
    expect((await env.postRaw({ ...suppressed, api_key: env.directKey })).result).toBe('R');
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('fails with previously_purchased for a bought SSN (exit 4), in words', async () => {
    const r = await env.run(['dry-run', '--ssn', '212-45-6789', '-o', 'table']);
    expect(r.code).toBe(4);
    expect(r.stdout.trim()).toBe('FAIL: previously purchased within the lookback window (previously_purchased)');
    const json = await env.run(['dry-run', '--email', 'maria.gonzalez@example.com', '-o', 'json']);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toEqual({
      pass: false,
      reason: 'previously_purchased',
      reason_text: 'previously purchased within the lookback window',
    });
  });

  it('fails with underwriting_cost for a recently decisioned lead, or a bought one with that check off', async () => {
    const rejected = await env.run(['dry-run', '--email', 'derek.whitfield@example.net', '-o', 'json']);
    expect(rejected.code).toBe(4);
    expect(JSON.parse(rejected.stdout).reason).toBe('underwriting_cost');
    const lookbackOff = await env.run(['dry-run', '--ssn', '212456789', '--purchased-lookback', 'off', '-o', 'table']);
    expect(lookbackOff.code).toBe(4);
    expect(lookbackOff.stdout).toContain(
      'FAIL: underwriting money was spent on it within the lookback window (underwriting_cost)',
    );
  });

  it('passes (exit 0) for someone new, and when both checks are off', async () => {
    const fresh = await env.run([
      'dry-run',
      '--ssn',
      '345 67 8901',
      '--email',
      'priya.shah@example.com',
      '-o',
      'table',
    ]);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout.trim()).toBe('PASS');
    const off = await env.run([
      'dry-run',
      '--ssn',
      '212456789',
      '--purchased-lookback',
      'off',
      '--underwriting-lookback',
      'off',
      '-o',
      'json',
    ]);
    expect(off.code).toBe(0);
    expect(JSON.parse(off.stdout)).toEqual({ pass: true });
  });

  it('refuses bad input locally with exit 2 and sends nothing', async () => {
    const before = await requestsTo(env.sandbox, 'dry-run');
    const cases: [string[], string][] = [
      [['--ssn', '12-34-567'], 'ssn: must be 9 digits'],
      [['--email', 'not-an-email'], 'email: email address must contain an @'],
      [[], 'give an SSN or an email'],
      [
        ['--ssn', '123456789', '--purchased-lookback', 'soon'],
        '--purchased-lookback must be a whole number of days or "off"',
      ],
    ];
    for (const [args, message] of cases) {
      const r = await env.run(['dry-run', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(errorLines(r.stderr)).toContain(message);
    }
    expect(await requestsTo(env.sandbox, 'dry-run')).toBe(before);
  });

  it('checks a CSV file with invalid rows, writing every row with pass and reason', async () => {
    const r = await env.run([
      'dry-run',
      '--file',
      fixturePath('dry-run', 'applicants.csv'),
      '--out',
      'checked.csv',
      '-o',
      'json',
    ]);
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({
      rows: 8,
      passed: 2,
      failed: 2,
      invalid: 4,
      errors: 0,
      reasons: { previously_purchased: 1, underwriting_cost: 1 },
    });
    const rows = parse(readFileSync(join(env.dir, 'checked.csv'), 'utf8'), { columns: true }) as Record<
      string,
      string
    >[];
    expect(rows.map((row) => [row.applicant, row.pass, (row.reason ?? '').replace(/:.*$/, '')])).toEqual([
      ['Maria Gonzalez', 'false', 'previously_purchased'],
      ['Priya Shah', 'true', ''],
      ['Derek Whitfield', 'false', 'underwriting_cost'],
      ['Short SSN', '', 'invalid'],
      ['Bad Email', '', 'invalid'],
      ['Nobody', '', 'invalid'],
      ['Sam Lee', 'true', ''],
      ['Extra, Field', '', 'invalid'],
    ]);
    expect(rows[3]!.ssn).toBe('12-34-567');
    expect(rows[3]!.reason).toBe('invalid: ssn: must be 9 digits (spaces, dashes and dots are ignored)');
    // Each row that was not checked is named on stderr with its file and row.
    expect(r.stderr).toContain('applicants.csv, row 5: invalid: ssn: must be 9 digits');
    expect(r.stderr).toContain('applicants.csv, row 9: invalid: has 4 fields, the header has 3');
    expect(r.stderr.match(/applicants\.csv, row \d+: invalid/g)).toHaveLength(4);
  });

  it('groups the rows not checked by reason, with counts and the first row of each', async () => {
    const lines = [
      'ssn,email',
      ...Array.from({ length: 30 }, () => '12-34,'),
      ...Array.from({ length: 3 }, (_, i) => `,bad${i}`),
      '345-67-8901,',
    ];
    const r = await env.run(['dry-run', '--file', '-', '--out', 'grouped.csv', '-o', 'table'], {
      input: lines.join('\n') + '\n',
    });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(
      '33 rows not checked, by reason (first of each; every row has its reason in the results):',
    );
    expect(r.stderr).toMatch(/^ {2}30 {2}invalid: ssn: must be … digits/m);
    expect(r.stderr).toMatch(/e\.g\. stdin, row 2: invalid: ssn: must be 9 digits/);
    expect(r.stderr).toMatch(/^ {3}3 {2}invalid: email: /m);
    expect(r.stderr.match(/e\.g\./g)).toHaveLength(2);
  });

  it('refuses --out naming the input file, which would be replaced', async () => {
    const input = readFileSync(fixturePath('dry-run', 'applicants.csv'), 'utf8');
    writeFileSync(join(env.dir, 'mine.csv'), input);
    const r = await env.run(['dry-run', '--file', 'mine.csv', '--out', './mine.csv']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--out ./mine.csv is the input file itself');
    expect(readFileSync(join(env.dir, 'mine.csv'), 'utf8')).toBe(input);
  });

  it('reads a file from stdin with named columns and prints results in the chosen format', async () => {
    const csv = 'Who,Tax Number,Mail\nA,212-45-6789,\nB,345678901,\n';
    const r = await env.run(
      [
        'dry-run',
        '--file',
        '-',
        '--ssn-column',
        'Tax Number',
        '--email-column',
        'Mail',
        '--underwriting-lookback',
        'off',
        '-o',
        'ndjson',
      ],
      { input: csv },
    );
    expect(r.code).toBe(4);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { Who: 'A', 'Tax Number': '212-45-6789', Mail: '', pass: false, reason: 'previously_purchased' },
      { Who: 'B', 'Tax Number': '345678901', Mail: '', pass: true, reason: '' },
    ]);
    expect(r.stderr).toContain('2 rows read from stdin');
    const noColumn = await env.run(['dry-run', '--file', '-'], { input: 'name,phone\nA,2145550123\n' });
    expect(noColumn.code).toBe(2);
    expect(noColumn.stderr).toContain('stdin, row 1: has no ssn or email column; its columns are: name, phone');

    // On a table, the other columns' long numbers are masked too (an account number, a second SSN).
    const table = await env.run(['dry-run', '--file', '-', '--ssn-column', 'Tax Number', '-o', 'table'], {
      input: 'Who,Tax Number,account,old ssn\nA,212-45-6789,000123456789,234-56-7891\n',
    });
    expect(table.stdout).toMatch(/\*{8}6789/);
    expect(table.stdout).toContain('***-**-7891');
    for (const clear of ['212-45', '0001234', '234-56']) expect(table.stdout, clear).not.toContain(clear);
  });

  it('honours a lookback in days as time passes', async () => {
    await env.advance(5 * 86400);
    const recentOnly = await env.run(['dry-run', '--ssn', '212456789', '--purchased-lookback', '2', '-o', 'json']);
    expect(recentOnly.code).toBe(0);
    const allTime = await env.run(['dry-run', '--ssn', '212456789', '-o', 'json']);
    expect(allTime.code).toBe(4);
    expect(JSON.parse(allTime.stdout).reason).toBe('previously_purchased');
    // Underwriting's default window (3 days) has passed for the refused lead.
    const rejected = await env.run(['dry-run', '--email', 'derek.whitfield@example.net', '-o', 'json']);
    expect(rejected.code).toBe(0);
  });
});
