import { readFileSync } from 'node:fs';
import { writeFileSafely } from '../io/safe-file.js';
import { lastSuccessIn, renderMetrics } from '../output/metrics-prom.js';
import { renderReportHtml } from '../output/report-html.js';
import type { RunFacts, RunRecord } from '../output/run-report.js';

/**
 * Writes a run's report (HTML, 0600: it quotes rejected records) and metrics file (Prometheus
 * text, 0644: counts only, and node_exporter usually runs as another user) through the one safe
 * writer: a temporary `NAME.<random>.partial` beside the target (never `*.prom`, which is all the
 * textfile collector reads), renamed over it, so a reader never sees half a file.
 */

export const REPORT_MODE = 0o600;
export const METRICS_MODE = 0o644;

export async function writeReport(path: string, facts: RunFacts, record: RunRecord, version: string): Promise<void> {
  writeFileSafely(path, renderReportHtml(facts, record, version), { mode: REPORT_MODE, what: '--report' });
}

export async function writeMetrics(path: string, facts: RunFacts, record: RunRecord): Promise<void> {
  let previous: number | null = null;
  try {
    previous = lastSuccessIn(readFileSync(path, 'utf8'), { command: facts.command, profile: facts.profile ?? '' });
  } catch {
    // no previous file (first run), or unreadable: nothing to carry over
  }
  writeFileSafely(path, await renderMetrics(facts, record, previous), { mode: METRICS_MODE, what: '--metrics-file' });
}
