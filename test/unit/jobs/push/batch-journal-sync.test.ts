import type * as fs from 'node:fs';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runBatchPush } from '../../../../src/jobs/push/batch.js';
import type { PushEvent } from '../../../../src/jobs/push/progress.js';
import { environment, fakeClient, request } from '../../../helpers/batch-push.js';
import { memoryIO } from '../../../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { batchShapeLines } from '../../../../fixtures/lms/generate.mjs';

// fsync fails (a disk error, a full quota on a network file system) once `failing` is set.
let failing = false;
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return {
    ...real,
    fsyncSync: vi.fn((fd: number) => {
      if (failing) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO', syscall: 'fsync' });
      real.fsyncSync(fd);
    }),
  };
});

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-batch-jsync-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('a journal that cannot be synced to the disk at the end', () => {
  it('fails the run with a summary (what was acknowledged counted) and releases the lock', async () => {
    const dir = mkdtempSync(join(work, 'run-'));
    const lines: string[] = [...batchShapeLines({ customers: 60, seed: 3, paymentsPerCustomer: 2 })];
    writeFileSync(join(dir, 'export.ndjson'), lines.join('\n') + '\n');
    const state = join(dir, 'state');
    const events: PushEvent[] = [];
    const env = environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: state } }), fakeClient().client, events);
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.ndjson', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 25,
        concurrency: 1,
      }),
      {
        ...env,
        onEvent: (e) => {
          events.push(e);
          // The first acknowledgement is synced; those after it wait for the next sync.
          if (e.type === 'request') failing = true;
        },
      },
    ).finally(() => {
      failing = false;
    });
    // Before: close() in the run's `finally` threw the raw EIO, with no summary and the lock left behind.
    expect(outcome.summary.status).toBe('failed');
    expect(outcome.exitCode).toBe(2);
    expect(outcome.summary.error).toMatchObject({ code: 'environment', message: expect.stringContaining('EIO') });
    expect(outcome.summary.customers).toMatchObject({ accepted: 60 });
    expect(readdirSync(join(state, 'locks'))).toEqual([]);
    expect(existsSync(join(state, 'journals'))).toBe(true);
  });
});
