import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startHostileServer, type HostileServer, type HostileServerOptions } from '../helpers/hostile-server.js';
import { measuredRun } from '../helpers/measured-run.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { acknowledged, MAPPING, pushEnv, sleep } from './push-helpers.js';

/**
 * The built binary on hostile ground (test/helpers/hostile-server.ts in front of a sandbox):
 * a 2xx that is not a well-formed answer acknowledges nothing, so neither the journal nor the
 * delta record holds its customers and the next run sends them; an answer that trickles, never
 * starts or never ends is cut off within --timeout (or 2 s after SIGTERM/SIGINT) in bounded memory.
 */

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-hostile-'));
const exportDir = join(work, 'export');
const CUSTOMERS = 30;
/** Peak memory a run may reach, whatever it is answered (docs/guarantees-network.md). */
const RSS_BOUND_MB = 300;
let sandbox: TestSandbox;
const servers: HostileServer[] = [];

beforeAll(async () => {
  sandbox = await startSandboxProcess();
  await writeExport({
    out: exportDir,
    customers: CUSTOMERS,
    seed: 23,
    paymentsPerCustomer: 2,
    shapes: ['denormalised'],
  });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function hostile(options: HostileServerOptions): Promise<HostileServer> {
  const s = await startHostileServer({ upstream: sandbox.baseUrl, ...options });
  servers.push(s);
  return s;
}

/** The sandbox's credentials at the hostile server's address, two attempts per request, a fresh state folder. */
function envAt(server: HostileServer): Record<string, string> {
  return {
    ...pushEnv({ baseUrl: server.baseUrl, clientId: sandbox.clientId, clientSecret: sandbox.clientSecret }),
    LEADCTL_RETRY_ATTEMPTS: '2',
  };
}

const batch = (...extra: string[]) => [
  'customers',
  'batch',
  'export.csv',
  '--mapping',
  MAPPING,
  '--chunk-size',
  '10',
  '--concurrency',
  '1',
  '--changed-only',
  '-o',
  'json',
  ...extra,
];

/** Customers the delta record remembers as acknowledged (0 when there is no record yet). */
function remembered(record: string | null): number {
  if (!record || !existsSync(record)) return 0;
  const db = new Database(record, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM customers').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('customers batch --changed-only, answered 2xx with something that is not an answer', () => {
  it.each([
    ['html-200', '--resume'],
    ['empty-200', undefined],
    ['truncated-json-200', '--resume'],
    ['wrong-shape-200', undefined],
    ['text-plain-200', '--resume'],
  ] as const)(
    '%s: exit 5, nothing journaled or remembered; the next run (%s) against a healthy service sends them',
    async (mode, next) => {
      const server = await hostile({ mode });
      const env = envAt(server);
      const stateDir = env.LEADCTL_STATE_DIR!;

      const first = await runBinary(batch(), { env, cwd: exportDir });
      expect(first.code, first.stderr).toBe(5);
      const summary = JSON.parse(first.stdout);
      expect(summary).toMatchObject({ status: 'service_unavailable', exit_code: 5 });
      expect(summary.customers).toMatchObject({ read: CUSTOMERS, accepted: 0, unconfirmed: 0, not_sent: CUSTOMERS });
      expect(summary.accounting.balanced).toBe(true);
      expect(summary.retries).toBe(1);
      expect(first.stderr).toMatch(/is not a well-formed answer of the service \(HTTP 200, /);
      expect(first.stderr).toMatch(/captive portal/);
      // The first request, tried twice; nothing after it.
      expect(server.faulted()).toHaveLength(2);
      expect(acknowledged(stateDir)).toBe(0);
      expect(remembered(summary.delta.record)).toBe(0);

      server.mode = 'pass-through';
      const second = await runBinary(next ? batch(next) : batch(), { env, cwd: exportDir });
      expect(second.code, second.stderr).toBe(0);
      const healed = JSON.parse(second.stdout);
      expect(healed.customers).toMatchObject({ read: CUSTOMERS, sent: CUSTOMERS, accepted: CUSTOMERS, unchanged: 0 });
      expect(acknowledged(stateDir)).toBe(3);
      expect(remembered(healed.delta.record)).toBe(CUSTOMERS);

      if (mode === 'html-200') {
        const third = await runBinary(batch(), { env, cwd: exportDir });
        expect(third.code, third.stderr).toBe(0);
        expect(JSON.parse(third.stdout).customers).toMatchObject({ sent: 0, unchanged: CUSTOMERS });
      }
    },
  );
});

describe('every command: a 2xx that is not an answer exits 5, never 1, never success', () => {
  it.each([
    [['systems', 'ls', '-o', 'json']],
    [['lists', 'ls', '-o', 'json']],
    [['leads', 'ids', '--date', '2026-01-05', '-o', 'json']],
    [['dry-run', '--email', 'maria.gonzalez@example.com', '-o', 'json']],
  ])('%j', async (args) => {
    const server = await hostile({ mode: 'html-200' });
    const res = await runBinary(args, { env: envAt(server) });
    expect(res.code, res.stderr).toBe(5);
    expect(res.stderr).toMatch(/not a well-formed answer of the service \(HTTP 200, content type text\/html/);
  });

  it('customers push (a single upsert)', async () => {
    const server = await hostile({ mode: 'wrong-shape-200' });
    const customer = {
      customer_id: 'H-1',
      lead_loan: { loan_id: 'HL-1', lead_id: 500101, loan_amount: 50000, applied_at: '2026-03-06T16:15:00Z' },
    };
    const res = await runBinary(['customers', 'push', '-', '-o', 'json'], {
      env: envAt(server),
      input: JSON.stringify(customer),
    });
    expect(res.code, res.stderr).toBe(5);
    expect(JSON.parse(res.stdout).customers).toMatchObject({ read: 1, accepted: 0, not_sent: 1 });
  });

  it('auth login, when the token endpoint answers with a portal page', async () => {
    const server = await hostile({ mode: 'html-200', faultToken: true });
    const env = envAt(server);
    const res = await runBinary(
      ['auth', 'login', '--base-url', server.baseUrl, '--client-id', sandbox.clientId, '--client-secret-stdin'],
      {
        env: { HOME: env.HOME!, LEADCTL_CONFIG_DIR: env.LEADCTL_CONFIG_DIR!, LEADCTL_RETRY_ATTEMPTS: '2' },
        input: `${sandbox.clientSecret}\n`,
      },
    );
    expect(res.code, res.stderr).toBe(5);
    expect(res.stderr).toMatch(/POST \/oauth\/token is not a well-formed answer/);
    expect(res.stderr).not.toContain(sandbox.clientSecret);
  });
});

describe("the service's words on a terminal", () => {
  // Nothing that acts on a terminal: ESC, CR, BEL (and the other C0 controls but the line break).
  const acting = /[\u0000-\u0009\u000b-\u001f\u007f]/;

  it('a message with escape sequences is shown escaped and cut short (systems ls, exit 5)', async () => {
    const server = await hostile({ mode: 'escapes-500' });
    const res = await runBinary(['systems', 'ls'], { env: { ...envAt(server), LEADCTL_RETRY_ATTEMPTS: '1' } });
    expect(res.code, res.stderr).toBe(5);
    expect(res.stderr).not.toMatch(acting);
    const { message } = JSON.parse(res.stderr).error;
    expect(message).toContain('\\x1b[2J\\x1b[31mCLEARED\\x1b[0m\\rOVERWRITE\\x1b]0;title\\x07');
    expect(message).not.toMatch(acting);
    expect(res.stderr.length).toBeLessThan(5_000);
  });

  it("a record's reason with escape sequences: escaped in the summary table and in the rejects file (customers push)", async () => {
    const server = await hostile({ mode: 'escapes-422' });
    const customer = {
      customer_id: 'H-2',
      lead_loan: { loan_id: 'HL-2', lead_id: 500101, loan_amount: 50000, applied_at: '2026-03-06T16:15:00Z' },
    };
    const cwd = mkdtempSync(join(work, 'escapes-'));
    const res = await runBinary(['customers', 'push', '-', '--rejects', 'rejects.csv', '-o', 'table'], {
      env: envAt(server),
      input: JSON.stringify(customer),
      cwd,
    });
    expect(res.code, res.stderr).toBe(4);
    expect(res.stdout).toContain('\\x1b]0;title\\x07');
    expect(res.stdout + res.stderr).not.toMatch(acting);
    expect(readFileSync(join(cwd, 'rejects.csv'), 'utf8')).not.toMatch(/[\u001b\u0007\r]/);
  });
});

// Each test has its own server and state folder, and mostly waits out a timeout or a grace:
// they wait side by side.
describe.concurrent('answers that do not end, or never start', () => {
  it('a body trickling a byte every 2 s: cut off at --timeout, retried, exit 5, in bounded memory', async () => {
    const server = await hostile({ mode: 'trickle' });
    const env = envAt(server);
    const res = await measuredRun(batch('--timeout', '3'), { env, cwd: exportDir }).done;
    expect(res.code, res.stderr).toBe(5);
    expect(res.stderr).toMatch(/timed out reading the answer \(UND_ERR_BODY_TIMEOUT\) after 2 attempts/);
    expect(server.faulted()).toHaveLength(2);
    expect(acknowledged(env.LEADCTL_STATE_DIR!)).toBe(0);
    // Two attempts of 3 s: a generous guard, far below "never".
    expect(res.ms).toBeLessThan(40_000);
    expect(res.maxRssMb).toBeLessThan(RSS_BOUND_MB);
  });

  it('headers that never come: the same deadline, exit 5', async () => {
    const server = await hostile({ mode: 'slow-headers' });
    const res = await runBinary(batch('--timeout', '2'), { env: envAt(server), cwd: exportDir });
    expect(res.code, res.stderr).toBe(5);
    expect(res.stderr).toMatch(/timed out waiting for the answer \(UND_ERR_HEADERS_TIMEOUT\) after 2 attempts/);
  });

  it.each([true, false])(
    'a 2 GiB answer (Content-Length given: %s) is refused at 64 MiB without reading it whole, once, exit 5',
    async (declared) => {
      const server = await hostile({ mode: 'huge', hugeDeclared: declared });
      const res = await measuredRun(batch(), { env: envAt(server), cwd: exportDir }).done;
      expect(res.code, res.stderr).toBe(5);
      expect(res.stderr).toMatch(
        /is larger than leadctl reads: .*the limit is 64 MiB per answer; not read, not retried/,
      );
      expect(server.faulted()).toHaveLength(1);
      expect(res.maxRssMb).toBeLessThan(RSS_BOUND_MB);
      expect(JSON.parse(res.stdout).customers).toMatchObject({ accepted: 0, not_sent: CUSTOMERS });
    },
  );
});

describe.concurrent('a signal while an answer hangs', () => {
  it.each([
    ['SIGTERM', 'trickle', 143],
    ['SIGINT', 'slow-headers', 130],
  ] as const)(
    '%s during a %s answer ends the run within about 2 s, with the summary and exit %i',
    async (signal, mode, code) => {
      const server = await hostile({ mode });
      const env = envAt(server);
      // The default --timeout (60 s): only the signal can end this run early.
      const run = measuredRun(batch(), { env, cwd: exportDir });
      while (server.faulted().length === 0) await sleep(50);
      await sleep(300);
      run.kill(signal);
      const res = await run.done;
      expect(res.code, res.stderr).toBe(code);
      const summary = JSON.parse(res.stdout);
      expect(summary).toMatchObject({ status: 'interrupted', exit_code: code });
      // Nothing read is taken as sent; a streamed file is not read past the signal.
      expect(summary.customers).toMatchObject({ sent: 0, accepted: 0, unconfirmed: 0 });
      expect(summary.customers.not_sent).toBe(summary.customers.read);
      expect(acknowledged(env.LEADCTL_STATE_DIR!)).toBe(0);
      // The grace for requests in flight is 1 s; a generous guard (the old 30 s grace fails it).
      expect(res.msAfterKill).toBeLessThan(8_000);
      // The lock is released: the next run is not refused (exit 7).
      server.mode = 'pass-through';
      const next = await runBinary(batch('--resume'), { env, cwd: exportDir });
      expect(next.code, next.stderr).toBe(0);
    },
  );
});
