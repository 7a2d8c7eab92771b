import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { AuthError } from '../../../../src/errors.js';
import { MAX_FIELD_CHARS } from '../../../../src/ingest/table/reader.js';
import { runBatchPush } from '../../../../src/jobs/push/batch.js';
import { environment, fakeClient, request } from '../../../helpers/batch-push.js';
import { memoryIO } from '../../../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { batchShapeLines, writeExport } from '../../../../fixtures/lms/generate.mjs';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-batch-docs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const customers = (n: number, seed = 5): string[] => [
  ...batchShapeLines({ customers: n, seed, paymentsPerCustomer: 2 }),
];

describe('a streamed file found unsorted while the rest of a stopped run is counted', () => {
  it('stopped by refused credentials, then found unsorted in the rest: what was acknowledged is still counted', async () => {
    const dir = mkdtempSync(join(work, 'auth-'));
    const lines = customers(60);
    writeFileSync(join(dir, 'export.ndjson'), [...lines.slice(0, 59), lines[0]].join('\n') + '\n');
    const fake = fakeClient({
      answer: (n) => (n === 1 ? new AuthError('the service refused the access token') : 'ok'),
    });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.ndjson', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 25,
        concurrency: 1,
      }),
      environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(dir, 'state') } }), fake.client),
    );
    expect(outcome.exitCode).toBe(3);
    expect(fake.bodies).toHaveLength(1);
    // Before: accepted 0, requests sent 0, and a note that the request "was sent again" (it was not).
    expect(outcome.summary.customers).toMatchObject({ sent: 25, accepted: 25 });
    expect(outcome.summary.requests).toMatchObject({ sent: 1 });
    expect(outcome.summary.notes).toEqual(['the rest of the export was not read: rerun with --resume to continue']);
    expect(outcome.summary.accounting.balanced).toBe(true);
  });

  it('the same with a sorted CSV export whose last row is out of order', async () => {
    const dir = join(work, 'csv-auth');
    await writeExport({ out: dir, customers: 60, seed: 7, paymentsPerCustomer: 2, shapes: ['denormalised'] });
    const rows = readFileSync(join(dir, 'export.csv'), 'utf8').trimEnd().split('\n');
    writeFileSync(join(dir, 'export.csv'), [...rows, rows[1]].join('\n') + '\n');
    const fake = fakeClient({
      answer: (n) => (n === 1 ? new AuthError('the service refused the access token') : 'ok'),
    });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 25,
        concurrency: 1,
      }),
      environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(dir, 'state') } }), fake.client),
    );
    expect(outcome.exitCode).toBe(3);
    // Before: read 0, accepted 0 (the line-sorted pass's fresh account), and a "sent again" note.
    expect(outcome.summary.customers).toMatchObject({ accepted: 25 });
    expect(outcome.summary.notes).toEqual(['the rest of the export was not read: rerun with --resume to continue']);
    expect(outcome.summary.accounting.balanced).toBe(true);
  });
});

describe('the record of what was sent, when a streamed file turns out unreadable', () => {
  it('keeps what the service acknowledged before the bad line: the next --changed-only run leaves it alone', async () => {
    const dir = mkdtempSync(join(work, 'record-'));
    const env = { LEADCTL_STATE_DIR: join(dir, 'state'), LEADCTL_CONFIG_DIR: join(dir, 'config') };
    const lines = customers(60, 11);
    const huge = JSON.stringify({ 'Cust No': '9999999', note: 'x'.repeat(MAX_FIELD_CHARS + 1) });
    writeFileSync(join(dir, 'export.ndjson'), [...lines, huge].join('\n') + '\n');
    const args = request({
      inputs: [{ path: 'export.ndjson', role: 'auto' }],
      mappingPath: join(fixtures, 'mapping.json'),
      chunkSize: 25,
      concurrency: 1,
      delta: 'changed-only',
    });
    const first = fakeClient();
    await expect(runBatchPush(args, environment(memoryIO({ cwd: dir, env }), first.client))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('export.ndjson, row 61: '),
      // No summary follows bad input: the error says that requests went before it.
      hint: expect.stringMatching(/^\d+ request\(s\) had already been sent .*pushing the corrected file again is safe/),
    });
    expect(first.bodies.flatMap((b) => b.customers).length).toBeGreaterThanOrEqual(25);
    writeFileSync(join(dir, 'export.ndjson'), lines.join('\n') + '\n');
    const second = await runBatchPush(args, environment(memoryIO({ cwd: dir, env }), fakeClient().client));
    // Before: unchanged 0 (the acknowledged customers were held for a batch write that never came).
    // A request still in flight when the error struck is cut off, so at least the first is recorded.
    expect(second.summary.customers.read).toBe(60);
    expect(second.summary.customers.unchanged).toBeGreaterThanOrEqual(25);
    expect(second.summary.customers.unchanged + second.summary.customers.sent).toBe(60);
  });
});

describe('a JSON document cut short (an export still being written)', () => {
  it('is refused whole, exit 2 naming the file, and nothing is sent', async () => {
    const dir = mkdtempSync(join(work, 'cut-'));
    const objects = customers(60);
    writeFileSync(join(dir, 'export.json'), `[${objects.join(',\n')}`.slice(0, -20));
    const fake = fakeClient();
    await expect(
      runBatchPush(
        request({
          inputs: [{ path: 'export.json', role: 'auto' }],
          mappingPath: join(fixtures, 'mapping.json'),
          chunkSize: 25,
        }),
        environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(dir, 'state') } }), fake.client),
      ),
    ).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('export.json') });
    expect(fake.bodies).toHaveLength(0);
  });
});
