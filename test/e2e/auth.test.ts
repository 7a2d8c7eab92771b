import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, runBinary, stderrDocument } from '../helpers/binary.js';
import { adminHeaders, startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { FIXTURES, MAPPING } from './push-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'leadctl-e2e-auth-'));
let counter = 0;
const freshConfigDir = () => join(root, `config-${++counter}`);

/** Retries kept short so that failures surface in seconds; documented in docs/output.md. */
const FAST_RETRIES = { LEADCTL_RETRY_BASE_MS: '20', LEADCTL_RETRY_MAX_DELAY_MS: '200' };

function leadctl(args: string[], dir: string, options: { env?: Record<string, string>; input?: string } = {}) {
  return runBinary(args, { env: { LEADCTL_CONFIG_DIR: dir, ...FAST_RETRIES, ...options.env }, input: options.input });
}

function login(sandbox: TestSandbox, dir: string, extra: string[] = [], secret = sandbox.clientSecret) {
  return leadctl(
    [
      '--base-url',
      sandbox.baseUrl,
      'auth',
      'login',
      '--client-id',
      sandbox.clientId,
      '--client-secret-stdin',
      ...extra,
    ],
    dir,
    { input: secret + '\n' },
  );
}

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startSandboxProcess();
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('leadctl auth (built binary against the sandbox)', () => {
  it('logs in with the secret on stdin; the config file is 0600 in a 0700 folder', async () => {
    const dir = freshConfigDir();
    const r = await login(sandbox, dir);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      logged_in: true,
      base_url: sandbox.baseUrl,
      client_id: sandbox.clientId,
      profile: 'default',
    });
    const file = join(dir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(r.stdout + r.stderr).not.toContain(sandbox.clientSecret);
  });

  it('shows the status with sources and a live check', async () => {
    const dir = freshConfigDir();
    expect((await login(sandbox, dir)).code).toBe(0);
    const r = await leadctl(['auth', 'status'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      profile: 'default',
      base_url: sandbox.baseUrl,
      base_url_source: 'profile',
      client_id: sandbox.clientId,
      client_id_source: 'profile',
      live_check: { ok: true },
    });
    const table = await leadctl(['-o', 'table', 'auth', 'status'], dir);
    expect(table.stdout).toContain(`Client id:     ${sandbox.clientId} (profile)`);
    expect(table.stdout).toMatch(/Live check:\s+ok/);
  });

  it('exits 3 with a clear message for a wrong secret', async () => {
    const dir = freshConfigDir();
    const r = await login(sandbox, dir, [], 'wrongwrongwrongwrongwrongwrongwrongwrong');
    expect(r.code).toBe(3);
    expect(errorLines(r.stderr)).toContain(`refused the credentials of client ${sandbox.clientId}`);
    expect(errorLines(r.stderr)).toContain('invalid_client');
    expect(errorLines(r.stderr)).toMatch(/Hint: .*leadctl auth login/);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('works from environment variables alone, with no config file (cron)', async () => {
    const dir = freshConfigDir();
    const env = {
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    };
    const ls = await leadctl(['systems', 'ls'], dir, { env });
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout)[0]).toMatchObject({ id: expect.any(Number), name: expect.any(String) });
    const status = await leadctl(['auth', 'status'], dir, { env });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      client_id_source: 'environment',
      client_secret_source: 'environment',
      base_url_source: 'environment',
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('never shows the secret or a token in --verbose output', async () => {
    const dir = freshConfigDir();
    const runs = [await login(sandbox, dir, ['--verbose'])];
    const token = (await leadctl(['-o', 'table', 'auth', 'token'], dir)).stdout.trim();
    expect(token.length).toBeGreaterThan(20);
    runs.push(await leadctl(['--verbose', 'systems', 'ls'], dir));
    runs.push(await leadctl(['--verbose', 'auth', 'status'], dir));
    runs.push(await leadctl(['--verbose', '-o', 'table', 'systems', 'ls'], dir));
    const env = {
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    };
    runs.push(await leadctl(['--verbose', 'systems', 'ls'], freshConfigDir(), { env }));
    for (const r of runs) {
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('[http]');
      expect(r.stderr).not.toContain(sandbox.clientSecret);
      expect(r.stderr).not.toContain(token);
      expect(r.stderr).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
      expect(r.stdout).not.toContain(sandbox.clientSecret);
    }
    expect(runs[0]!.stderr).toContain('[http] POST /oauth/token → 200');
  });
});

// A sandbox and a config folder each; the expiry test mostly sleeps: side by side. The first takes
// the file's sandbox (the tests above are done with it) and moves its clock on for good.
describe.concurrent('leadctl auth: token life cycle', () => {
  it('renews a token the service refuses (401) once, transparently', async () => {
    const dir = freshConfigDir();
    expect((await login(sandbox, dir)).code).toBe(0);
    // Only the service's clock moves on (our cached token still looks valid for an hour):
    // the token is refused with 401, renewed once and the request repeated.
    await fetch(`${sandbox.baseUrl}/_sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...adminHeaders(sandbox) },
      body: JSON.stringify({ advance_seconds: 7200 }),
    });
    const refused = await leadctl(['--verbose', 'systems', 'ls'], dir);
    expect(refused.code).toBe(0);
    expect(refused.stderr).toContain('→ 401');
    expect(refused.stderr).toContain('the service refused the previous one');
    expect(JSON.parse(refused.stdout).length).toBeGreaterThan(0);
  });

  it('replaces an expired cached token before use (sandbox --token-ttl 2)', async () => {
    const short = await startSandboxProcess(['--token-ttl', '2']);
    try {
      const dir = freshConfigDir();
      expect((await login(short, dir)).code).toBe(0);
      await new Promise((r) => setTimeout(r, 2500));
      const expired = await leadctl(['--verbose', 'systems', 'ls'], dir);
      expect(expired.code).toBe(0);
      expect(expired.stderr).toContain('the cached one has expired');
      expect(expired.stderr).not.toContain('→ 401');
    } finally {
      await short.stop();
    }
  });

  it('exits 3 after the secret was rotated, saying what to do', async () => {
    const rotating = await startSandboxProcess();
    try {
      const dir = freshConfigDir();
      expect((await login(rotating, dir)).code).toBe(0);
      // The admin endpoints take the client credentials too, as curl -u ID:SECRET sends them.
      const basic = Buffer.from(`${rotating.clientId}:${rotating.clientSecret}`).toString('base64');
      const res = await fetch(`${rotating.baseUrl}/_sandbox/rotate-secret`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${basic}` },
        body: '{}',
      });
      expect(res.status).toBe(200);
      // A push does not trust the cached token (the rotation cut it off): refused before reading, nothing sent.
      const route = 'POST /api/v1/loan-performance/batches/customers';
      const before = (await rotating.stats()).requests.by_route[route] ?? 0;
      const push = await leadctl(
        [
          'customers',
          'batch',
          join(FIXTURES, 'export.csv'),
          '--mapping',
          MAPPING,
          '--rejects',
          join(root, `r-${counter}.csv`),
        ],
        dir,
        { env: { LEADCTL_STATE_DIR: join(dir, 'state') } },
      );
      expect(push.code, push.stderr).toBe(3);
      expect((await rotating.stats()).requests.by_route[route] ?? 0).toBe(before);
      const ls = await leadctl(['systems', 'ls'], dir);
      expect(ls.code).toBe(3);
      expect(ls.stderr).toMatch(/refused the credentials/);
      expect(ls.stderr).toMatch(/rotated/);
      // JSON implied (stdout piped), not asked for: stdout stays clean, the error document is on stderr.
      expect(ls.stdout).toBe('');
      expect(stderrDocument(ls.stderr).error.exit_code).toBe(3);
      const status = await leadctl(['auth', 'status'], dir);
      expect(status.code).toBe(3);
      expect(JSON.parse(status.stdout).live_check.ok).toBe(false);
    } finally {
      await rotating.stop();
    }
  });
});
