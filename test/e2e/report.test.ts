import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { hasPromtool, promtoolCheck, samples } from '../helpers/prometheus.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { FIXTURES, pushEnv } from './push-helpers.js';
import { ROOT } from './service-env.js';

/**
 * `--report` and `--metrics-file` as cron uses them: the built binary against the sandbox, the
 * fixture export with its known rejects (fixtures/lms/README.md: 10 customers read, 9 valid…).
 */

let sandbox: TestSandbox;
let env: Record<string, string>;
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-report-'));

beforeAll(async () => {
  sandbox = await startSandboxProcess();
  env = pushEnv(sandbox);
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

const labels = (command: string, extra: Record<string, string> = {}) =>
  Object.entries({ ...extra, command, profile: 'default' })
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');

/** The text of the element with this data-testid. */
function testId(html: string, id: string): string | undefined {
  return new RegExp(`data-testid="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];
}

describe('customers batch --report --metrics-file', () => {
  it('writes both files (report 0600, metrics 0644) with the figures of the JSON summary, exact', async () => {
    const before = await sandbox.stats();
    const dir = mkdtempSync(join(work, 'push-'));
    const res = await runBinary(
      [
        'customers',
        'batch',
        'export.csv',
        '--mapping',
        'mapping.json',
        '--rejects',
        join(dir, 'rejects.csv'),
        '--report',
        join(dir, 'r.html'),
        '--metrics-file',
        join(dir, 'm.prom'),
        '-o',
        'json',
      ],
      { env, cwd: FIXTURES },
    );
    expect(res.code).toBe(4);
    const summary = JSON.parse(res.stdout);
    expect(summary.customers).toMatchObject({ read: 10, valid: 9, accepted: 9, rejected: 1 });
    expect(res.stderr).toContain(`Report written to ${join(dir, 'r.html')}`);
    expect(res.stderr).toContain(`Metrics written to ${join(dir, 'm.prom')}`);
    expect(statSync(join(dir, 'r.html')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'm.prom')).mode & 0o777).toBe(0o644);
    // Nothing else left behind: no temporary file.
    expect(readdirSync(dir).sort()).toEqual(['m.prom', 'r.html', 'rejects.csv']);

    const text = readFileSync(join(dir, 'm.prom'), 'utf8');
    if (hasPromtool) expect(promtoolCheck(text)).toEqual({ status: 0, output: '' });
    const s = samples(text);
    const at = (name: string, extra?: Record<string, string>) => s.get(`${name}{${labels('customers batch', extra)}}`);
    expect(at('leadctl_run_success')).toBe(1);
    expect(at('leadctl_run_exit_code')).toBe(4);
    const levels = { customers: summary.customers, loans: summary.loans, payments: summary.payments };
    for (const [kind, level] of Object.entries(levels))
      for (const [outcome, count] of Object.entries(level as Record<string, number>))
        expect(at('leadctl_run_records', { kind, outcome }), `${kind} ${outcome}`).toBe(count);
    expect(at('leadctl_run_records', { kind: 'payments', outcome: 'duplicates' })).toBe(1);
    expect(at('leadctl_run_rejects')).toBe(summary.rejects);
    expect(summary.rejects).toBe(readFileSync(join(dir, 'rejects.csv'), 'utf8').trim().split('\n').length - 1);
    // The token request and one request of 9 customers, both answered 2xx; no retry.
    expect(at('leadctl_run_requests', { class: '2xx' })).toBe(2);
    expect(at('leadctl_run_requests', { class: '5xx' })).toBe(0);
    expect(at('leadctl_run_retries')).toBe(0);
    // Bytes of the bodies: at least what the sandbox counted (it misses what came with the headers;
    // test/unit/api/request-bytes.test.ts checks the count exactly against a server of its own).
    const after = await sandbox.stats();
    const received = after.requests.body_bytes - before.requests.body_bytes;
    const sent = at('leadctl_run_bytes_sent')!;
    expect(sent).toBeGreaterThan(1000);
    expect(received).toBeLessThanOrEqual(sent + 64);
    const start = at('leadctl_run_start_timestamp_seconds')!;
    const end = at('leadctl_run_end_timestamp_seconds')!;
    expect(end).toBeGreaterThanOrEqual(start);
    expect(at('leadctl_last_success_timestamp_seconds')).toBe(end);
    expect(Math.abs(Date.now() / 1000 - end)).toBeLessThan(600);

    const html = readFileSync(join(dir, 'r.html'), 'utf8');
    expect(testId(html, 'exit-code')).toBe('4');
    expect(testId(html, 'rejects-total')).toBe(String(summary.rejects));
    expect(testId(html, 'acc-customers-read')).toBe('10');
    expect(testId(html, 'acc-payments-duplicates')).toBe('1');
    expect(testId(html, 'base-url')).toBe(sandbox.baseUrl);
    expect(testId(html, 'input-name-0')).toBe('export.csv');
    expect(testId(html, 'input-sha256-0')).toMatch(/^[0-9a-f]{64}$/);
    expect(html).not.toContain(sandbox.clientSecret);
  });

  it('LEADCTL_METRICS_FILE: a failed run says so and keeps the last success of the run before', async () => {
    const dir = mkdtempSync(join(work, 'env-'));
    const metrics = join(dir, 'nightly.prom');
    const ok = await runBinary(
      [
        'customers',
        'batch',
        'export.csv',
        '--mapping',
        'mapping.json',
        '--rejects',
        join(dir, 'rejects.csv'),
        '-o',
        'json',
      ],
      { env: { ...env, LEADCTL_METRICS_FILE: metrics }, cwd: FIXTURES },
    );
    expect(ok.code).toBe(4);
    const first = samples(readFileSync(metrics, 'utf8'));
    const success = first.get(`leadctl_last_success_timestamp_seconds{${labels('customers batch')}}`)!;
    expect(success).toBeGreaterThan(0);
    const refused = await runBinary(
      ['customers', 'batch', 'export.csv', '--mapping', 'mapping.json', '--report', join(dir, 'failed.html')],
      { env: { ...env, LEADCTL_CLIENT_SECRET: 'not-the-secret', LEADCTL_METRICS_FILE: metrics }, cwd: FIXTURES },
    );
    expect(refused.code).toBe(3);
    const second = samples(readFileSync(metrics, 'utf8'));
    expect(second.get(`leadctl_run_success{${labels('customers batch')}}`)).toBe(0);
    expect(second.get(`leadctl_run_exit_code{${labels('customers batch')}}`)).toBe(3);
    expect(second.get(`leadctl_last_success_timestamp_seconds{${labels('customers batch')}}`)).toBe(success);
    const html = readFileSync(join(dir, 'failed.html'), 'utf8');
    expect(testId(html, 'exit-code')).toBe('3');
    expect(testId(html, 'exit-words')).toBe('authentication failed');
    expect(html).not.toContain('not-the-secret');
  });

  it('refuses a report path it cannot write before sending anything (exit 2)', async () => {
    const before = await sandbox.stats();
    const res = await runBinary(
      ['customers', 'batch', 'export.csv', '--mapping', 'mapping.json', '--report', join(work, 'no', 'such', 'r.html')],
      { env, cwd: FIXTURES },
    );
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('cannot write --report');
    expect((await sandbox.stats()).requests.total).toBe(before.requests.total + 1);
    const single = await runBinary(['dry-run', '--ssn', '123-45-6789', '--report', join(work, 'x.html')], { env });
    expect(single.code).toBe(2);
    expect(single.stderr).toContain('--report and --metrics-file go with --file');
    expect(existsSync(join(work, 'x.html'))).toBe(false);
  });
});

describe('the other commands', () => {
  it('lists create --skip-invalid and dry-run --file write a report and metrics of their own kind', async () => {
    const dir = mkdtempSync(join(work, 'others-'));
    const lists = await runBinary(
      [
        'lists',
        'create',
        '--name',
        'Messy',
        '--type',
        'ssn',
        '--skip-invalid',
        join(ROOT, 'fixtures', 'lists', 'ssn-messy.csv'),
        '--report',
        join(dir, 'lists.html'),
        '--metrics-file',
        join(dir, 'lists.prom'),
        '-o',
        'json',
      ],
      { env, cwd: dir },
    );
    expect(lists.code).toBe(4);
    const listSummary = JSON.parse(lists.stdout);
    const ls = samples(readFileSync(join(dir, 'lists.prom'), 'utf8'));
    expect(ls.get(`leadctl_run_records{${labels('lists create', { kind: 'values', outcome: 'uploaded' })}}`)).toBe(
      listSummary.uploaded,
    );
    expect(ls.get(`leadctl_run_records{${labels('lists create', { kind: 'rows', outcome: 'rejected' })}}`)).toBe(8);
    expect(ls.get(`leadctl_run_rejects{${labels('lists create')}}`)).toBe(8);
    const listHtml = readFileSync(join(dir, 'lists.html'), 'utf8');
    expect(testId(listHtml, 'rejects-total')).toBe('8');
    // SSNs stay masked in the report as on the terminal.
    expect(listHtml).not.toMatch(/\b\d{3}-?\d{2}-?\d{4}\b/);

    const dry = await runBinary(
      [
        'dry-run',
        '--file',
        join(ROOT, 'fixtures', 'dry-run', 'applicants.csv'),
        '--out',
        join(dir, 'checked.csv'),
        '--report',
        join(dir, 'dry.html'),
        '--metrics-file',
        join(dir, 'dry.prom'),
        '-o',
        'json',
      ],
      { env, cwd: dir },
    );
    const drySummary = JSON.parse(dry.stdout);
    const ds = samples(readFileSync(join(dir, 'dry.prom'), 'utf8'));
    expect(ds.get(`leadctl_run_exit_code{${labels('dry-run')}}`)).toBe(dry.code);
    expect(ds.get(`leadctl_run_records{${labels('dry-run', { kind: 'rows', outcome: 'read' })}}`)).toBe(
      drySummary.rows,
    );
    expect(ds.get(`leadctl_run_records{${labels('dry-run', { kind: 'rows', outcome: 'invalid' })}}`)).toBe(
      drySummary.invalid,
    );
    const dryHtml = readFileSync(join(dir, 'dry.html'), 'utf8');
    expect(testId(dryHtml, 'acc-rows-read')).toBe(String(drySummary.rows));
    expect(testId(dryHtml, 'acc-rows-passed')).toBe(String(drySummary.passed));
    expect(dryHtml).not.toMatch(/\b\d{3}-\d{2}-\d{4}\b/);
  });
});
