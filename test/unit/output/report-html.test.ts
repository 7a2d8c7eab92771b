import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dryRunFacts, listFacts, pushFacts, SHOWN_REASONS } from '../../../src/jobs/run-facts.js';
import { EXAMPLES_PER_REASON, MAX_BUCKETS, RunRecorder } from '../../../src/jobs/run-record.js';
import { accountFor } from '../../../src/jobs/push/summary.js';
import type { ListUploadResult } from '../../../src/jobs/list-upload.js';
import { escapeHtml, renderReportHtml } from '../../../src/output/report-html.js';
import { level, manualClock, millionRowRun, runContext } from '../../helpers/run-report.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The text of the element with this data-testid (the first one). */
function testId(html: string, id: string): string | undefined {
  const m = new RegExp(`data-testid="${id}"[^>]*>([^<]*)<`).exec(html);
  return m?.[1];
}

const HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>';

describe('the HTML report', () => {
  it('stays under 1 MB for a million-row push with 10,000 rejects, with capped reasons, examples and timeline', async () => {
    const { summary, recorder } = millionRowRun(dir);
    const facts = await pushFacts(summary, runContext(recorder));
    const record = recorder.finish();
    const html = renderReportHtml(facts, record, '9.9.9');
    const bytes = Buffer.byteLength(html);
    expect(bytes).toBeLessThan(1024 * 1024);
    expect(bytes).toBeGreaterThan(10_000);
    expect(record.buckets.length).toBeLessThanOrEqual(MAX_BUCKETS);
    expect(record.buckets.reduce((n, b) => n + b.records, 0)).toBe(990_000);
    expect(facts.rejects!.reasons).toHaveLength(SHOWN_REASONS);
    // Further examples came from the rejects file (the summary keeps one per reason).
    expect(facts.rejects!.reasons[0]!.examples).toHaveLength(EXAMPLES_PER_REASON);
    for (const r of facts.rejects!.reasons) expect(r.examples.length).toBeLessThanOrEqual(EXAMPLES_PER_REASON);
    // Every reject is counted: the ones shown, and the rest in one line.
    expect(facts.rejects!.reasons.reduce((n, r) => n + r.count, 0) + facts.rejects!.otherCount).toBe(10_000);
    expect(Number(testId(html, 'reason-other-count')!.replace(/,/g, ''))).toBe(facts.rejects!.otherCount);
    expect(testId(html, 'rejects-total')).toBe('10,000');
    expect(testId(html, 'acc-customers-read')).toBe('1,000,000');
    expect(testId(html, 'acc-customers-accepted')).toBe('990,000');
    expect(testId(html, 'acc-customers-rejected')).toBe('10,000');
    expect(testId(html, 'http-retries')).toBe('20');
    // Values in examples are masked as on the terminal: long digit runs keep their last four.
    expect(html).not.toContain('123456789012');
    expect(html).toContain('********9012');
  });

  it('escapes every value: an input file can hold markup, and nothing in it may run or load', async () => {
    const clock = manualClock();
    const recorder = new RunRecorder(clock.now);
    const input = join(dir, `${HOSTILE.replace(/\//g, '_')}.csv`);
    writeFileSync(input, 'customer_id\n1\n');
    const summary = accountFor({
      command: 'customers batch',
      status: 'completed_with_rejects',
      validate_only: false,
      resumed: false,
      rows_read: 1,
      customers: level({ read: 1, valid: 0, rejected: 1 }),
      loans: level({}),
      payments: level({}),
      duplicates: 0,
      requests: { total: 0, sent: 0, acknowledged_before: 0, not_sent: 0 },
      retries: 0,
      elapsed_seconds: 0,
      rows_per_second: 0,
      rejects_file: null,
      rejects: 1,
      reasons: [
        {
          reason: `customer_id: ${HOSTILE}`,
          count: 1,
          example: {
            source_file: HOSTILE,
            row: 2,
            customer_id: HOSTILE,
            loan_id: null,
            payment_id: null,
            field: 'customer_id',
            reason: HOSTILE,
          },
        },
      ],
      journal: null,
      exit_code: 4,
      notes: [HOSTILE],
      error: { code: 'x', message: HOSTILE, hint: HOSTILE },
    });
    const facts = await pushFacts(
      summary,
      runContext(recorder, {
        inputs: [input],
        target: { profile: HOSTILE, baseUrl: `https://api.example.com/${HOSTILE}`, production: false },
      }),
    );
    const html = renderReportHtml(facts, recorder.finish(), HOSTILE);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).toContain(escapeHtml('<script>alert("x")</script>'));
    // Nothing that loads: no script, no link, no src, no url(), no @import; the CSP forbids the rest.
    expect(html).not.toMatch(/<(script|link|iframe|object|embed|img)\b/i);
    expect(html).not.toMatch(/<[a-z][^>]*\s(src|href|on[a-z]+)=/i);
    expect(html).not.toMatch(/url\(|@import/i);
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    );
  });

  it('says the status and exit code in words, shows the production marker, and strips a password from the URL', async () => {
    const recorder = new RunRecorder(manualClock().now);
    const summary = accountFor({
      command: 'customers batch',
      status: 'service_unavailable',
      validate_only: false,
      resumed: false,
      rows_read: 3,
      customers: level({ read: 3, valid: 3, sent: 1, accepted: 1, not_sent: 2 }),
      loans: level({}),
      payments: level({}),
      duplicates: 0,
      requests: { total: 3, sent: 1, acknowledged_before: 0, not_sent: 2 },
      retries: 5,
      elapsed_seconds: 1,
      rows_per_second: 3,
      rejects_file: null,
      rejects: 0,
      journal: '/state/j.ndjson',
      exit_code: 5,
      error: { code: 'service', message: 'the service answered 503 five times' },
    });
    const facts = await pushFacts(
      summary,
      runContext(recorder, {
        target: { profile: 'prod', baseUrl: 'https://user:secret@api.example.com', production: true },
      }),
    );
    const html = renderReportHtml(facts, recorder.finish(), '1.0.0');
    expect(testId(html, 'exit-code')).toBe('5');
    expect(testId(html, 'exit-words')).toBe('the service or the network failed after retries');
    expect(testId(html, 'status')).toMatch(/^stopped: the service stayed unavailable/);
    expect(testId(html, 'production')).toBe('[production]');
    expect(testId(html, 'acc-customers-not-sent')).toBe('2');
    expect(html).not.toContain('secret');
    expect(testId(html, 'base-url')).toBe('https://api.example.com');
    expect(html).toContain('journal');
  });

  it('draws a list upload and a bulk dry run from their own summaries', async () => {
    const recorder = new RunRecorder(manualClock().now);
    const result = {
      outcome: 'invalid',
      summary: {
        list_id: null,
        name: 'Do not lend',
        type: 'Social Security Numbers',
        file: 'ssns.csv',
        format: 'csv',
        csv_from_row: null,
        column: '1 (ssn)',
        header_row: 1,
        rows_read: 5,
        blank: 1,
        valid: 2,
        normalised: 0,
        duplicates: 0,
        rejected: 2,
        distinct: 2,
        uploaded: 0,
        validate_only: false,
        rejects_file: null,
        elapsed_seconds: 0,
        accounting: { balanced: true, rows_read: 5, accounted_for: 5 },
      },
      problems: [
        { row: 3, value: '*****6789', reason: 'not 9 digits' },
        { row: 4, value: '***45', reason: 'not 9 digits' },
      ],
      problemCount: 2,
      reasons: [{ reason: 'not 9 digits', count: 2, example: { row: 3, value: '*****6789', reason: 'not 9 digits' } }],
      values: undefined,
    } as unknown as ListUploadResult;
    const lists = await listFacts(result, 2, runContext(recorder, { command: 'lists create' }));
    const html = renderReportHtml(lists, recorder.finish(), '1.0.0');
    expect(testId(html, 'acc-rows-read')).toBe('5');
    expect(testId(html, 'acc-rows-valid')).toBe('2');
    expect(testId(html, 'acc-rows-accounted-for')).toBe('5');
    expect(testId(html, 'rejects-total')).toBe('2');
    expect(html).toContain('row 3: *****6789 — not 9 digits');
    expect(html).toContain('row 4: ***45 — not 9 digits');

    const dry = new RunRecorder(manualClock().now);
    for (let i = 0; i < 5; i++) dry.sample('failed: previously_purchased', () => `row ${i + 2}: previously_purchased`);
    const facts = await dryRunFacts(
      { rows: 7, passed: 2, failed: 5, invalid: 0, errors: 0, reasons: { previously_purchased: 5 } },
      4,
      null,
      runContext(dry, { command: 'dry-run' }),
    );
    const dryHtml = renderReportHtml(facts, dry.finish(), '1.0.0');
    expect(testId(dryHtml, 'acc-rows-failed')).toBe('5');
    expect(testId(dryHtml, 'reason-count')).toBe('5');
    expect(dryHtml.match(/<li>/g)).toHaveLength(EXAMPLES_PER_REASON);
  });
});
