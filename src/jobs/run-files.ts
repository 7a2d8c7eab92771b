import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../errors.js';
import { lastSuccessIn, renderMetrics } from '../output/metrics-prom.js';
import { renderReportHtml } from '../output/report-html.js';
import type { RunFacts, RunRecord } from '../output/run-report.js';

/**
 * Writes a run's report (HTML, 0600: it quotes rejected records) and metrics file (Prometheus
 * text, 0644: counts only, and node_exporter usually runs as another user). Both go to a
 * temporary file in the same folder, created exclusively under an unpredictable name that does
 * not end in `.prom` (the textfile collector reads `*.prom` only), then renamed over the target:
 * a reader never sees half a file.
 */

export const REPORT_MODE = 0o600;
export const METRICS_MODE = 0o644;

export async function writeReport(path: string, facts: RunFacts, record: RunRecord, version: string): Promise<void> {
  writeAtomically(path, renderReportHtml(facts, record, version), REPORT_MODE, '--report');
}

export async function writeMetrics(path: string, facts: RunFacts, record: RunRecord): Promise<void> {
  let previous: number | null = null;
  try {
    previous = lastSuccessIn(readFileSync(path, 'utf8'), { command: facts.command, profile: facts.profile ?? '' });
  } catch {
    // no previous file (first run), or unreadable: nothing to carry over
  }
  writeAtomically(path, await renderMetrics(facts, record, previous), METRICS_MODE, '--metrics-file');
}

/**
 * TODO(integrator): the `files` branch brings src/io/safe-file.ts (`writeFileSafely`), the one
 * safe writer; switch to it (keeping `mode`) once it is on main. Until then this follows it:
 * exclusive, never-following temporary file, fsync, rename; a device or FIFO written in place.
 */
export function writeAtomically(path: string, data: string, mode: number, what: string): void {
  let kind: 'new' | 'file' | 'in-place' = 'new';
  try {
    const info = lstatSync(path);
    if (info.isSymbolicLink())
      throw new UsageError(`${what} ${path} is a symbolic link; leadctl does not write through links`, {
        hint: 'name the file itself',
      });
    if (info.isDirectory()) throw new UsageError(`${what} ${path} is a directory; name a file`);
    kind = info.isFile() ? 'file' : info.isCharacterDevice() || info.isFIFO() ? 'in-place' : 'file';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const bytes = Buffer.from(data);
  if (kind === 'in-place') {
    const fd = openSync(path, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NOCTTY);
    try {
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    } finally {
      closeSync(fd);
    }
    return;
  }
  const temporary = join(dirname(path), `${basename(path).slice(0, 200)}.${randomBytes(6).toString('hex')}.partial`);
  const fd = openSync(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  let closed = false;
  try {
    fchmodSync(fd, mode);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
    closeSync(fd);
    closed = true;
    renameSync(temporary, path);
  } catch (err) {
    if (!closed) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // gone already
    }
    throw err;
  }
}
