import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { FIXTURES, MAPPING, pushEnv } from './push-helpers.js';

// Files as real exporters and hand edits leave them, through every reading command of the binary.
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-real-files-'));
let sandbox: TestSandbox;
let env: Record<string, string>;
let exportDir: string;
let counts: { customers: number; loans: number; payments: number };

beforeAll(async () => {
  exportDir = join(work, 'export');
  counts = await writeExport({
    out: exportDir,
    customers: 25,
    seed: 3,
    paymentsPerCustomer: 3,
    shapes: ['denormalised'],
  });
  sandbox = await startSandboxProcess();
  env = pushEnv(sandbox);
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

const exportLines = () =>
  readFileSync(join(exportDir, 'export.csv'), 'utf8').replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
const validate = (file: string, extra: string[] = []) =>
  runBinary(['customers', 'batch', file, '--mapping', MAPPING, '--validate-only', '-o', 'json', ...extra], {
    env,
    cwd: work,
    timeoutMs: 30_000,
  });

describe('line endings as exporters write them (customers batch)', () => {
  it.each([
    ['a CRLF header and LF rows', (lines: string[]) => lines[0] + '\r\n' + lines.slice(1).join('\n') + '\n'],
    ['CRLF and LF alternating', (lines: string[]) => lines.map((l, i) => l + (i % 2 ? '\n' : '\r\n')).join('')],
    ['old Mac CR only', (lines: string[]) => lines.join('\r') + '\r'],
  ])('%s: every row is read', async (_name, shape) => {
    writeFileSync(join(work, 'endings.csv'), shape(exportLines()));
    const r = await validate('endings.csv');
    expect(r.stderr).not.toMatch(/Error:/);
    const summary = JSON.parse(r.stdout);
    expect(summary.customers.read).toBe(counts.customers);
    expect(summary.payments.read).toBe(counts.payments);
    expect(summary.accounting.balanced).toBe(true);
  });
});

describe('headers', () => {
  it('customers batch refuses a duplicate column name, naming it (exit 2)', async () => {
    const lines = exportLines();
    lines[0] = lines[0]!.replace('Product', 'Principal');
    writeFileSync(join(work, 'dup.csv'), lines.join('\n') + '\n');
    const r = await validate('dup.csv');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /dup\.csv, row 1: header has the column name "Principal" \(columns \d+ and \d+\) more than once/,
    );
  });

  it('dry-run --file refuses a duplicate column name (exit 2)', async () => {
    writeFileSync(join(work, 'dup-dry.csv'), 'ssn,email,SSN\n123456789,a@example.com,987654321\n');
    const r = await runBinary(['dry-run', '--file', 'dup-dry.csv', '-o', 'json'], { env, cwd: work });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"SSN" \(columns 1 and 3\) more than once/);
  });

  it('mapping init refuses a duplicate column name (exit 2)', async () => {
    const r = await runBinary(['mapping', 'init', 'dup-dry.csv'], { env, cwd: work });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/more than once/);
  });

  it('a header-only file is "no records" (exit 2) for dry-run --file, like an empty one', async () => {
    writeFileSync(join(work, 'header-only.csv'), 'ssn,email\r\n');
    writeFileSync(join(work, 'empty.csv'), '');
    for (const f of ['header-only.csv', 'empty.csv']) {
      const r = await runBinary(['dry-run', '--file', f, '-o', 'json'], { env, cwd: work });
      expect(r.code, f).toBe(2);
      expect(r.stderr).toContain(f);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('no records', () => {
  it('a header-only export is exit 2 for customers batch and loans push, as an empty file is', async () => {
    writeFileSync(join(work, 'header-only-export.csv'), exportLines()[0] + '\r\n');
    const batch = await validate('header-only-export.csv');
    expect(batch.code).toBe(2);
    expect(batch.stderr).toMatch(/header-only-export\.csv: no records/);
    const loans = await runBinary(
      ['loans', 'push', 'header-only-export.csv', '--mapping', MAPPING, '--validate-only', '-o', 'json'],
      { env, cwd: work },
    );
    expect(loans.code).toBe(2);
    expect(loans.stderr).toMatch(/no records/);
  });
});

describe('bytes that are not the text they claim (dry-run --file)', () => {
  const run = (f: string, extra: string[] = []) =>
    runBinary(['dry-run', '--file', f, ...extra, '-o', 'json'], { env, cwd: work });

  it('Latin-1 is refused with the byte offset and line, and read with --encoding latin1', async () => {
    writeFileSync(join(work, 'latin1.csv'), Buffer.from('email,name\nrene@example.com,Ren\xe9\n', 'latin1'));
    const refused = await run('latin1.csv');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/latin1\.csv: is not UTF-8 text: byte 0xE9 at offset 31 \(line 2\)/);
    expect(refused.stderr).toMatch(/--encoding latin1/);
    const read = await run('latin1.csv', ['--encoding', 'latin1']);
    expect(read.code).toBe(0);
    expect(JSON.parse(read.stdout).rows ?? JSON.parse(read.stdout)).toBeTruthy();
  });

  it('a binary file and a truncated .gz are clean input errors (exit 2, no stack trace)', async () => {
    writeFileSync(join(work, 'binary.csv'), Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0a]));
    const whole = gzipSync(Buffer.from('ssn\n' + '123456789\n'.repeat(2000)));
    writeFileSync(join(work, 'cut.csv.gz'), whole.subarray(0, Math.floor(whole.length / 2)));
    for (const f of ['binary.csv', 'cut.csv.gz']) {
      const r = await run(f);
      expect(r.code, f).toBe(2);
      expect(r.stderr).toContain(f);
      expect(r.stderr).not.toMatch(/\n\s+at |Unhandled|'error' event/);
    }
  });
});

describe('sizes', () => {
  it('lists create on a 700 KB single-line file ends with an answer, not a runaway regular expression', async () => {
    writeFileSync(
      join(work, 'one-line.csv'),
      Array.from({ length: 70_000 }, (_, i) => String(100_000_000 + i)).join(','),
    );
    const r = await runBinary(
      ['lists', 'create', 'one-line.csv', '--name', 'one line', '--type', 'ssn', '--validate-only', '-o', 'json'],
      { env, cwd: work, timeoutMs: 30_000 },
    );
    expect(r.signal).toBeNull();
    expect([0, 2, 4]).toContain(r.code);
  });

  it('a 20 MB cell is refused naming row and column, with a short message', async () => {
    const lines = exportLines();
    const cells = lines[3]!.split(',');
    cells[5] = 'A'.repeat(20_000_000);
    lines[3] = cells.join(',');
    writeFileSync(join(work, 'huge-cell.csv'), lines.join('\n') + '\n');
    const r = await validate('huge-cell.csv');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/huge-cell\.csv, row 4, column 6: the row is longer than 4 MiB/);
    expect(r.stderr.length).toBeLessThan(2000);
  });
});

describe('files leadctl writes', () => {
  it('dry-run --out naming a directory is refused before any row is checked (exit 2)', async () => {
    writeFileSync(join(work, 'applicants.csv'), 'ssn,email\n123456789,a@example.com\n');
    const before = (await sandbox.stats()).requests.by_route['POST /api/v1/lead-management/dry-run'] ?? 0;
    const r = await runBinary(['dry-run', '--file', 'applicants.csv', '--out', '.', '-o', 'json'], { env, cwd: work });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out \. is a directory/);
    expect((await sandbox.stats()).requests.by_route['POST /api/v1/lead-management/dry-run'] ?? 0).toBe(before);
  });

  it('dry-run --out neutralises spreadsheet formulas from the input (0600, no .partial left); --csv-raw writes them as they are', async () => {
    writeFileSync(
      join(work, 'formulas.csv'),
      'ssn,email,note\n123456789,a@example.com,"=HYPERLINK(""http://x"",""y"")"\n234567890,b@example.com,@SUM(1)\n',
    );
    const safe = await runBinary(['dry-run', '--file', 'formulas.csv', '--out', 'checked.csv', '-o', 'json'], {
      env,
      cwd: work,
    });
    expect(safe.code).toBe(0);
    const text = readFileSync(join(work, 'checked.csv'), 'utf8');
    expect(text).toContain(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(text).toContain("'@SUM(1)");
    expect(statSync(join(work, 'checked.csv')).mode & 0o777).toBe(0o600);
    expect(existsSync(join(work, 'checked.csv.partial'))).toBe(false);
    const raw = await runBinary(['dry-run', '--file', 'formulas.csv', '--out', 'raw.csv', '--csv-raw', '-o', 'json'], {
      env,
      cwd: work,
    });
    expect(raw.code).toBe(0);
    expect(readFileSync(join(work, 'raw.csv'), 'utf8')).toMatch(/\n234567890,b@example.com,@SUM\(1\),/);
  });

  it('the rejects file of a push neutralises a formula in an id from the export', async () => {
    const lines = exportLines();
    const cells = lines[1]!.split(',');
    cells[0] = '=cmd';
    cells[7] = 'not money';
    lines[1] = cells.join(',');
    writeFileSync(join(work, 'formula-id.csv'), lines.join('\n') + '\n');
    const r = await validate('formula-id.csv', ['--rejects', 'formula-rejects.csv']);
    expect(r.code).toBe(4);
    const rejects = readFileSync(join(work, 'formula-rejects.csv'), 'utf8');
    expect(rejects).toContain(",'=cmd,");
    expect(rejects).not.toMatch(/(^|,)=cmd/m);
  });
});

describe('delimiters', () => {
  it('dry-run --file detects a semicolon file from its header, and --delimiter names one', async () => {
    writeFileSync(join(work, 'semi.csv'), 'ssn;email\n123456789;a@example.com\n');
    const detected = await runBinary(['dry-run', '--file', 'semi.csv', '-o', 'json'], { env, cwd: work });
    expect(detected.code, detected.stderr).toBe(0);
    writeFileSync(join(work, 'pipes.txt'), 'name|ssn\nA|123456789\n');
    const named = await runBinary(
      ['dry-run', '--file', 'pipes.txt', '--delimiter', 'pipe', '--ssn-column', 'ssn', '-o', 'ndjson'],
      { env, cwd: work },
    );
    expect(named.code, named.stderr).toBe(0);
    expect(JSON.parse(named.stdout.trim())).toMatchObject({ name: 'A', pass: true });
    const bad = await runBinary(['dry-run', '--file', 'pipes.txt', '--delimiter', '""'], { env, cwd: work });
    expect(bad.code).toBe(2);
  });

  it('customers batch reads a semicolon export (Excel in a European locale) with --delimiter, and says so without it', async () => {
    const rows = parse(readFileSync(join(exportDir, 'export.csv')));
    writeFileSync(join(work, 'semi-export.csv'), stringify(rows, { delimiter: ';', record_delimiter: 'windows' }));
    const plain = await validate('semi-export.csv');
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain(`for a semicolon-separated file add --delimiter ';'`);
    const named = await validate('semi-export.csv', ['--delimiter', ';']);
    expect(named.stderr).not.toMatch(/Error:/);
    const summary = JSON.parse(named.stdout);
    expect(summary.customers.read).toBe(counts.customers);
    expect(summary.payments.read).toBe(counts.payments);
    expect(summary.accounting.balanced).toBe(true);
    // mapping init writes the delimiter it found into the mapping.
    const init = await runBinary(['mapping', 'init', 'semi-export.csv', '--out', 'semi-mapping.json'], {
      env,
      cwd: work,
    });
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(work, 'semi-mapping.json'), 'utf8')).csv).toEqual({ delimiter: ';' });
  });

  it('payments push takes --delimiter too, and the batch mapping (its constant system id stands in for the lead id)', async () => {
    // The fixture has a short row on purpose: kept short.
    const rows = parse(readFileSync(join(FIXTURES, 'payments.csv')), { relax_column_count: true });
    writeFileSync(join(work, 'payments.tsv'), stringify(rows, { delimiter: '\t' }));
    const run = (file: string, extra: string[] = []) =>
      runBinary(['payments', 'push', file, '--mapping', MAPPING, '--validate-only', '-o', 'json', ...extra], {
        env,
        cwd: work,
      });
    const comma = await run(join(FIXTURES, 'payments.csv'));
    expect(comma.stderr).not.toMatch(/Error:/);
    const tab = await run('payments.tsv', ['--delimiter', 'tab']);
    expect(tab.stderr).not.toMatch(/Error:/);
    expect(JSON.parse(tab.stdout).payments).toEqual(JSON.parse(comma.stdout).payments);
    expect(JSON.parse(tab.stdout).payments.valid).toBeGreaterThan(0);
  });
});
