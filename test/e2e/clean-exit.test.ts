import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxProcess } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { MAPPING, pushEnv, spawnBinary } from './push-helpers.js';

// A native SQLite binding that tears down at exit in the wrong order aborts the process (SIGABRT,
// exit 134) after the work is done: cron sees a failure. These runs repeat the paths that open
// SQLite files (a sandbox with a data dir, a staged push) and demand a clean exit every time.
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-clean-exit-'));
beforeAll(async () => {
  await writeExport({ out: join(work, 'export'), customers: 300, seed: 11, paymentsPerCustomer: 3, shuffle: true });
  // Shuffled --loans and --payments files go through the line sort, which opens no SQLite file;
  // two files with a row per payment each are staged in SQLite.
  const header = readFileSync(join(work, 'export', 'export.csv'), 'utf8').split('\n')[0];
  writeFileSync(join(work, 'export', 'more.csv'), `${header}\n`);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe(`clean exit on Node ${process.versions.node}`, () => {
  it('sandbox start --data-dir with a real file stops with exit 0 and no signal, 10 times in a row', async () => {
    const dataDir = join(work, 'sandbox-data');
    const exits: Array<{ code: number | null; signal: NodeJS.Signals | null }> = [];
    for (let run = 0; run < 10; run++) {
      const sandbox = await startSandboxProcess(['--data-dir', dataDir]);
      // Touch the store so that statements are prepared and used before the stop.
      const token = await fetch(`${sandbox.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: sandbox.clientId,
          client_secret: sandbox.clientSecret,
        }),
      });
      expect(token.status).toBe(200);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        sandbox.process.once('exit', (code, signal) => resolve({ code, signal })),
      );
      await sandbox.stop();
      exits.push(await exited);
    }
    expect(exits).toEqual(Array.from({ length: 10 }, () => ({ code: 0, signal: null })));
  });

  it('a staged (shuffled-rows) push runs to the end with exit 0 and no signal, 4 times in a row', async () => {
    const sandbox = await startSandboxProcess();
    try {
      const results: Array<{ code: number | null; signal: NodeJS.Signals | null }> = [];
      for (let run = 0; run < 4; run++) {
        const child = spawnBinary(
          ['customers', 'batch', 'export.csv', 'more.csv', '--mapping', MAPPING, '-o', 'json'],
          pushEnv(sandbox),
          join(work, 'export'),
        );
        const exit = await child.exited;
        if (exit.code !== 0) console.error(child.output().stderr);
        results.push(exit);
        expect(JSON.parse(child.output().stdout).customers.read).toBe(300);
      }
      expect(results).toEqual(Array.from({ length: 4 }, () => ({ code: 0, signal: null })));
    } finally {
      await sandbox.stop();
    }
  });
});
