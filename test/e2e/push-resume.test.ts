import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { acknowledged, dumpLoanPerformance, MAPPING, pushEnv, sleep, spawnBinary } from './push-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-resume-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const batchRequests = (stats: any): number =>
  stats.requests.by_route['POST /api/v1/loan-performance/batches/customers'] ?? 0;

/** A port free now, so that the restarted sandbox has the same base URL (the journal is per base URL). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('a push killed with SIGKILL, then rerun with --resume', () => {
  it('sends only the rest, and the sandbox ends identical to an uninterrupted run', async () => {
    const exportDir = join(work, 'export');
    await writeExport({
      out: exportDir,
      // 12 requests of 20 customers (as 1,200 in chunks of 100 made, with a fifth of the data).
      customers: 240,
      seed: 9,
      paymentsPerCustomer: 3,
      shuffle: true,
      shapes: ['denormalised'],
    });
    const args = [
      'customers',
      'batch',
      'export.csv',
      '--mapping',
      MAPPING,
      '--chunk-size',
      '20',
      '--concurrency',
      '2',
      '-o',
      'json',
    ];

    // The reference: one uninterrupted run.
    const referenceDir = mkdtempSync(join(work, 'reference-'));
    const reference = await startSandboxProcess(['--data-dir', referenceDir]);
    try {
      const res = await runBinary(args, { env: pushEnv(reference), cwd: exportDir });
      expect(res.code).toBe(0);
    } finally {
      await reference.stop();
    }

    // The interrupted run: killed once a few chunks are acknowledged. Each request takes a second
    // (sandbox --latency), so however slow this machine is, the run cannot get near its 12th
    // acknowledgement between the poll that sees the 4th and the kill.
    const dataDir = mkdtempSync(join(work, 'interrupted-'));
    const stateDir = join(work, 'state');
    const port = String(await freePort());
    let sandbox = await startSandboxProcess(['--data-dir', dataDir, '--port', port, '--latency', '1000']);
    let ackedBeforeKill: number;
    try {
      const env = pushEnv(sandbox, stateDir);
      const run = spawnBinary(args, env, exportDir);
      let ended = false;
      void run.exited.then(() => (ended = true));
      // Waits on the journal, not on the clock (the test's own timeout is the limit).
      while (!ended && acknowledged(stateDir) < 4) await sleep(50);
      expect(ended, run.output().stderr).toBe(false);
      run.kill('SIGKILL');
      const end = await run.exited;
      expect(end.signal).toBe('SIGKILL');
      ackedBeforeKill = acknowledged(stateDir);
      expect(ackedBeforeKill).toBeGreaterThanOrEqual(4);
      expect(ackedBeforeKill).toBeLessThan(12);
    } finally {
      await sandbox.stop();
    }

    // Same data dir, fresh process (as after a reboot): --resume sends the chunks not acknowledged.
    sandbox = await startSandboxProcess(['--data-dir', dataDir, '--port', port]);
    try {
      const res = await runBinary([...args, '--resume'], { env: pushEnv(sandbox, stateDir), cwd: exportDir });
      expect(res.code).toBe(0);
      const summary = JSON.parse(res.stdout);
      expect(summary.resumed).toBe(true);
      expect(summary.requests).toMatchObject({
        total: 12,
        acknowledged_before: ackedBeforeKill,
        sent: 12 - ackedBeforeKill,
      });
      expect(summary.customers).toMatchObject({ read: 240, accepted: 240, not_sent: 0 });
      expect(batchRequests(await sandbox.stats())).toBe(12 - ackedBeforeKill);
    } finally {
      await sandbox.stop();
    }
    expect(dumpLoanPerformance(dataDir)).toEqual(dumpLoanPerformance(referenceDir));
  });
});
