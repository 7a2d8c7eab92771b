import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { METRICS_MODE, REPORT_MODE, writeAtomically, writeMetrics } from '../../../src/jobs/run-files.js';
import { errorFacts } from '../../../src/jobs/run-facts.js';
import { RunRecorder } from '../../../src/jobs/run-record.js';
import { LAST_SUCCESS } from '../../../src/output/metrics-prom.js';
import { manualClock, runContext } from '../../helpers/run-report.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-run-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writing the report and the metrics file', () => {
  it('replaces the file whole with the mode asked for, whatever the umask, leaving no temporary file', () => {
    const path = join(dir, 'm.prom');
    writeFileSync(path, 'old', { mode: 0o666 });
    const umask = process.umask(0o077);
    try {
      writeAtomically(path, 'new\n', METRICS_MODE, '--metrics-file');
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(path, 'utf8')).toBe('new\n');
    expect(lstatSync(path).mode & 0o777).toBe(0o644);
    writeAtomically(join(dir, 'r.html'), '<p>', REPORT_MODE, '--report');
    expect(lstatSync(join(dir, 'r.html')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(['m.prom', 'r.html']);
  });

  it('refuses to write through a symbolic link or onto a directory', () => {
    const target = join(dir, 'elsewhere.txt');
    writeFileSync(target, 'keep');
    const link = join(dir, 'link.prom');
    symlinkSync(target, link);
    expect(() => writeAtomically(link, 'x', METRICS_MODE, '--metrics-file')).toThrow(/symbolic link/);
    expect(readFileSync(target, 'utf8')).toBe('keep');
    expect(() => writeAtomically(dir, 'x', METRICS_MODE, '--metrics-file')).toThrow(/is a directory/);
    rmSync(link);
    rmSync(target);
  });

  it('writes /dev/null in place instead of replacing the device', () => {
    writeAtomically('/dev/null', 'x', METRICS_MODE, '--metrics-file');
    expect(lstatSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  it('carries the last success over from the file it replaces when the run failed', async () => {
    const path = join(dir, 'carry.prom');
    writeFileSync(
      path,
      `# TYPE ${LAST_SUCCESS} gauge\n${LAST_SUCCESS}{command="customers batch",profile="nightly"} 1764000000\n${LAST_SUCCESS}{command="lists create",profile="nightly"} 5\n`,
    );
    const recorder = new RunRecorder(manualClock().now);
    const facts = await errorFacts(runContext(recorder), 3, { message: 'credentials refused' });
    await writeMetrics(path, facts, recorder.finish());
    const text = readFileSync(path, 'utf8');
    expect(text).toContain(`${LAST_SUCCESS}{command="customers batch",profile="nightly"} 1764000000\n`);
    expect(text).toContain('leadctl_run_exit_code{command="customers batch",profile="nightly"} 3\n');
    expect(text).toContain('leadctl_run_success{command="customers batch",profile="nightly"} 0\n');
  });
});
