import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxProcess } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { MAPPING, pushEnv, sleep, spawnBinary } from './push-helpers.js';

// The staging file of a push holds full SSNs and account numbers: private while it exists, and
// never outliving the next run, even when a run is killed with no chance to clean up.
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-staging-'));
beforeAll(async () => {
  await writeExport({ out: join(work, 'export'), customers: 3000, seed: 21, paymentsPerCustomer: 4, shuffle: true });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

const stagingDirs = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('leadctl-staging-'));

describe('the staging file of a push', () => {
  it('is 0600 in a 0700 folder while it exists; a SIGKILLed run leaves it, and the next run removes it', async () => {
    const sandbox = await startSandboxProcess();
    const tmp = join(work, 'tmp');
    mkdirSync(tmp);
    try {
      const env = { ...pushEnv(sandbox), LEADCTL_TMPDIR: tmp };
      const args = [
        'customers',
        'batch',
        '--loans',
        'loans.csv',
        '--payments',
        'payments.csv',
        '--mapping',
        MAPPING,
        '--validate-only',
        '-o',
        'json',
      ];
      const killed = spawnBinary(args, env, join(work, 'export'));
      let seen: string | undefined;
      for (let i = 0; i < 400 && seen === undefined; i++) {
        const dir = stagingDirs(tmp)[0];
        if (dir && existsSync(join(tmp, dir, 'staging.sqlite'))) seen = dir;
        else await sleep(10);
      }
      expect(seen).toBeDefined();
      expect(statSync(join(tmp, seen!)).mode & 0o777).toBe(0o700);
      expect(statSync(join(tmp, seen!, 'staging.sqlite')).mode & 0o777).toBe(0o600);
      killed.kill('SIGKILL');
      expect((await killed.exited).signal).toBe('SIGKILL');
      expect(stagingDirs(tmp)).toContain(seen);

      const next = spawnBinary(args, env, join(work, 'export'));
      const exit = await next.exited;
      expect(exit.code).toBe(0);
      expect(stagingDirs(tmp)).toEqual([]);
    } finally {
      await sandbox.stop();
    }
  });
});
