import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  dryRunBulkExitCode,
  dryRunCsvWriter,
  runDryRunBulk,
  type DryRunRowResult,
} from '../../../src/jobs/dry-run-bulk.js';
import { openDryRunFile } from '../../../src/ingest/dry-run/input.js';
import { ServiceError, ValidationError } from '../../../src/errors.js';

const CSV = [
  'name,ssn,email',
  'bought,111-22-3333,',
  'fresh,222-33-4444,',
  'recent,,recent@example.com',
  'broken,12,',
  'down,333-44-5555,',
  'refused,,refused@example.com',
].join('\n');

function fakeApi() {
  const seen: unknown[] = [];
  return {
    seen,
    async dryRun(body: { social_security_number?: string; email?: string }) {
      seen.push(body);
      if (body.social_security_number === '111223333') return { pass: false, reason: 'previously_purchased' };
      if (body.email === 'recent@example.com') return { pass: false, reason: 'underwriting_cost' };
      if (body.social_security_number === '333445555') throw new ServiceError('HTTP 503 after 6 attempts', 503);
      if (body.email === 'refused@example.com') throw new ValidationError('the service refused the request (HTTP 422)');
      return { pass: true };
    },
  };
}

describe('runDryRunBulk', () => {
  it('stops with the reason when the run is stopped (Ctrl-C): the rows after are not counted as errors', async () => {
    const file = await openDryRunFile(
      '-',
      { stdin: Readable.from([Buffer.from(CSV)]), cwd: '.' },
      { lookbacks: { underwriting_cost_lookback_window: 5 } },
    );
    const controller = new AbortController();
    const seen: number[] = [];
    const stopped = runDryRunBulk(fakeApi(), file, { concurrency: 1, retries: 0, signal: controller.signal }, (r) => {
      seen.push(r.row);
      if (seen.length === 2) controller.abort(new Error('interrupted by SIGINT'));
    });
    await expect(stopped).rejects.toThrow('interrupted by SIGINT');
    expect(seen).toEqual([2, 3]);
  });

  it('checks valid rows, keeps invalid ones, and writes every row in order with pass and reason', async () => {
    const api = fakeApi();
    const file = await openDryRunFile(
      '-',
      { stdin: Readable.from([Buffer.from(CSV)]), cwd: '.' },
      { lookbacks: { underwriting_cost_lookback_window: 5 } },
    );
    const out = new PassThrough();
    let text = '';
    out.on('data', (c) => (text += String(c)));
    const writer = dryRunCsvWriter(file.header, out);
    const results: DryRunRowResult[] = [];
    const summary = await runDryRunBulk(api, file, { concurrency: 3, retries: 1, retryDelayMs: 1 }, async (r) => {
      results.push(r);
      await writer.write(r);
    });
    await writer.end();
    expect(summary).toEqual({
      rows: 6,
      passed: 1,
      failed: 2,
      invalid: 2,
      errors: 1,
      reasons: { previously_purchased: 1, underwriting_cost: 1 },
      accounting: { balanced: true },
    });
    expect(results.map((r) => [r.row, r.status])).toEqual([
      [2, 'failed'],
      [3, 'passed'],
      [4, 'failed'],
      [5, 'invalid'],
      [6, 'error'],
      [7, 'invalid'],
    ]);
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe('name,ssn,email,pass,reason');
    expect(lines[1]).toBe('bought,111-22-3333,,false,previously_purchased');
    expect(lines[2]).toBe('fresh,222-33-4444,,true,');
    expect(lines[4]).toBe('broken,12,,,"invalid: ssn: must be 9 digits (spaces, dashes and dots are ignored)"');
    expect(lines[6]).toMatch(/^refused,,refused@example\.com,,invalid: the service refused/);
    expect(lines[5]).toMatch(/^down,333-44-5555,,,error: HTTP 503 after 6 attempts$/);
    // The invalid rows were never sent, the refused one not repeated, the failing one retried once;
    // the lookback went with every request.
    expect(api.seen).toHaveLength(6);
    expect(api.seen.every((b) => (b as Record<string, unknown>).underwriting_cost_lookback_window === 5)).toBe(true);
    expect(dryRunBulkExitCode(summary)).toBe(5);
  });

  it('exits 0 only when every row passed, 4 when some failed or were invalid', () => {
    const base = { rows: 2, passed: 2, failed: 0, invalid: 0, errors: 0, reasons: {} };
    expect(dryRunBulkExitCode(base)).toBe(0);
    expect(dryRunBulkExitCode({ ...base, failed: 1 })).toBe(4);
    expect(dryRunBulkExitCode({ ...base, invalid: 1 })).toBe(4);
  });
});
