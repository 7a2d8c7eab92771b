import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startContractServer, type ContractServer, type ContractServerOptions } from '../helpers/contract-server.js';
import { memoryIO } from '../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';

/**
 * Honest batch results: a 2xx without per-record detail counts the records unconfirmed (never
 * accepted), and a request refused as a whole is narrated, counted as rejected, and sent again
 * by --resume.
 */

const MAPPING = fileURLToPath(new URL('../../fixtures/lms/mapping.json', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-batch-results-'));
const servers: ContractServer[] = [];

beforeAll(async () => {
  await writeExport({
    out: join(work, 'export'),
    customers: 4,
    seed: 9,
    paymentsPerCustomer: 2,
    shapes: ['denormalised'],
  });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(work, { recursive: true, force: true });
});

async function server(options: ContractServerOptions) {
  const s = await startContractServer(options);
  servers.push(s);
  return s;
}

async function run(s: ContractServer, argv: string[], state = 'state', extra: Record<string, string> = {}) {
  const io = memoryIO({
    cwd: work,
    env: {
      LEADCTL_BASE_URL: s.baseUrl,
      LEADCTL_CLIENT_ID: s.clientId,
      LEADCTL_CLIENT_SECRET: s.clientSecret,
      LEADCTL_CONFIG_DIR: join(work, 'config'),
      LEADCTL_STATE_DIR: join(work, state),
      ...extra,
    },
  });
  const code = await main(argv, io);
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

const batch = ['customers', 'batch', 'export/export.csv', '--mapping', MAPPING];

/** Every record read ends in exactly one place, unconfirmed included (docs/push.md, "Where every record ends"). */
function expectAccountedFor(summary: Record<string, Record<string, number>>) {
  for (const level of ['customers', 'loans', 'payments']) {
    const l = summary[level]!;
    expect(l.accepted! + l.rejected! + l.duplicates! + l.unconfirmed! + l.not_sent!, level).toBe(l.read);
  }
}

describe('a batch answered 2xx without per-record detail', () => {
  it.each(['empty-object', 'no-content', 'data-object'] as const)(
    '%s: every record is unconfirmed, at every level, none accepted',
    async (answer) => {
      const s = await server({ batchAnswer: answer });
      const res = await run(s, [...batch, '-o', 'json'], `state-${answer}`);
      expect(res.code).toBe(0);
      const summary = JSON.parse(res.stdout);
      expect(summary.customers).toMatchObject({ read: 4, sent: 4, accepted: 0, unconfirmed: 4, rejected: 0 });
      expect(summary.loans.unconfirmed).toBe(summary.loans.sent);
      expect(summary.loans.accepted).toBe(0);
      expect(summary.payments.unconfirmed).toBe(summary.payments.sent);
      expect(summary.payments.unconfirmed).toBeGreaterThan(0);
      expectAccountedFor(summary);
      expect(res.stderr).toMatch(/without a verdict per record \(4 customers unconfirmed\)/);
    },
  );

  it('the human summary says so, and not "everything was accepted"', async () => {
    const s = await server({});
    const res = await run(s, [...batch, '-o', 'table'], 'state-human');
    expect(res.code).toBe(0);
    expect(res.stdout).not.toMatch(/everything was accepted/);
    expect(res.stdout).toMatch(/did not confirm every record/);
    expect(res.stdout).toMatch(/unconfirmed/);
    expect(res.stdout).toMatch(/^customers\s+4\s+4\s+4\s+0\s+0\s+0\s+4\s+0$/m);
  });
});

describe('a batch refused as a whole (HTTP 422)', () => {
  it('is narrated, rejected in the rejects file, and sent again by --resume', async () => {
    let refuse = true;
    const s = await server({
      answer: (req) =>
        req.path.includes('/batches/') &&
        refuse &&
        (req.json as { customers: unknown[] }).customers.length &&
        JSON.stringify(req.json).includes('"customer_id":"1000001"')
          ? {
              status: 422,
              body: {
                message: 'The given data was invalid.',
                errors: { customers: ['The customers field is invalid.'] },
              },
            }
          : undefined,
    });
    const first = await run(
      s,
      [...batch, '--chunk-size', '2', '--concurrency', '1', '--rejects', 'refused.csv', '-o', 'json'],
      'state-refused',
    );
    expect(first.code).toBe(4);
    const summary = JSON.parse(first.stdout);
    expect(summary.customers).toMatchObject({
      read: 4,
      sent: 4,
      rejected: 2,
      unconfirmed: 2,
      accepted: 0,
      not_sent: 0,
    });
    expect(summary.requests).toMatchObject({ total: 2, sent: 2 });
    expectAccountedFor(summary);
    expect(first.stderr).toMatch(
      /request 1 refused by the service \(HTTP 422\): 2 customers.* rejected; --resume sends it again/,
    );
    expect(first.stderr).not.toMatch(/request 1 accepted/);
    const rejects = readFileSync(join(work, 'refused.csv'), 'utf8');
    expect(rejects).toMatch(/refused by the service with the whole request \(HTTP 422\)/);
    expect(rejects).not.toMatch(/skipped by the service/);

    refuse = false;
    const batchesBefore = s.batches.length;
    const second = await run(
      s,
      [...batch, '--chunk-size', '2', '--concurrency', '1', '--resume', '-o', 'json'],
      'state-refused',
    );
    expect(second.code).toBe(0);
    // Only the refused request goes again; the other was acknowledged (unconfirmed) and stays so.
    expect(s.batches.length - batchesBefore).toBe(1);
    const resumed = JSON.parse(second.stdout);
    expect(resumed.requests).toMatchObject({ sent: 1, acknowledged_before: 1 });
    expect(resumed.customers).toMatchObject({ read: 4, unconfirmed: 4, rejected: 0, accepted: 0 });
    expectAccountedFor(resumed);
  });
});

describe('a run that ends in an error after some rejects', () => {
  it('prints the rejects line first, then the error and its hint together, last', async () => {
    const s = await server({
      answer: (req, n) =>
        req.path.includes('/batches/')
          ? (req.json as { customers: { customer_id: string }[] }).customers.some((c) => c.customer_id === '1000001')
            ? { status: 422, body: { message: 'The given data was invalid.', errors: { customers: ['invalid'] } } }
            : { status: 503, body: { message: `down ${n}` } }
          : undefined,
    });
    const r = await run(
      s,
      [...batch, '--chunk-size', '2', '--concurrency', '1', '--rejects', 'ordered.csv', '-o', 'json'],
      'state-ordered',
      // Short waits between the retries of the 503s.
      { LEADCTL_RETRY_BASE_MS: '5', LEADCTL_RETRY_MAX_DELAY_MS: '20' },
    );
    expect(r.code).toBe(5);
    // The document carries the same next step as the log's hint.
    const next = JSON.parse(r.stdout).next_step as string;
    expect(next).toMatch(/--resume/);
    expect(r.stderr).toContain(`Hint: ${next}`);
    const lines = r.stderr.trimEnd().split('\n');
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/rejected record line\(s\) written to/)).toBeGreaterThanOrEqual(0);
    expect(at(/rejected record line\(s\) written to/)).toBeLessThan(at(/^Error: /));
    expect(lines.slice(-2).map((l) => l.slice(0, 6))).toEqual(['Error:', 'Hint: ']);
  });
});
