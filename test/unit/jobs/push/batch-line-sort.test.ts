import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runBatchPush } from '../../../../src/jobs/push/batch.js';
import { environment, fakeClient, request } from '../../../helpers/batch-push.js';
import { memoryIO } from '../../../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../../../fixtures/lms/generate.mjs';

/**
 * A line sort whose cut groups a line otherwise than the reader: it hands the file on as it is, each
 * row its own. The reader then finds it unsorted (NotSortedError) after requests were sent, and the
 * export is staged, as the design allows.
 */
vi.mock('../../../../src/ingest/lms/line-sort.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../../src/ingest/lms/line-sort.js')>();
  return {
    ...real,
    sortByCustomer: async (file: { input: unknown }) => {
      const rows = new real.RowMap();
      rows.add(1, 1 << 30);
      return { input: file.input, rows, lines: 0 };
    },
  };
});

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-batch-sort-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('customers batch, the line sort found wrong by the reader', () => {
  it('stages the export and sends everything again, none of it taken as acknowledged before', async () => {
    const dir = join(work, 'gen');
    await writeExport({ out: dir, customers: 300, seed: 11, paymentsPerCustomer: 3, shapes: ['denormalised'] });
    const path = join(dir, 'export.csv');
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    // The last row repeats the first data row: customer 1000001 again, after everyone else.
    writeFileSync(path, [...lines, lines[1]].join('\n') + '\n');
    const fake = fakeClient();
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 2,
      }),
      environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(work, 'state') } }), fake.client),
    );
    expect(outcome.summary.notes?.join('\n')).toMatch(
      /could not be sorted by its lines .*the 5 request\(s\) already sent were sent again/,
    );
    expect(outcome.summary.requests).toMatchObject({ total: 6, sent: 6 });
    expect(outcome.summary.customers).toMatchObject({ read: 300, accepted: 300 });
    const staged = fake.bodies.slice(-6).flatMap((b) => b.customers.map((c) => c.customer_id));
    expect(new Set(staged).size).toBe(300);
  });
});
