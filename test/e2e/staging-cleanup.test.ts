import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { MAPPING, pushEnv, sleep, spawnBinary } from './push-helpers.js';

// What a push sorts an export through holds full SSNs and account numbers: private while it
// exists, and never outliving the next run, even when a run is killed with no chance to clean up.
// Two ways: CSV files not sorted by customer are sorted by their lines (runs on disk past 4M
// characters); anything else (here, two files with a row per payment) goes through SQLite.
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-staging-'));
// One for the file: the runs only check (--validate-only), each with its own state and temp folder.
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandboxProcess();
  await writeExport({ out: join(work, 'export'), customers: 6_000, seed: 21, paymentsPerCustomer: 10, shuffle: true });
  // The run after a killed one, of the same shape: its start removes what the killed run left.
  await writeExport({ out: join(work, 'small'), customers: 20, seed: 21, paymentsPerCustomer: 3, shuffle: true });
  for (const dir of ['export', 'small']) {
    const header = readFileSync(join(work, dir, 'export.csv'), 'utf8').split('\n')[0];
    writeFileSync(join(work, dir, 'more.csv'), `${header}\n`);
  }
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

const stagingDirs = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('leadctl-staging-'));

describe('the staging files of a push', () => {
  it.each([
    { way: 'the line sort', inputs: ['--loans', 'loans.csv', '--payments', 'payments.csv'], file: /\.run\.text$/ },
    { way: 'the SQLite staging', inputs: ['export.csv', 'more.csv'], file: /^staging\.sqlite$/ },
  ])(
    'of $way are 0600 in a 0700 folder while they exist; a SIGKILLed run leaves them, and the next run removes them',
    async ({ way, inputs, file }) => {
      const tmp = join(work, `tmp-${way.replaceAll(' ', '-')}`);
      mkdirSync(tmp);
      const env = { ...pushEnv(sandbox), LEADCTL_TMPDIR: tmp };
      const args = ['customers', 'batch', ...inputs, '--mapping', MAPPING, '--validate-only', '-o', 'json'];
      const killed = spawnBinary(args, env, join(work, 'export'));
      let seen: string | undefined;
      for (let i = 0; i < 1000 && seen === undefined; i++) {
        const dir = stagingDirs(tmp)[0];
        if (dir && readdirSync(join(tmp, dir)).some((name) => file.test(name))) seen = dir;
        else await sleep(10);
      }
      expect(seen).toBeDefined();
      expect(statSync(join(tmp, seen!)).mode & 0o777).toBe(0o700);
      for (const name of readdirSync(join(tmp, seen!)))
        expect({ name, mode: statSync(join(tmp, seen!, name)).mode & 0o777 }).toEqual({ name, mode: 0o600 });
      killed.kill('SIGKILL');
      expect((await killed.exited).signal).toBe('SIGKILL');
      expect(stagingDirs(tmp)).toContain(seen);

      const next = spawnBinary(args, env, join(work, 'small'));
      const exit = await next.exited;
      expect(exit.code).toBe(0);
      expect(stagingDirs(tmp)).toEqual([]);
    },
  );
});

describe('a signal while a check-only push reads what it sorted', () => {
  // Checking sends nothing and the sorted lines (or the staged rows) are read from disk at once:
  // nothing there waits on the event loop, where signals are handled.
  it.each([
    { way: 'the line sort', inputs: ['--loans', 'loans.csv', '--payments', 'payments.csv'] },
    { way: 'the SQLite staging', inputs: ['export.csv', 'more.csv'] },
  ])('of $way stops the run (130) and removes its folder', async ({ way, inputs }) => {
    const tmp = join(work, `tmp-signal-${way.replaceAll(' ', '-')}`);
    mkdirSync(tmp);
    const env = { ...pushEnv(sandbox), LEADCTL_TMPDIR: tmp };
    const args = ['customers', 'batch', ...inputs, '--mapping', MAPPING, '--validate-only', '--chunk-size', '10'];
    const run = spawnBinary([...args, '-o', 'json'], env, join(work, 'export'));
    // Of 600 checked requests: the signal comes while the sorted lines are read.
    for (let i = 0; i < 3000 && !/request 5 would send/.test(run.output().stderr); i++) await sleep(10);
    expect(run.output().stderr).toMatch(/request 5 would send/);
    run.kill('SIGINT');
    const exit = await run.exited;
    expect({ code: exit.code, status: JSON.parse(run.output().stdout).status }).toEqual({
      code: 130,
      status: 'interrupted',
    });
    expect(stagingDirs(tmp)).toEqual([]);
  });
});
