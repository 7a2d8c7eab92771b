import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { METRICS_MODE, REPORT_MODE, writeMetrics, writeReport } from '../../../src/jobs/run-files.js';
import { errorFacts } from '../../../src/jobs/run-facts.js';
import { RunRecorder } from '../../../src/jobs/run-record.js';
import { LAST_SUCCESS } from '../../../src/output/metrics-prom.js';
import { manualClock, runContext } from '../../helpers/run-report.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-run-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A failed run's facts and record (exit 3), enough to write either file. */
async function failedRun() {
  const recorder = new RunRecorder(manualClock().now);
  const facts = await errorFacts(runContext(recorder), 3, { message: 'credentials refused' });
  return { facts, record: recorder.finish() };
}

describe('writing the report and the metrics file', () => {
  it('replaces each file whole, the report 0600 and the metrics 0644 whatever the umask, leaving no temporary file', async () => {
    const { facts, record } = await failedRun();
    const metrics = join(dir, 'm.prom');
    writeFileSync(metrics, 'old', { mode: 0o666 });
    const umask = process.umask(0o077);
    try {
      await writeMetrics(metrics, facts, record);
      await writeReport(join(dir, 'r.html'), facts, record, '1.0.0');
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(metrics, 'utf8')).toMatch(/^# HELP leadctl_/);
    expect(lstatSync(metrics).mode & 0o777).toBe(METRICS_MODE);
    expect(METRICS_MODE).toBe(0o644);
    expect(lstatSync(join(dir, 'r.html')).mode & 0o777).toBe(REPORT_MODE);
    expect(REPORT_MODE).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(['m.prom', 'r.html']);
  });

  it('refuses to write through a symbolic link, and writes /dev/null in place', async () => {
    const { facts, record } = await failedRun();
    const target = join(dir, 'elsewhere.txt');
    writeFileSync(target, 'keep');
    const link = join(dir, 'link.prom');
    symlinkSync(target, link);
    await expect(writeMetrics(link, facts, record)).rejects.toThrow(/symbolic link/);
    expect(readFileSync(target, 'utf8')).toBe('keep');
    rmSync(link);
    rmSync(target);
    await writeMetrics('/dev/null', facts, record);
    expect(lstatSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  it('carries the last success over from the file it replaces when the run failed', async () => {
    const path = join(dir, 'carry.prom');
    writeFileSync(
      path,
      `# TYPE ${LAST_SUCCESS} gauge\n${LAST_SUCCESS}{command="customers batch",profile="nightly"} 1764000000\n${LAST_SUCCESS}{command="lists create",profile="nightly"} 5\n`,
    );
    const { facts, record } = await failedRun();
    await writeMetrics(path, facts, record);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain(`${LAST_SUCCESS}{command="customers batch",profile="nightly"} 1764000000\n`);
    expect(text).toContain('leadctl_run_exit_code{command="customers batch",profile="nightly"} 3\n');
    expect(text).toContain('leadctl_run_success{command="customers batch",profile="nightly"} 0\n');
  });
});
