import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { acknowledged, MAPPING, pushEnv, sleep, spawnBinary } from './push-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-signals-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('Ctrl-C during a push run with a saved profile', () => {
  it('lets the request in flight finish, records it, prints the summary and exits 130; --resume sends the rest', async () => {
    const exportDir = join(work, 'export');
    await writeExport({ out: exportDir, customers: 800, seed: 3, paymentsPerCustomer: 2, shapes: ['denormalised'] });
    // Every request takes 1.5 s, one at a time: after the first acknowledgement the second is in flight.
    const sandbox = await startSandboxProcess(['--latency', '1500']);
    try {
      const stateDir = join(work, 'state');
      const { LEADCTL_CLIENT_ID: clientId, LEADCTL_CLIENT_SECRET: secret, ...profileEnv } = pushEnv(sandbox, stateDir);
      // A saved profile, as a person has: reading it loads conf, whose exit hook re-sends signals.
      const login = await runBinary(['auth', 'login', '--client-id', clientId!, '--client-secret-stdin'], {
        env: profileEnv,
        input: secret + '\n',
      });
      expect(login.code, login.stderr).toBe(0);
      const args = [
        'customers',
        'batch',
        'export.csv',
        '--mapping',
        MAPPING,
        '--chunk-size',
        '100',
        '--concurrency',
        '1',
        '-o',
        'json',
      ];
      // A grace far above the sandbox's latency: a request in flight at the signal gets to finish.
      // (The default, 1.5 s, ends a run within 2 s even on a hung answer: test/e2e/hostile-answers.test.ts.)
      const run = spawnBinary(args, { ...profileEnv, LEADCTL_STOP_GRACE_MS: '30000' }, exportDir);
      let ended = false;
      void run.exited.then(() => (ended = true));
      while (!ended && acknowledged(stateDir) < 1) await sleep(25);
      expect(ended, run.output().stderr).toBe(false);
      const ackedAtSignal = acknowledged(stateDir);
      run.kill('SIGINT');
      const end = await run.exited;
      expect(end.code, run.output().stderr).toBe(130);
      const summary = JSON.parse(run.output().stdout);
      expect(summary).toMatchObject({ status: 'interrupted', exit_code: 130 });
      // The request in flight at the signal was not cut off: it finished and was journalled.
      expect(acknowledged(stateDir)).toBe(ackedAtSignal + 1);
      expect(summary.customers.accepted).toBe(100 * (ackedAtSignal + 1));
      // A streamed file is not read past the signal; what was read is accepted or not yet sent.
      expect(summary.customers.accepted + summary.customers.not_sent).toBe(summary.customers.read);
      expect(summary.requests.sent + summary.requests.not_sent).toBe(summary.requests.total);
      // The rows read before the signal are counted (under 5,000 of them were never told as progress).
      expect(summary.rows_read).toBeGreaterThanOrEqual(summary.customers.read);

      // The journal does not depend on --concurrency: the rest goes in one round of the latency.
      const resumeArgs = args.map((a, i) => (args[i - 1] === '--concurrency' ? '8' : a));
      const resumed = await runBinary([...resumeArgs, '--resume'], { env: profileEnv, cwd: exportDir });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect((await sandbox.stats()).customers).toBe(800);
    } finally {
      await sandbox.stop();
    }
  });
});
