/**
 * `auth status` against a flaky service (the sandbox's fault injection): answers of 503 are retried
 * within about 3 s, and a service that keeps answering errors is reported as answering, never as
 * unreachable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';
import { startSandboxInProcess, type TestSandbox } from '../helpers/sandbox.js';

const root = mkdtempSync(join(tmpdir(), 'leadctl-status-faults-'));
const sandboxes: TestSandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.stop()));
  rmSync(root, { recursive: true, force: true });
});

async function sandboxWith(options: Parameters<typeof startSandboxInProcess>[0]) {
  const s = await startSandboxInProcess(options);
  sandboxes.push(s);
  return s;
}

async function status(sandbox: TestSandbox, args: string[] = ['-o', 'json']) {
  const io = memoryIO({
    env: {
      // A config folder per sandbox: the tests run side by side, each with its own cached token.
      LEADCTL_CONFIG_DIR: join(root, 'config', new URL(sandbox.baseUrl).port),
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
      LEADCTL_RETRY_BASE_MS: '20',
    },
  });
  const started = performance.now();
  const code = await main([...args, 'auth', 'status'], io);
  return { code, stdout: io.stdoutText(), stderr: io.stderrText(), ms: performance.now() - started };
}

// Both tests mostly wait out the 503s' Retry-After: they wait side by side.
describe.concurrent('auth status under a flaky service', () => {
  it('at a 30% fault rate, says "unreachable" never, and fails only when every attempt got a 503', async () => {
    const sandbox = await sandboxWith({ failRate: 0.3, randomSeed: 20 });
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await status(sandbox);
      codes.push(r.code);
      const live = JSON.parse(r.stdout).live_check;
      expect(live.unreachable).toBeUndefined();
      expect(r.stderr).not.toMatch(/could not be reached/);
      if (r.code !== 0) {
        expect(r.code).toBe(5);
        expect(live).toMatchObject({ ok: false, answering_with_errors: true, error: { details: { status: 503 } } });
        expect(live.error.details.attempts).toBeGreaterThanOrEqual(3);
      } else {
        expect(live.ok).toBe(true);
      }
    }
    // One try each used to fail about 3 runs in 8; three tries fail about 1 in 37.
    expect(codes.filter((c) => c === 0).length).toBeGreaterThanOrEqual(6);
    const stats = await sandbox.stats();
    expect(JSON.stringify(stats)).toMatch(/503/);
  });

  it('reports a service answering 503 every time as answering with errors (exit 5), within about 3 s', async () => {
    const sandbox = await sandboxWith({ failRate: 1 });
    const r = await status(sandbox);
    expect(r.code).toBe(5);
    const live = JSON.parse(r.stdout).live_check;
    expect(live).toMatchObject({ ok: false, answering_with_errors: true });
    expect(live.unreachable).toBeUndefined();
    expect(live.error.message).toMatch(/HTTP 503/);
    expect(live.error.details.attempts).toBeGreaterThan(1);
    expect(r.stderr).toMatch(/^Error: the service answered, but with errors \(tried for about 3 s\): .*HTTP 503/m);
    expect(r.stderr).not.toMatch(/could not be reached|unreachable/);
    // Generous guard: the check's own bound is 3 s.
    expect(r.ms).toBeLessThan(20_000);

    const table = await status(sandbox, ['-o', 'table']);
    expect(table.code).toBe(5);
    expect(table.stdout).toMatch(/Live check: +not done: the service answered with errors \(HTTP 503, \d+ attempts\)/);
  });
});
