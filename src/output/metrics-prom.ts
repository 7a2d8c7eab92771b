import { Gauge, Registry } from 'prom-client';
import { STATUS_CLASSES, succeeded, type RunFacts, type RunRecord } from './run-report.js';

/**
 * A run in the Prometheus text format, for node_exporter's textfile collector: every value is a
 * gauge of this run (the file is replaced whole after each run), labelled with the command and
 * the profile; `kind`, `outcome` and `class` take only the fixed values listed in docs/cron.md,
 * never an id or a value from the data. prom-client's registry writes the format (escaping,
 * HELP and TYPE lines).
 */

export const LAST_SUCCESS = 'leadctl_last_success_timestamp_seconds';

/** Name, help, and extra label names of every metric written (docs/cron.md lists the same). */
export const METRICS = [
  ['leadctl_run_success', '1 if the run did its job (exit code 0, or 4: completed with rejected records), else 0', []],
  ['leadctl_run_exit_code', 'exit code of the run (see the README: 0 ok, 2 input, 3 auth, 4 rejects, 5 service…)', []],
  ['leadctl_run_start_timestamp_seconds', 'when the run started, in seconds since the epoch', []],
  ['leadctl_run_end_timestamp_seconds', 'when the run ended, in seconds since the epoch', []],
  ['leadctl_run_duration_seconds', 'how long the run took, in seconds', []],
  [
    LAST_SUCCESS,
    'when a run of this command and profile last succeeded and sent (not --validate-only), in seconds since the epoch; carried over from the previous file when this run failed; 0 if never',
    [],
  ],
  [
    'leadctl_run_records',
    'records of the run by kind and outcome (a push: customers, loans, payments × read, valid, sent, accepted, rejected…)',
    ['kind', 'outcome'],
  ],
  ['leadctl_run_rejects', 'records rejected or not checked (the lines of the rejects file, for a push)', []],
  [
    'leadctl_run_requests',
    'HTTP answers by status class, and network errors (every attempt, the token request included)',
    ['class'],
  ],
  ['leadctl_run_retries', 'requests repeated after a 429, a 5xx or a network error', []],
  ['leadctl_run_bytes_sent', 'bytes of request bodies sent (every attempt)', []],
] as const;

export interface MetricLabels {
  command: string;
  profile: string;
}

export async function renderMetrics(
  facts: RunFacts,
  record: RunRecord,
  previousLastSuccess: number | null,
): Promise<string> {
  const registry = new Registry();
  registry.setDefaultLabels({ command: facts.command, profile: facts.profile ?? '' });
  const gauges = new Map<string, Gauge>();
  for (const [name, help, labelNames] of METRICS)
    gauges.set(name, new Gauge({ name, help, labelNames: [...labelNames], registers: [registry] }));
  const set = (name: (typeof METRICS)[number][0], value: number, labels?: Record<string, string>) =>
    labels ? gauges.get(name)!.set(labels, value) : gauges.get(name)!.set(value);

  const ok = succeeded(facts.exitCode);
  const start = record.startedAt / 1000;
  const end = record.endedAt / 1000;
  set('leadctl_run_success', ok ? 1 : 0);
  set('leadctl_run_exit_code', facts.exitCode);
  set('leadctl_run_start_timestamp_seconds', start);
  set('leadctl_run_end_timestamp_seconds', end);
  set('leadctl_run_duration_seconds', Math.max(0, Math.round(record.endedAt - record.startedAt) / 1000));
  set(LAST_SUCCESS, ok && !facts.validateOnly ? end : (previousLastSuccess ?? 0));
  for (const r of facts.records) set('leadctl_run_records', r.count, { kind: r.kind, outcome: r.outcome });
  set('leadctl_run_rejects', facts.rejects?.total ?? 0);
  for (const c of STATUS_CLASSES) set('leadctl_run_requests', record.requests[c], { class: c });
  set('leadctl_run_retries', record.retries);
  set('leadctl_run_bytes_sent', record.bytesSent);
  return `${await registry.metrics()}\n`.replace(/\n+$/, '\n');
}

/**
 * The last-success time a previous file gave this command and profile, or null. Lenient: a file
 * that is missing, foreign or damaged gives null, never an error (it is only a carry-over).
 */
export function lastSuccessIn(text: string, labels: MetricLabels): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${LAST_SUCCESS}{`)) continue;
    const close = line.lastIndexOf('}');
    if (close < 0) continue;
    const found = parseLabels(line.slice(LAST_SUCCESS.length + 1, close));
    if (found.command !== labels.command || found.profile !== labels.profile) continue;
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(/\s+/)[0],
    );
    return Number.isFinite(value) && value > 0 ? value : null;
  }
  return null;
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  return labels;
}
