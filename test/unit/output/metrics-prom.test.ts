import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accountFor } from '../../../src/jobs/push/summary.js';
import { pushFacts } from '../../../src/jobs/run-facts.js';
import { RunRecorder } from '../../../src/jobs/run-record.js';
import { LAST_SUCCESS, lastSuccessIn, METRICS, renderMetrics } from '../../../src/output/metrics-prom.js';
import { families, hasPromtool, promtoolCheck, samples } from '../../helpers/prometheus.js';
import { level, manualClock, runContext } from '../../helpers/run-report.js';

const START = Date.UTC(2026, 10, 26, 2, 0, 0);

/** A push of 10 customers (one rejected) in one request after a 503 and a retry, 90 s long. */
async function run(exitCode = 4, profile = 'nightly', validateOnly = false) {
  const clock = manualClock(START);
  const recorder = new RunRecorder(clock.now);
  const ev = { method: 'POST' as const, path: '/api/v1/loan-performance/batches/customers' };
  recorder.api({
    type: 'response',
    method: 'POST',
    path: '/oauth/token',
    status: 200,
    durationMs: 20,
    attempt: 1,
    bytes: 90,
  });
  clock.advance(30_000);
  recorder.api({ type: 'response', ...ev, status: 503, durationMs: 40, attempt: 1, bytes: 4000 });
  recorder.api({ type: 'retry', ...ev, attempt: 1, delayMs: 1000, reason: 'HTTP 503' });
  recorder.api({ type: 'network-error', ...ev, code: 'ECONNRESET', durationMs: 10, attempt: 2 });
  recorder.api({ type: 'retry', ...ev, attempt: 2, delayMs: 1000, reason: 'ECONNRESET' });
  recorder.api({ type: 'response', ...ev, status: 200, durationMs: 50, attempt: 3, bytes: 4000 });
  clock.advance(60_000);
  const summary = accountFor({
    command: 'customers batch',
    status: exitCode === 4 ? 'completed_with_rejects' : exitCode === 0 ? 'completed' : 'service_unavailable',
    validate_only: validateOnly,
    resumed: false,
    rows_read: 12,
    customers: level({ read: 10, valid: 9, sent: 9, accepted: 9, rejected: 1 }),
    loans: level({ read: 12, valid: 12, sent: 12, accepted: 12 }),
    payments: level({}),
    duplicates: 0,
    requests: { total: 1, sent: 1, acknowledged_before: 0, not_sent: 0 },
    retries: 2,
    elapsed_seconds: 90,
    rows_per_second: 0,
    rejects_file: null,
    rejects: 1,
    journal: null,
    exit_code: exitCode,
  });
  const facts = await pushFacts(
    summary,
    runContext(recorder, { target: { profile, baseUrl: 'https://api.example.com', production: true } }),
  );
  return { facts, record: recorder.finish() };
}

describe('the metrics file', () => {
  it('has the documented names, gauges only, and no label but command, profile and the fixed kind/outcome/class', async () => {
    const { facts, record } = await run();
    const text = await renderMetrics(facts, record, null);
    const found = families(text);
    expect(found.map((f) => f.name).sort()).toEqual(METRICS.map(([name]) => name).sort());
    for (const f of found) {
      expect(f.name).toMatch(/^leadctl_[a-z_]+$/);
      expect(f.type).toBe('GAUGE');
      for (const label of f.labels) expect(['command', 'profile', 'kind', 'outcome', 'class']).toContain(label);
      expect(f.labels.has('command') && f.labels.has('profile')).toBe(true);
    }
    // Every name is documented for the people who write the alerts.
    const doc = readFileSync(new URL('../../../docs/cron.md', import.meta.url), 'utf8');
    for (const [name] of METRICS) expect(doc).toContain(name);
  });

  it.runIf(hasPromtool)('passes `promtool check metrics` (format and naming rules)', async () => {
    const { facts, record } = await run(0, 'a "quoted" profile\\with\nlines');
    const checked = promtoolCheck(await renderMetrics(facts, record, null));
    expect(checked.output).toBe('');
    expect(checked.status).toBe(0);
    // The check can fail: a broken line is refused.
    expect(promtoolCheck('leadctl_x{command="a} 1\n').status).not.toBe(0);
  });

  it('gives the exact values of the run', async () => {
    const { facts, record } = await run();
    const s = samples(await renderMetrics(facts, record, null));
    const at = (name: string, extra: Record<string, string> = {}) => {
      const labels = Object.entries({ ...extra, command: 'customers batch', profile: 'nightly' })
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}="${v}"`);
      return s.get(`${name}{${labels.join(',')}}`);
    };
    expect(at('leadctl_run_success')).toBe(1);
    expect(at('leadctl_run_exit_code')).toBe(4);
    expect(at('leadctl_run_start_timestamp_seconds')).toBe(START / 1000);
    expect(at('leadctl_run_end_timestamp_seconds')).toBe(START / 1000 + 90);
    expect(at('leadctl_run_duration_seconds')).toBe(90);
    expect(at(LAST_SUCCESS)).toBe(START / 1000 + 90);
    expect(at('leadctl_run_records', { kind: 'customers', outcome: 'read' })).toBe(10);
    expect(at('leadctl_run_records', { kind: 'customers', outcome: 'accepted' })).toBe(9);
    expect(at('leadctl_run_records', { kind: 'customers', outcome: 'rejected' })).toBe(1);
    expect(at('leadctl_run_records', { kind: 'loans', outcome: 'accepted' })).toBe(12);
    expect(at('leadctl_run_records', { kind: 'payments', outcome: 'read' })).toBe(0);
    expect(at('leadctl_run_rejects')).toBe(1);
    expect(at('leadctl_run_requests', { class: '2xx' })).toBe(2);
    expect(at('leadctl_run_requests', { class: '5xx' })).toBe(1);
    expect(at('leadctl_run_requests', { class: '4xx' })).toBe(0);
    expect(at('leadctl_run_requests', { class: 'network_error' })).toBe(1);
    expect(at('leadctl_run_retries')).toBe(2);
    expect(at('leadctl_run_bytes_sent')).toBe(8090);
  });

  it('keeps the last success across failed runs, so that "no success for 26 h" can fire', async () => {
    const ok = await run(0);
    const first = await renderMetrics(ok.facts, ok.record, null);
    const labels = { command: 'customers batch', profile: 'nightly' };
    expect(lastSuccessIn(first, labels)).toBe(START / 1000 + 90);
    // A failed run carries the previous file's value over.
    const failed = await run(5);
    const second = await renderMetrics(failed.facts, failed.record, lastSuccessIn(first, labels));
    expect(samples(second).get(`${LAST_SUCCESS}{command="customers batch",profile="nightly"}`)).toBe(START / 1000 + 90);
    expect(samples(second).get('leadctl_run_success{command="customers batch",profile="nightly"}')).toBe(0);
    // With no previous file, 0: never succeeded (an alert on its age fires).
    const none = await renderMetrics(failed.facts, failed.record, null);
    expect(samples(none).get(`${LAST_SUCCESS}{command="customers batch",profile="nightly"}`)).toBe(0);
    // A check-only run sends nothing: it does not count as the night's success.
    const checkOnly = await run(0, 'nightly', true);
    const third = await renderMetrics(checkOnly.facts, checkOnly.record, 1234);
    expect(lastSuccessIn(third, labels)).toBe(1234);
  });

  it('reads back only its own command and profile, whatever the label values hold', async () => {
    const odd = 'a "quoted" profile\\with\nlines';
    const { facts, record } = await run(0, odd);
    const text = await renderMetrics(facts, record, null);
    expect(lastSuccessIn(text, { command: 'customers batch', profile: odd })).toBe(START / 1000 + 90);
    expect(lastSuccessIn(text, { command: 'customers batch', profile: 'nightly' })).toBeNull();
    expect(lastSuccessIn(text, { command: 'loans push', profile: odd })).toBeNull();
    expect(lastSuccessIn('garbage\n{{{', { command: 'x', profile: 'y' })).toBeNull();
  });

  it.runIf(hasPromtool)('the alert rules of docs/cron.md load, and fire on a stale success and on many rejects', () => {
    const doc = readFileSync(new URL('../../../docs/cron.md', import.meta.url), 'utf8');
    const rules = /<!-- prometheus-rules -->\n```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(rules).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), 'leadctl-rules-'));
    try {
      writeFileSync(join(dir, 'rules.yml'), rules!);
      // The last success at 1 h into the test's time; rejects jump from 12 to 900 at minute 2.
      const labels = 'command="customers batch",profile="nightly"';
      writeFileSync(
        join(dir, 'test.yml'),
        [
          'rule_files: [rules.yml]',
          'evaluation_interval: 1m',
          'tests:',
          '  - interval: 1m',
          '    input_series:',
          `      - series: 'leadctl_last_success_timestamp_seconds{${labels}}'`,
          "        values: '3600x1800'",
          `      - series: 'leadctl_run_rejects{${labels}}'`,
          "        values: '12 12 900x1800'",
          '    alert_rule_test:',
          '      - eval_time: 26h',
          '        alertname: LeadctlNightlyPushNotSucceeded',
          '        exp_alerts: []',
          '      - eval_time: 27h20m',
          '        alertname: LeadctlNightlyPushNotSucceeded',
          '        exp_alerts:',
          '          - exp_labels: { severity: page, profile: nightly }',
          '            exp_annotations:',
          "              summary: 'leadctl: no successful nightly push for profile nightly in 26 hours'",
          "              description: 'The last push that completed was 1d 2h 20m 0s ago. See the nightly log and the last --report.'",
          '      - eval_time: 1m',
          '        alertname: LeadctlNightlyPushRejects',
          '        exp_alerts: []',
          '      - eval_time: 3m',
          '        alertname: LeadctlNightlyPushRejects',
          '        exp_alerts:',
          '          - exp_labels: { severity: ticket, command: customers batch, profile: nightly }',
          '            exp_annotations:',
          "              summary: 'leadctl: 900 records rejected by the last push of profile nightly'",
          "              description: 'The rejects file and the --report of that night list them by reason, with examples.'",
          '',
        ].join('\n'),
      );
      const check = spawnSync('promtool', ['check', 'rules', 'rules.yml'], { cwd: dir, encoding: 'utf8' });
      expect(check.stdout + check.stderr).toContain('SUCCESS: 2 rules found');
      const test = spawnSync('promtool', ['test', 'rules', 'test.yml'], { cwd: dir, encoding: 'utf8' });
      expect(test.stdout + test.stderr).toMatch(/SUCCESS/);
      expect(test.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
