import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { isProductionUrl } from '../../src/config/base-url.js';
import { memoryIO } from '../helpers/memory-io.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-cmd-production-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A production-looking service that cannot be reached (the .invalid domain never resolves). */
async function run(argv: string[], baseUrl = 'https://api.lender.invalid', tty = true) {
  const io = memoryIO({
    tty,
    cwd: dir,
    env: {
      LEADCTL_BASE_URL: baseUrl,
      LEADCTL_CLIENT_ID: 'id',
      LEADCTL_CLIENT_SECRET: 'secret',
      LEADCTL_CONFIG_DIR: join(dir, 'config'),
      LEADCTL_STATE_DIR: join(dir, 'state'),
      LEADCTL_RETRY_ATTEMPTS: '1',
    },
  });
  const code = await main(argv, io);
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

describe('a production profile looks different from the sandbox', () => {
  it('says [production] with the URL and profile on stderr, once, before anything is sent', async () => {
    const r = await run(['systems', 'ls']);
    expect(r.code).toBe(5);
    expect(r.stderr.split('\n')[0]).toBe('[production] https://api.lender.invalid (profile "default")');
    expect(r.stderr.match(/\[production\]/g)).toHaveLength(1);
    expect(r.stdout).not.toContain('[production]');
  });

  it('auth status marks the base URL', async () => {
    const r = await run(['auth', 'status']);
    expect(r.stdout).toMatch(/Base URL: +https:\/\/api\.lender\.invalid \(environment\) \[production\]/);
  });

  it('nothing for scripts (JSON), with --quiet, or for a sandbox', async () => {
    expect((await run(['systems', 'ls'], undefined, false)).stderr).not.toContain('[production]');
    expect((await run(['-q', 'systems', 'ls'])).stderr).not.toContain('[production]');
    expect((await run(['systems', 'ls'], 'http://127.0.0.1:9')).stderr).not.toContain('[production]');
    expect((await run(['systems', 'ls'], 'https://api.sandbox.lender.invalid')).stderr).not.toContain('[production]');
  });

  it('knows loopback and sandbox hosts from the rest', () => {
    expect(isProductionUrl('https://api.decisioncloud.me')).toBe(true);
    expect(isProductionUrl('http://localhost:8080')).toBe(false);
    expect(isProductionUrl('http://[::1]:8080')).toBe(false);
    expect(isProductionUrl('https://sandbox.decisioncloud.me')).toBe(false);
    expect(isProductionUrl('https://api-sandbox.decisioncloud.me')).toBe(false);
    expect(isProductionUrl('https://sandboxed.example.com')).toBe(true);
  });
});
