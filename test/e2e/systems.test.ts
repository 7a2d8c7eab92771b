import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, runBinary, stderrDocument } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';

const root = mkdtempSync(join(tmpdir(), 'leadctl-e2e-systems-'));
const FAST_RETRIES = { LEADCTL_RETRY_BASE_MS: '20', LEADCTL_RETRY_MAX_DELAY_MS: '200' };

function envFor(sandbox: { baseUrl: string; clientId: string; clientSecret: string }): Record<string, string> {
  return {
    LEADCTL_CONFIG_DIR: join(root, 'unused'),
    LEADCTL_BASE_URL: sandbox.baseUrl,
    LEADCTL_CLIENT_ID: sandbox.clientId,
    LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    ...FAST_RETRIES,
  };
}

let sandbox: TestSandbox;
let expected: Array<{ id: number; name: string }>;

beforeAll(async () => {
  sandbox = await startSandboxProcess();
  const token = await fetch(`${sandbox.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sandbox.clientId,
      client_secret: sandbox.clientSecret,
    }),
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  const res = await fetch(`${sandbox.baseUrl}/api/v1/resources/management-systems`, {
    headers: { authorization: `Bearer ${token.access_token}`, accept: 'application/json' },
  });
  expected = ((await res.json()) as { data: Array<{ id: number; name: string }> }).data.map(({ id, name }) => ({
    id,
    name,
  }));
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('leadctl systems ls in every output format', () => {
  it('json (the default when piped): one array document', async () => {
    const r = await runBinary(['systems', 'ls'], { env: envFor(sandbox) });
    expect(r.code).toBe(0);
    expect(expected.length).toBeGreaterThan(0);
    expect(JSON.parse(r.stdout)).toEqual(expected);
  });

  it('ndjson: one object per line', async () => {
    const r = await runBinary(['-o', 'ndjson', 'systems', 'ls'], { env: envFor(sandbox) });
    expect(r.code).toBe(0);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(expected);
  });

  it('csv: header and one row per system', async () => {
    const r = await runBinary(['-o', 'csv', 'systems', 'ls'], { env: envFor(sandbox) });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('id,name');
    expect(lines).toHaveLength(expected.length + 1);
    expect(lines[1]!.startsWith(`${expected[0]!.id},`)).toBe(true);
  });

  it('table: headings and every name, no colour codes under NO_COLOR', async () => {
    const r = await runBinary(['-o', 'table', 'systems', 'ls'], { env: envFor(sandbox) });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/│ ID │ Name/);
    for (const s of expected) expect(r.stdout).toContain(s.name);
    expect(r.stdout).not.toMatch(/\u001b\[/);
  });
});

// Each test has a sandbox of its own and mostly waits (Retry-After, the rate limit's second).
// Side by side they share the cores (up to 15 runs at once): one took 42 s at a load average of 8,
// so the per-test limit is doubled.
describe.concurrent('leadctl systems ls when the service misbehaves', { timeout: 120_000 }, () => {
  it('retries through a 30% failure rate', async () => {
    const flaky = await startSandboxProcess(['--fail-rate', '0.3', '--random-seed', '7']);
    try {
      // More attempts than the default, so that eight runs never fail by bad luck (0.3^12 each).
      const env = { ...envFor(flaky), LEADCTL_RETRY_ATTEMPTS: '12' };
      const runs = await Promise.all(
        Array.from({ length: 8 }, () => runBinary(['--verbose', 'systems', 'ls'], { env })),
      );
      for (const r of runs) {
        expect(r.stderr).not.toContain('Error:');
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout).length).toBeGreaterThan(0);
      }
      const stats = await flaky.stats();
      expect(stats.faults['503']).toBeGreaterThan(0);
      expect(runs.some((r) => r.stderr.includes('[http] retrying GET /api/v1/resources/management-systems'))).toBe(
        true,
      );
    } finally {
      await flaky.stop();
    }
  });

  it('waits out a rate limit (429 with Retry-After)', async () => {
    const limited = await startSandboxProcess(['--rate-limit', '1']);
    try {
      // Six runs share one request a second: enough attempts for the last of them, whatever the order.
      const env = { ...envFor(limited), LEADCTL_RETRY_ATTEMPTS: '12' };
      const runs = await Promise.all(Array.from({ length: 6 }, () => runBinary(['systems', 'ls'], { env })));
      for (const r of runs) expect(r.code).toBe(0);
      expect((await limited.stats()).faults['429']).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  });

  it('exits 5 with a clear message when the service keeps failing', async () => {
    const down = await startSandboxProcess(['--fail-rate', '1']);
    try {
      const r = await runBinary(['systems', 'ls'], { env: { ...envFor(down), LEADCTL_RETRY_ATTEMPTS: '3' } });
      expect(r.code).toBe(5);
      expect(errorLines(r.stderr)).toMatch(
        /Error: the service failed on GET \/api\/v1\/resources\/management-systems with HTTP 503.*after 3 attempts/,
      );
      expect(errorLines(r.stderr)).toMatch(/Hint: .*run the command again later/);
      expect(r.stdout).toBe('');
      expect(stderrDocument(r.stderr).error).toMatchObject({ code: 'service', exit_code: 5 });
      const asked = await runBinary(['systems', 'ls', '-o', 'json'], {
        env: { ...envFor(down), LEADCTL_RETRY_ATTEMPTS: '1' },
      });
      expect(JSON.parse(asked.stdout).error).toMatchObject({ code: 'service', exit_code: 5 });
    } finally {
      await down.stop();
    }
  });

  it('exits 5 with a clear message when nothing listens at the base URL', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const env = {
      ...envFor({ baseUrl: `http://127.0.0.1:${port}`, clientId: 'id', clientSecret: 'secret' }),
      LEADCTL_RETRY_MAX_WAIT_MS: '300',
    };
    const r = await runBinary(['systems', 'ls'], { env });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/could not reach the service .*connection refused/);
    expect(r.stderr).toContain(`http://127.0.0.1:${port}`);
  });
});
