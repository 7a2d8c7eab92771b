import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { pushEnv } from './push-helpers.js';

/** The built binary as an operator meets it: tables that fit, times, production, an unreachable service. */
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-operator-'));
let sandbox: TestSandbox;
let env: Record<string, string>;
beforeAll(async () => {
  sandbox = await startSandboxProcess();
  env = pushEnv(sandbox);
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

const widest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));

describe('tables and times', () => {
  it('lists ls fits 80 columns with a long name; local times with their offset, UTC with --utc', async () => {
    writeFileSync(join(work, 'zips.csv'), 'zip\n10001\n10002\n');
    const created = await runBinary(
      [
        'lists',
        'create',
        'zips.csv',
        '--name',
        'Closed ZIP codes of the northern region, reviewed every quarter by the compliance team',
        '--type',
        'zip',
      ],
      { env, cwd: work },
    );
    expect(created.code).toBe(0);
    const local = await runBinary(['-o', 'table', 'lists', 'ls'], {
      env: { ...env, TZ: 'America/Chicago' },
      cwd: work,
    });
    expect(local.code).toBe(0);
    expect(widest(local.stdout)).toBeLessThanOrEqual(80);
    expect(local.stdout).toMatch(/compliance/);
    expect(local.stdout).toMatch(/-0[56]:00/);
    const utc = await runBinary(['-o', 'table', '--utc', 'lists', 'ls'], {
      env: { ...env, TZ: 'America/Chicago' },
      cwd: work,
    });
    expect(utc.stdout).toMatch(/ UTC /);
    const wide = await runBinary(['-o', 'table', 'lists', 'ls'], { env: { ...env, COLUMNS: '200' }, cwd: work });
    expect(wide.stdout).toContain(
      'Closed ZIP codes of the northern region, reviewed every quarter by the compliance team',
    );
  });
});

describe('production looks different', () => {
  it('[production] on stderr for a person, nothing for a script', async () => {
    const prod = { ...env, LEADCTL_BASE_URL: 'https://api.lender.invalid', LEADCTL_RETRY_ATTEMPTS: '1' };
    const human = await runBinary(['-o', 'table', 'systems', 'ls'], { env: prod, cwd: work });
    expect(human.code).toBe(5);
    expect(human.stderr).toMatch(/^\[production\] https:\/\/api\.lender\.invalid \(profile "default"\)\n/);
    const script = await runBinary(['systems', 'ls'], { env: prod, cwd: work });
    expect(script.stderr).not.toContain('[production]');
    const local = await runBinary(['-o', 'table', 'systems', 'ls'], { env, cwd: work });
    expect(local.code).toBe(0);
    expect(local.stderr).not.toContain('[production]');
  });
});

describe('auth status offline', () => {
  it('answers after one short try, not the retries, when the service does not answer at all', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const started = Date.now();
      const r = await runBinary(['-o', 'table', 'auth', 'status'], {
        env: { ...env, LEADCTL_BASE_URL: `http://127.0.0.1:${port}`, LEADCTL_RETRY_BASE_MS: '500' },
        cwd: work,
      });
      // One try of at most 1 s; the six tries of the default policy would take 13 s or more. A
      // generous guard (a loaded machine starts a process slowly); the messages below say it was one try.
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r.code).toBe(5);
      expect(r.stdout).toMatch(/Live check: +not done: the service could not be reached/);
      expect(r.stderr).toMatch(/^Error: the service could not be reached \(one try of at most 1 s\)/m);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
