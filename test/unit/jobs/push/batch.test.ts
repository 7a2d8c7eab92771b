import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AuthError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceError,
  ValidationError,
} from '../../../../src/errors.js';
import type { ApiClient } from '../../../../src/api/client.js';
import { runBatchPush } from '../../../../src/jobs/push/batch.js';
import { PushLock } from '../../../../src/jobs/push/lock.js';
import type { PushEvent } from '../../../../src/jobs/push/progress.js';
import { renderSummary } from '../../../../src/jobs/push/summary.js';
import { environment, fakeClient, request } from '../../../helpers/batch-push.js';
import { memoryIO } from '../../../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { batchShapeLines, writeExport } from '../../../../fixtures/lms/generate.mjs';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-batch-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const readRejects = (path: string) => parse(readFileSync(path, 'utf8'), { columns: true }) as Record<string, string>[];

describe('customers batch on the fixture export', () => {
  it('validate-only: counts every record and lists exactly the broken rows', async () => {
    const io = memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-v') } });
    const rejectsPath = join(work, 'validate-rejects.csv');
    const { client, bodies } = fakeClient();
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: 'mapping.json',
        rejectsPath,
        validateOnly: true,
      }),
      environment(io, client),
    );
    expect(bodies).toHaveLength(0);
    expect(outcome.exitCode).toBe(4);
    const s = outcome.summary;
    expect(s.status).toBe('validated_with_rejects');
    expect(s.customers).toMatchObject({ read: 10, valid: 9, rejected: 1, duplicates: 0, sent: 0 });
    expect(s.loans).toMatchObject({ read: 12, valid: 10, rejected: 2 });
    expect(s.payments).toMatchObject({ read: 24, valid: 14, rejected: 9, duplicates: 1 });
    expect(s.rows_read).toBe(25);
    const rows = readRejects(rejectsPath);
    expect(new Set(rows.map((r) => Number(r.row)))).toEqual(new Set([2, 3, 7, 8, 10, 11, 15, 21, 24, 26]));
    expect(rows.find((r) => r.payment_id === 'T-5008')).toMatchObject({
      source_file: 'export.csv',
      customer_id: '100104',
      loan_id: 'LN-1005',
      field: 'payment_amount',
    });
  });

  it('sends the valid records and merges what the service skipped into the rejects', async () => {
    const io = memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-s') } });
    const rejectsPath = join(work, 'send-rejects.csv');
    const { client, bodies } = fakeClient({
      answer: (_n, body) => {
        const c = body.customers.findIndex((x) => x.customer_id === '100102');
        return {
          skipped: [
            {
              path: `customers.${c}.loans.0.payments.2`,
              id: 'T-5005',
              errors: ['payment_amount: too large for this loan'],
            },
          ],
        };
      },
    });
    const outcome = await runBatchPush(
      request({
        inputs: [
          { path: 'loans.csv', role: 'loans' },
          { path: 'payments.csv', role: 'payments' },
        ],
        mappingPath: 'mapping.json',
        rejectsPath,
      }),
      environment(io, client),
    );
    expect(outcome.exitCode).toBe(4);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]!.customers.map((c) => c.customer_id)).toEqual([
      '100101',
      '100102',
      '100103',
      '100104',
      '100105',
      '100106',
      '100107',
      '100109',
      '100110',
    ]);
    expect(outcome.summary.payments).toMatchObject({
      valid: 14,
      sent: 14,
      accepted: 13,
      rejected: 10,
      duplicates: 1,
      not_sent: 0,
    });
    for (const level of ['customers', 'loans', 'payments'] as const) {
      const l = outcome.summary[level];
      expect(l.read, level).toBe(l.accepted + l.rejected + l.duplicates + l.not_sent);
    }
    const skipped = readRejects(rejectsPath).find((r) => r.payment_id === 'T-5005');
    expect(skipped).toMatchObject({
      source_file: 'payments.csv',
      field: 'payment_amount',
      reason: 'skipped by the service: too large for this loan',
    });
  });
});

describe('interruptions and --resume', () => {
  async function exportOf(customers: number) {
    const out = join(work, `gen-${customers}`);
    await writeExport({ out, customers, seed: 11, paymentsPerCustomer: 3, shapes: ['denormalised'] });
    return out;
  }

  it('stops when the service stays down, keeps the rest for --resume, and resume sends only the rest', async () => {
    const dir = await exportOf(500);
    const env = { LEADCTL_STATE_DIR: join(work, 'state-r') };
    const down = fakeClient({
      answer: (n) =>
        n >= 2
          ? new ServiceError('service unavailable after 6 attempts', 503, {
              details: { attempts: 6 },
              http: { attempts: 6 },
            })
          : 'ok',
    });
    const first = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 1,
      }),
      environment(memoryIO({ cwd: dir, env }), down.client),
    );
    expect(first.exitCode).toBe(5);
    expect(first.summary.status).toBe('service_unavailable');
    expect(first.summary.customers).toMatchObject({ read: 500, accepted: 100, not_sent: 400, rejected: 0 });
    expect(first.summary.rejects_file).toBeNull();
    // The request that finally failed made 6 attempts: its 5 retries count too.
    expect(first.summary.retries).toBe(5);

    const rest = fakeClient();
    const second = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 3,
        resume: true,
      }),
      environment(memoryIO({ cwd: dir, env }), rest.client),
    );
    expect(second.exitCode).toBe(0);
    expect(second.summary.resumed).toBe(true);
    expect(second.summary.requests).toMatchObject({ total: 10, acknowledged_before: 2, sent: 8 });
    expect(second.summary.customers).toMatchObject({ read: 500, accepted: 500, not_sent: 0 });
    const sentIds = [...down.bodies, ...rest.bodies].flatMap((b) => b.customers.map((c) => c.customer_id));
    expect(sentIds).toHaveLength(500);
    expect(new Set(sentIds).size).toBe(500);

    const third = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        resume: true,
      }),
      environment(memoryIO({ cwd: dir, env }), fakeClient().client),
    );
    expect(third.summary.requests).toMatchObject({ sent: 0, acknowledged_before: 10 });
  });

  it('a payment the service skipped before the interruption is reported again on --resume, with its id', async () => {
    const dir = await exportOf(200);
    const env = { LEADCTL_STATE_DIR: join(work, 'state-skip-resume') };
    const run = (client: ReturnType<typeof fakeClient>['client'], resume: boolean, rejectsPath: string) =>
      runBatchPush(
        request({
          inputs: [{ path: 'export.csv', role: 'auto' }],
          mappingPath: join(fixtures, 'mapping.json'),
          chunkSize: 50,
          concurrency: 1,
          resume,
          rejectsPath,
        }),
        environment(memoryIO({ cwd: dir, env }), client),
      );
    let skippedId = '';
    const down = fakeClient({
      answer: (n, body) => {
        if (n >= 1) return new ServiceError('service unavailable after 6 attempts', 503, { details: { attempts: 6 } });
        const sent = body.customers[3] as unknown as { loans: { payments: { payment_id: string }[] }[] };
        skippedId = sent.loans[0]!.payments[1]!.payment_id;
        return {
          skipped: [{ path: 'customers.3.loans.0.payments.1', id: skippedId, errors: ['principal: too large'] }],
        };
      },
    });
    const first = await run(down.client, false, join(work, 'skip-resume-1.csv'));
    expect(first.exitCode).toBe(5);
    expect(skippedId).not.toBe('');
    const second = await run(fakeClient().client, true, join(work, 'skip-resume-2.csv'));
    expect(second.summary.requests).toMatchObject({ acknowledged_before: 1, sent: 3 });
    expect(second.summary.payments.rejected).toBe(1);
    const rejects = readRejects(join(work, 'skip-resume-2.csv'));
    expect(rejects).toHaveLength(1);
    expect(rejects[0]).toMatchObject({ payment_id: skippedId, reason: 'skipped by the service: too large' });
  });

  it('stages a file that turns out unsorted after requests were sent, and sends everything again from the staging', async () => {
    const dir = await exportOf(300);
    const path = join(dir, 'export.csv');
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    // The last row repeats the first data row: customer 1000001 again, after everyone else.
    writeFileSync(path, [...lines, lines[1]].join('\n') + '\n');
    const fake = fakeClient();
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 2,
      }),
      environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(work, 'state-u') } }), fake.client),
    );
    expect(outcome.summary.notes?.[0]).toMatch(
      /export\.csv is not sorted by customer .*the 5 request\(s\) already sent were sent again/,
    );
    expect(outcome.summary.requests).toMatchObject({ total: 6, sent: 6 });
    expect(outcome.summary.customers).toMatchObject({ read: 300, accepted: 300 });
    expect(outcome.summary.payments.duplicates).toBe(1);
    const staged = fake.bodies.slice(-6).flatMap((b) => b.customers.map((c) => c.customer_id));
    expect(staged).toEqual([...staged].sort());
    expect(new Set(staged).size).toBe(300);
  });

  it('on SIGINT sends nothing new, lets the request in flight finish, and exits 130', async () => {
    const dir = await exportOf(300);
    const io = memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(work, 'state-i') } });
    let release!: () => void;
    const gate = new Promise<'ok'>((resolve) => (release = () => resolve('ok')));
    const fake = fakeClient({
      answer: (n) => {
        if (n === 1) {
          io.sendSignal('SIGINT');
          setTimeout(release, 50);
          return gate;
        }
        return 'ok';
      },
    });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 1,
      }),
      environment(io, fake.client),
    );
    expect(outcome.exitCode).toBe(130);
    expect(outcome.summary.status).toBe('interrupted');
    expect(fake.bodies).toHaveLength(2);
    // A sorted file streams: after a signal the rest is not even read (it waits for --resume).
    expect(outcome.summary.customers).toMatchObject({ accepted: 100, rejected: 0 });
    expect(outcome.summary.customers.read).toBeLessThan(300);
    expect(outcome.summary.customers.read).toBe(
      outcome.summary.customers.accepted + outcome.summary.customers.not_sent,
    );
    expect(outcome.summary.requests.sent + outcome.summary.requests.not_sent).toBe(outcome.summary.requests.total);
    expect(outcome.summary.notes).toContain('the rest of the export was not read: rerun with --resume to continue');
  });

  it('ends with a summary (status failed, exit 1), the journal kept and the lock released, when the 2nd request fails unexpectedly', async () => {
    const dir = await exportOf(120);
    const env = { LEADCTL_STATE_DIR: join(work, 'state-f') };
    const fake = fakeClient({
      answer: (n) => (n === 1 ? new TypeError("Cannot read properties of undefined (reading 'data')") : 'ok'),
    });
    const args = {
      inputs: [{ path: 'export.csv', role: 'auto' as const }],
      mappingPath: join(fixtures, 'mapping.json'),
      chunkSize: 50,
      concurrency: 1,
    };
    const outcome = await runBatchPush(request(args), environment(memoryIO({ cwd: dir, env }), fake.client));
    expect(outcome.exitCode).toBe(1);
    expect(outcome.summary).toMatchObject({
      status: 'failed',
      exit_code: 1,
      error: { code: 'unexpected', message: "Cannot read properties of undefined (reading 'data')" },
    });
    expect(outcome.summary.customers).toMatchObject({ read: 120, accepted: 50, not_sent: 70 });
    expect(outcome.summary.requests).toMatchObject({ sent: 1 });
    expect(renderSummary(outcome.summary)).toContain('customers batch: failed: ');
    expect(outcome.summary.journal).not.toBeNull();
    expect(existsSync(outcome.summary.journal!)).toBe(true);

    // The lock is free and the journal holds the acknowledged request: --resume sends only the rest.
    const rest = fakeClient();
    const second = await runBatchPush(
      request({ ...args, resume: true }),
      environment(memoryIO({ cwd: dir, env }), rest.client),
    );
    expect(second.exitCode).toBe(0);
    expect(second.summary.requests).toMatchObject({ acknowledged_before: 1, sent: 2 });
    expect(rest.bodies.flatMap((b) => b.customers)).toHaveLength(70);
  });

  it("keeps an unexpected error's own exit code and hint in the summary", async () => {
    const dir = await exportOf(120);
    const odd = new NotFoundError('not found: POST /api/v1/loan-performance/batches/customers (HTTP 404)', {
      hint: 'check the base URL',
    });
    const fake = fakeClient({ answer: (n) => (n === 1 ? odd : 'ok') });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 1,
      }),
      environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(work, 'state-g') } }), fake.client),
    );
    expect(outcome.exitCode).toBe(odd.exitCode);
    expect(outcome.summary).toMatchObject({
      status: 'failed',
      exit_code: odd.exitCode,
      error: { code: odd.code, message: odd.message, hint: 'check the base URL' },
    });
    expect(outcome.summary.customers).toMatchObject({ accepted: 50, not_sent: 70 });
  });

  it('stops with exit 3 when the credentials are refused mid-run', async () => {
    const dir = await exportOf(120);
    const fake = fakeClient({
      answer: (n) => (n === 1 ? new AuthError('the service refused the access token') : 'ok'),
    });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 1,
      }),
      environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(work, 'state-a') } }), fake.client),
    );
    expect(outcome.exitCode).toBe(3);
    expect(outcome.summary.customers).toMatchObject({ accepted: 50, not_sent: 70 });
  });

  it('counts the unread rest (duplicates included) as not sent when the service goes down, so read adds up', async () => {
    const fake = fakeClient({
      answer: (n) => (n >= 1 ? new ServiceError('service unavailable after 6 attempts', 503) : 'ok'),
    });
    const io = memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-d') } });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: 'mapping.json',
        rejectsPath: join(work, 'down-rejects.csv'),
        chunkSize: 2,
        concurrency: 1,
      }),
      environment(io, fake.client),
    );
    expect(outcome.exitCode).toBe(5);
    // The same counts as the validate-only run of this export reads.
    expect(outcome.summary.customers.read).toBe(10);
    expect(outcome.summary.loans.read).toBe(12);
    expect(outcome.summary.payments.read).toBe(24);
    for (const level of ['customers', 'loans', 'payments'] as const) {
      const l = outcome.summary[level];
      expect(l.read, level).toBe(l.accepted + l.rejected + l.duplicates + l.not_sent);
    }
    for (const line of readRejects(join(work, 'down-rejects.csv')))
      expect(line.reason).not.toMatch(/unavailable|not sent: .*service/);
  });
});

describe('a request the service refuses as too large (413)', () => {
  it('is split in halves until it fits; skips in a second half land on the right rows; a lone customer too large is rejected', async () => {
    const out = join(work, 'gen-413');
    await writeExport({ out, customers: 120, seed: 3, paymentsPerCustomer: 2, shapes: ['denormalised'] });
    let skippedId: string | undefined;
    let tooLargeId: string | undefined;
    const fake = fakeClient({
      answer: (n, body) => {
        if (n === 0) {
          skippedId = body.customers[40]!.customer_id;
          tooLargeId = body.customers[10]!.customer_id;
        }
        if (body.customers.length > 20 || body.customers.some((c) => c.customer_id === tooLargeId))
          return new PayloadTooLargeError('the request body is too large');
        const i = body.customers.findIndex((c) => c.customer_id === skippedId);
        return i < 0
          ? 'ok'
          : { skipped: [{ path: `customers.${i}`, id: skippedId!, errors: ['customer_id: refused for this test'] }] };
      },
    });
    const rejectsPath = join(work, '413-rejects.csv');
    const io = memoryIO({ cwd: out, env: { LEADCTL_STATE_DIR: join(work, 'state-413') } });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        rejectsPath,
        chunkSize: 50,
        concurrency: 2,
      }),
      environment(io, fake.client),
    );
    expect(outcome.exitCode).toBe(4);
    expect(outcome.summary.customers).toMatchObject({ read: 120, sent: 120, accepted: 118, rejected: 2, not_sent: 0 });
    const stored = fake.bodies.flatMap((b) => b.customers.map((c) => c.customer_id));
    expect(new Set(stored).size).toBe(119);
    expect(stored).not.toContain(tooLargeId);
    expect(outcome.summary.notes?.filter((n) => /HTTP 413/.test(n))).toHaveLength(1);

    const lines = readFileSync(join(out, 'export.csv'), 'utf8').split('\n');
    const rejects = readRejects(rejectsPath);
    const skipped = rejects.filter((r) => r.field === 'customer_id');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({
      customer_id: skippedId,
      reason: 'skipped by the service: refused for this test',
    });
    expect(lines[Number(skipped[0]!.row) - 1]!.startsWith(`${skippedId},`)).toBe(true);
    // Its payments are rejected with it, each naming the id it was sent with (read back from the
    // half's body) and the row it came from.
    const sent = fake.bodies.flatMap((b) => b.customers).find((c) => c.customer_id === skippedId)!;
    const sentIds = sent.loans.flatMap((l) => (l.payments as { payment_id: string }[]).map((p) => p.payment_id));
    const paymentRejects = rejects.filter((r) => r.customer_id === skippedId && r.payment_id !== '');
    expect(sentIds.length).toBeGreaterThan(0);
    expect(paymentRejects.map((r) => r.payment_id).sort()).toEqual([...sentIds].sort());
    for (const r of paymentRejects) expect(lines[Number(r.row) - 1]!.split(',')).toContain(r.payment_id);
    const tooLarge = rejects.filter((r) => r.customer_id === tooLargeId && r.loan_id === '');
    expect(tooLarge).toHaveLength(1);
    expect(tooLarge[0]!.reason).toMatch(/too large/);
  });
});

describe('an export still being written', () => {
  it('refuses an input that changed while the push read it (exit 2), and with --allow-changing-input says so (note and warning)', async () => {
    const out = join(work, 'growing');
    await writeExport({ out, customers: 200, seed: 5, paymentsPerCustomer: 2, shapes: ['denormalised'] });
    const file = join(out, 'export.csv');
    const args = () =>
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 1,
      });
    const warnings: string[] = [];
    const envOf = (client: ApiClient, state: string, allowChanging = false) => ({
      ...environment(
        { ...memoryIO({ cwd: out, env: { LEADCTL_STATE_DIR: join(work, state) } }), input: { allowChanging } },
        client,
      ),
      warn: (line: string) => warnings.push(line),
    });

    const steady = await runBatchPush(args(), envOf(fakeClient().client, 'state-steady'));
    expect(steady.summary.notes ?? []).not.toContainEqual(expect.stringContaining('changed while it was read'));

    // The LMS appends more rows while the first request is in flight.
    const tail = readFileSync(file, 'utf8').trimEnd().split('\n').pop()!;
    const growing = fakeClient({ answer: (n) => (n === 0 && appendFileSync(file, tail + '\n'), 'ok') });
    await expect(runBatchPush(args(), envOf(growing.client, 'state-growing'))).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('export.csv: changed while it was read'),
      hint: expect.stringContaining('--allow-changing-input'),
    });

    const allowed = fakeClient({ answer: (n) => (n === 0 && appendFileSync(file, tail + '\n'), 'ok') });
    const grown = await runBatchPush(args(), envOf(allowed.client, 'state-allowed', true));
    expect(grown.summary.notes).toContainEqual(expect.stringContaining('export.csv changed while it was read'));
    expect(warnings).toContainEqual(
      expect.stringMatching(/^Warning: export\.csv changed while it was read .*rerun once the export is complete/),
    );
  });
});

describe('an empty export', () => {
  it('exit 2 naming the file, with what to check next', async () => {
    const dir = mkdtempSync(join(work, 'empty-'));
    writeFileSync(join(dir, 'export.csv'), '');
    const run = runBatchPush(
      request({ inputs: [{ path: 'export.csv', role: 'auto' }], mappingPath: join(fixtures, 'mapping.json') }),
      environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(dir, 'state') } }), fakeClient().client),
    );
    await expect(run).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('export.csv: is empty (no header row)'),
      hint: expect.stringContaining('has not finished'),
    });
  });
});

describe('the run around the sending: lock, credentials, journal, events', () => {
  const fixtureRun = (over: Partial<Parameters<typeof request>[0]> = {}) =>
    request({ inputs: [{ path: 'export.csv', role: 'auto' }], mappingPath: 'mapping.json', ...over });
  const lines = (path: string) =>
    readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; status?: number; reason?: string; chunk?: number });

  it('a check-only run takes no lock, asks for no token and opens no journal; it says what it would send', async () => {
    const state = join(work, 'state-vo');
    const held = PushLock.acquire(state, 'default', 'customers batch', new Date());
    const events: PushEvent[] = [];
    let asked = 0;
    const env = {
      ...environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fakeClient().client, events),
      api: async () => {
        asked++;
        return fakeClient().client;
      },
    };
    const outcome = await runBatchPush(
      fixtureRun({ validateOnly: true, rejectsPath: join(work, 'vo.csv'), chunkSize: 4 }),
      env,
    );
    held.release();
    expect(asked).toBe(0);
    expect(outcome.summary.journal).toBeNull();
    expect(existsSync(join(state, 'journals'))).toBe(false);
    const requests = events.filter((e) => e.type === 'request');
    expect(requests.map((e) => e.type === 'request' && [e.outcome, e.customers])).toEqual([
      ['would-send', 4],
      ['would-send', 4],
      ['would-send', 1],
    ]);
    expect(outcome.summary.requests).toMatchObject({ total: 3, sent: 0 });
    // The fixture is not sorted: staged, with a note but nothing sent again.
    expect(outcome.summary.notes).toEqual([
      'export.csv is not sorted by customer (row 5: customer 100101 comes after 100105); it was staged instead',
    ]);
  });

  it('a push while another holds the profile: exit 7, nothing sent, the other lock left alone', async () => {
    const state = join(work, 'state-locked');
    const held = PushLock.acquire(state, 'default', 'customers batch', new Date());
    const fake = fakeClient();
    const run = runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'locked.csv') }),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fake.client),
    );
    await expect(run).rejects.toMatchObject({ exitCode: 7 });
    expect(fake.bodies).toHaveLength(0);
    expect(existsSync(held.path)).toBe(true);
    held.release();
  });

  it('credentials refused before reading: exit 3, nothing sent, and the lock released', async () => {
    const state = join(work, 'state-token');
    const fake = fakeClient();
    const refusing = {
      ...fake.client,
      checkCredentials: async () => {
        throw new AuthError('the service refused the credentials');
      },
    } as unknown as ApiClient;
    await expect(
      runBatchPush(
        fixtureRun({ rejectsPath: join(work, 'token.csv') }),
        environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), refusing),
      ),
    ).rejects.toMatchObject({ exitCode: 3 });
    expect(fake.bodies).toHaveLength(0);
    expect(existsSync(join(state, 'locks', 'default.lock'))).toBe(false);
  });

  it('a request refused as a whole: written to the journal as refused, rejected, and sent again by --resume', async () => {
    const state = join(work, 'state-refused');
    const events: PushEvent[] = [];
    const refusing = fakeClient({
      answer: (n) => (n === 1 ? new ValidationError('customers.0.loans: bad', {}, { http: { status: 422 } }) : 'ok'),
    });
    const first = await runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'refused.csv'), chunkSize: 4, concurrency: 1 }),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), refusing.client, events),
    );
    expect(first.exitCode).toBe(4);
    expect(first.summary.customers).toMatchObject({ sent: 9, accepted: 5, rejected: 5 });
    const refusedEvent = events.find((e) => e.type === 'request' && e.outcome === 'refused');
    expect(refusedEvent).toMatchObject({ index: 1, refusal: { status: 422, reason: 'customers.0.loans: bad' } });
    const journal = lines(first.summary.journal!);
    expect(journal.map((l) => l.type)).toEqual(['header', 'ack', 'refused', 'ack', 'complete']);
    expect(journal[2]).toMatchObject({ chunk: 1, status: 422, reason: 'customers.0.loans: bad' });

    const again = fakeClient();
    const second = await runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'refused-2.csv'), chunkSize: 4, concurrency: 1, resume: true }),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), again.client),
    );
    expect(second.summary.requests).toMatchObject({ total: 3, acknowledged_before: 2, sent: 1 });
    expect(again.bodies).toHaveLength(1);
    expect(second.summary.resumed).toBe(true);
  });

  it('--resume says when there is nothing to resume, and what it resumes when there is', async () => {
    const state = join(work, 'state-resume-words');
    const warnings: string[] = [];
    const events: PushEvent[] = [];
    const envOf = () => ({
      ...environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fakeClient().client, events),
      warn: (line: string) => warnings.push(line),
    });
    const first = await runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'rw.csv'), chunkSize: 4, resume: true }),
      envOf(),
    );
    expect(first.summary.resumed).toBe(false);
    expect(warnings).toEqual([
      'nothing to resume for these inputs (no journal of an interrupted push); sending everything',
    ]);
    expect(events.some((e) => e.type === 'resuming')).toBe(false);
    expect(lines(first.summary.journal!).at(-1)!.type).toBe('complete');
    const second = await runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'rw-2.csv'), chunkSize: 4, resume: true }),
      envOf(),
    );
    expect(second.summary.resumed).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(events.filter((e) => e.type === 'resuming')).toEqual([
      { type: 'resuming', acknowledged: 3, journal: second.summary.journal },
    ]);
    expect(events.filter((e) => e.type === 'request' && e.outcome === 'from-journal')).toHaveLength(3);
  });

  it('a run stopped by the service marks no journal complete', async () => {
    const state = join(work, 'state-incomplete');
    const down = fakeClient({ answer: () => new ServiceError('service unavailable after 6 attempts', 503) });
    const outcome = await runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'inc.csv'), chunkSize: 4, concurrency: 1 }),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), down.client),
    );
    expect(outcome.exitCode).toBe(5);
    expect(lines(outcome.summary.journal!).map((l) => l.type)).toEqual(['header']);
  });

  it('without --rejects, the rejects file is named after the run start, in the working folder', async () => {
    const cwd = mkdtempSync(join(work, 'cwd-'));
    for (const name of ['export.csv', 'mapping.json'])
      writeFileSync(join(cwd, name), readFileSync(join(fixtures, name)));
    const io = memoryIO({
      cwd,
      env: { LEADCTL_STATE_DIR: join(cwd, 'state') },
      now: () => new Date('2026-11-20T08:09:10.500Z'),
    });
    const outcome = await runBatchPush(fixtureRun(), environment(io, fakeClient().client));
    expect(outcome.summary.rejects_file).toBe(join(cwd, 'leadctl-rejects-20261120-080910Z.csv'));
    expect(existsSync(outcome.summary.rejects_file!)).toBe(true);
  });

  it('several files are staged first, and that is reported with the rows read', async () => {
    const events: PushEvent[] = [];
    const outcome = await runBatchPush(
      request({
        inputs: [
          { path: 'loans.csv', role: 'loans' },
          { path: 'payments.csv', role: 'payments' },
        ],
        mappingPath: 'mapping.json',
        rejectsPath: join(work, 'staged.csv'),
        validateOnly: true,
      }),
      environment(
        memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-st') } }),
        fakeClient().client,
        events,
      ),
    );
    const staged = events.find((e) => e.type === 'staged');
    expect(staged).toMatchObject({ type: 'staged', rows: outcome.summary.rows_read });
    expect(outcome.summary.rows_read).toBeGreaterThan(0);
    expect(staged?.type === 'staged' && staged.seconds).toBeGreaterThanOrEqual(0);
    expect(outcome.summary.customers.read).toBe(11);
    // Two files tried side by side and found unsorted before anything was sent: no note.
    expect(outcome.summary.notes).toBeUndefined();
  });

  it('with --full: the summary names the mode, the default age and the record', async () => {
    const env = { LEADCTL_STATE_DIR: join(work, 'state-full'), LEADCTL_CONFIG_DIR: join(work, 'config-full') };
    const outcome = await runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'full.csv'), delta: 'full' }),
      environment(memoryIO({ cwd: fixtures, env }), fakeClient().client),
    );
    expect(outcome.summary.delta).toMatchObject({ mode: 'full', max_age_days: 30, unchanged_raw: 0 });
    expect(outcome.summary.delta!.record).toEqual(expect.any(String));
    expect(existsSync(outcome.summary.delta!.record!)).toBe(true);
    const changed = await runBatchPush(
      fixtureRun({ rejectsPath: join(work, 'full-2.csv'), delta: 'changed-only', maxAgeDays: 7 }),
      environment(memoryIO({ cwd: fixtures, env }), fakeClient().client),
    );
    expect(changed.summary.delta).toMatchObject({ mode: 'changed-only', max_age_days: 7 });
    expect(changed.summary.customers.unchanged).toBe(9);
    expect(changed.summary.requests.total).toBe(0);
  });
});

describe('streaming, staging and the record of what was sent', () => {
  async function sortedExport(name: string, customers: number) {
    const out = join(work, name);
    await writeExport({ out, customers, seed: 7, paymentsPerCustomer: 2, shapes: ['denormalised'] });
    return out;
  }
  const run = (over: Partial<Parameters<typeof request>[0]> = {}) =>
    request({ inputs: [{ path: 'export.csv', role: 'auto' }], mappingPath: join(fixtures, 'mapping.json'), ...over });

  it('a sorted file streams: every row counted, no staging, no note', async () => {
    const dir = await sortedExport('gen-stream', 60);
    const rows = readFileSync(join(dir, 'export.csv'), 'utf8').trimEnd().split('\n').length - 1;
    const events: PushEvent[] = [];
    const outcome = await runBatchPush(
      run({ chunkSize: 25 }),
      environment(
        memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(work, 'state-stream') } }),
        fakeClient().client,
        events,
      ),
    );
    expect(outcome.exitCode).toBe(0);
    expect(outcome.summary.rows_read).toBe(rows);
    expect(outcome.summary.notes).toBeUndefined();
    expect(events.some((e) => e.type === 'staged')).toBe(false);
    const last = events.filter((e) => e.type === 'request').at(-1);
    expect(last).toMatchObject({ doneCustomers: 60, totalCustomers: 60, requestsDone: 3 });
  });

  it('a sorted NDJSON file streams too; shuffled, it is staged with a note, and the same bodies are sent', async () => {
    const dir = mkdtempSync(join(work, 'ndjson-'));
    const lines: string[] = [...batchShapeLines({ customers: 60, seed: 5, paymentsPerCustomer: 3 })];
    writeFileSync(join(dir, 'sorted.ndjson'), lines.join('\n') + '\n');
    // The last customer first: found out of order at the second line.
    writeFileSync(join(dir, 'shuffled.ndjson'), [lines.at(-1), ...lines.slice(0, -1)].join('\n') + '\n');
    const push = async (file: string) => {
      const events: PushEvent[] = [];
      const fake = fakeClient();
      const outcome = await runBatchPush(
        run({ inputs: [{ path: file, role: 'auto' }], chunkSize: 25 }),
        environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(dir, 'state') } }), fake.client, events),
      );
      return { outcome, events, bodies: fake.bodies };
    };
    const streamed = await push('sorted.ndjson');
    expect(streamed.outcome.exitCode).toBe(0);
    expect(streamed.outcome.summary.customers).toMatchObject({ read: 60, accepted: 60 });
    expect(streamed.outcome.summary.notes).toBeUndefined();
    expect(streamed.events.some((e) => e.type === 'staged')).toBe(false);
    const staged = await push('shuffled.ndjson');
    expect(staged.outcome.summary.notes).toEqual([
      `shuffled.ndjson is not sorted by customer (row 2: customer ${JSON.parse(lines[0]!)['Cust No']} comes after ${JSON.parse(lines.at(-1)!)['Cust No']}); it was staged instead`,
    ]);
    expect(staged.events.some((e) => e.type === 'staged')).toBe(true);
    expect(staged.bodies).toEqual(streamed.bodies);
    expect(streamed.bodies.flatMap((b) => b.customers)).toHaveLength(60);
  });

  it('a sorted file with a header and no rows: exit 2, "no records"', async () => {
    const dir = mkdtempSync(join(work, 'header-only-'));
    const source = await sortedExport('gen-header', 2);
    writeFileSync(join(dir, 'export.csv'), readFileSync(join(source, 'export.csv'), 'utf8').split('\n')[0] + '\n');
    const fake = fakeClient();
    const rejectsPath = join(dir, 'rejects.csv');
    await expect(
      runBatchPush(
        run({ rejectsPath }),
        environment(memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(dir, 'state') } }), fake.client),
      ),
    ).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('export.csv: no records') });
    expect(fake.bodies).toHaveLength(0);
    // The named rejects file is completed even so (a cron script may rely on it).
    expect(readFileSync(rejectsPath, 'utf8')).toBe('source_file,row,customer_id,loan_id,payment_id,field,reason\n');
  });

  it('stages in LEADCTL_TMPDIR while sending, and leaves nothing there', async () => {
    const tmp = mkdtempSync(join(work, 'tmpdir-'));
    const during: string[][] = [];
    const fake = fakeClient({
      answer: () => {
        during.push(readdirSync(tmp));
        return 'ok';
      },
    });
    const io = memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-tmp'), LEADCTL_TMPDIR: tmp } });
    await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: 'mapping.json',
        rejectsPath: join(work, 'tmp.csv'),
      }),
      environment(io, fake.client),
    );
    expect(during).toHaveLength(1);
    expect(during[0]).toHaveLength(1);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('on a signal, says it is stopping and how many requests are in flight', async () => {
    const dir = await sortedExport('gen-signal', 150);
    const io = memoryIO({ cwd: dir, env: { LEADCTL_STATE_DIR: join(work, 'state-sig') } });
    const events: PushEvent[] = [];
    let release!: () => void;
    const gate = new Promise<'ok'>((resolve) => (release = () => resolve('ok')));
    const fake = fakeClient({
      answer: (n) => {
        if (n === 0) {
          io.sendSignal('SIGTERM');
          setTimeout(release, 20);
          return gate;
        }
        return 'ok';
      },
    });
    const outcome = await runBatchPush(run({ chunkSize: 50, concurrency: 1 }), environment(io, fake.client, events));
    expect(outcome.exitCode).toBe(143);
    expect(events.filter((e) => e.type === 'stopping')).toEqual([{ type: 'stopping', reason: 'SIGTERM', inFlight: 1 }]);
    expect(fake.bodies).toHaveLength(1);
  });

  it('--changed-only forgets a customer the service skipped, and sends it (only it) next time', async () => {
    const dir = await sortedExport('gen-delta', 30);
    const env = { LEADCTL_STATE_DIR: join(work, 'state-delta'), LEADCTL_CONFIG_DIR: join(work, 'config-delta') };
    let skippedId = '';
    const first = fakeClient({
      answer: (_n, body) => {
        skippedId = body.customers[3]!.customer_id;
        return { skipped: [{ path: 'customers.3', id: skippedId, errors: ['customer_id: not now'] }] };
      },
    });
    const one = await runBatchPush(
      run({ delta: 'changed-only', rejectsPath: join(work, 'delta-1.csv') }),
      environment(memoryIO({ cwd: dir, env }), first.client),
    );
    expect(one.summary.customers).toMatchObject({ sent: 30, rejected: 1 });
    const second = fakeClient();
    const two = await runBatchPush(
      run({ delta: 'changed-only', rejectsPath: join(work, 'delta-2.csv') }),
      environment(memoryIO({ cwd: dir, env }), second.client),
    );
    expect(second.bodies.flatMap((b) => b.customers.map((c) => c.customer_id))).toEqual([skippedId]);
    expect(two.summary.customers).toMatchObject({ sent: 1, unchanged: 29 });
    expect(two.summary.delta!.unchanged_raw).toBe(29);
  });
});

describe('staged from the start (standard input), journals and resuming', () => {
  const fixtureText = () => readFileSync(join(fixtures, 'export.csv'), 'utf8');
  const stdinRun = (over: Partial<Parameters<typeof request>[0]> = {}) =>
    request({ inputs: [{ path: '-', role: 'auto' }], mappingPath: join(fixtures, 'mapping.json'), ...over });

  it('journals a push from standard input under its content, and resumes it only for the same content', async () => {
    const state = join(work, 'state-stdin');
    const warnings: string[] = [];
    const envOf = (stdin: string, client: ApiClient) => ({
      ...environment(memoryIO({ cwd: work, stdin, env: { LEADCTL_STATE_DIR: state } }), client),
      warn: (line: string) => warnings.push(line),
    });
    const down = fakeClient({ answer: (n) => (n >= 1 ? new ServiceError('service unavailable', 503) : 'ok') });
    const first = await runBatchPush(
      stdinRun({ rejectsPath: join(work, 'stdin-1.csv'), chunkSize: 4, concurrency: 1 }),
      envOf(fixtureText(), down.client),
    );
    expect(first.exitCode).toBe(5);
    expect(first.summary.journal).not.toBeNull();
    const same = fakeClient();
    const second = await runBatchPush(
      stdinRun({ rejectsPath: join(work, 'stdin-2.csv'), chunkSize: 4, concurrency: 1, resume: true }),
      envOf(fixtureText(), same.client),
    );
    expect(second.summary.resumed).toBe(true);
    expect(second.summary.requests).toMatchObject({ acknowledged_before: 1, sent: 2 });
    expect(warnings).toEqual([]);
    // Other content (one cell changed): nothing of it was acknowledged.
    const other = fakeClient();
    const third = await runBatchPush(
      stdinRun({ rejectsPath: join(work, 'stdin-3.csv'), chunkSize: 4, concurrency: 1, resume: true }),
      envOf(fixtureText().replace('100101', '100100'), other.client),
    );
    expect(third.summary.resumed).toBe(false);
    expect(third.summary.requests.acknowledged_before).toBe(0);
    expect(warnings).toHaveLength(1);
  });

  it('standard input with a header and no rows: exit 2, "no records"', async () => {
    const header = `${fixtureText().split('\n')[0]}\n`;
    await expect(
      runBatchPush(
        stdinRun({ rejectsPath: join(work, 'stdin-empty.csv') }),
        environment(
          memoryIO({ cwd: work, stdin: header, env: { LEADCTL_STATE_DIR: join(work, 'state-stdin-e') } }),
          fakeClient().client,
        ),
      ),
    ).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('no records') });
  });

  it('a signal while staging stops the reading: interrupted, nothing sent, the rest said unread', async () => {
    const out = join(work, 'gen-stdin-signal');
    await writeExport({ out, customers: 3500, seed: 9, paymentsPerCustomer: 3, shapes: ['denormalised'] });
    const text = readFileSync(join(out, 'export.csv'), 'utf8');
    const fake = fakeClient();
    const events: PushEvent[] = [];
    const io = memoryIO({ cwd: work, stdin: text, env: { LEADCTL_STATE_DIR: join(work, 'state-stdin-sig') } });
    const env = {
      ...environment(io, fake.client, events),
      onEvent: (e: PushEvent) => {
        events.push(e);
        if (e.type === 'reading' && e.rows === 5000) io.sendSignal('SIGINT');
      },
    };
    const outcome = await runBatchPush(stdinRun({ rejectsPath: join(work, 'stdin-sig.csv') }), env);
    expect(outcome.exitCode).toBe(130);
    expect(outcome.summary.status).toBe('interrupted');
    expect(fake.bodies).toHaveLength(0);
    expect(outcome.summary.notes).toContain('the rest of the export was not read: rerun with --resume to continue');
    expect(events.some((e) => e.type === 'staged')).toBe(false);
  });

  it('an unsorted file staged after all is resumed as staged, keeping what was acknowledged', async () => {
    const state = join(work, 'state-unsorted-resume');
    const args = { rejectsPath: join(work, 'ur.csv'), chunkSize: 4, concurrency: 1 };
    const base = () => request({ inputs: [{ path: 'export.csv', role: 'auto' }], mappingPath: 'mapping.json' });
    const down = fakeClient({ answer: (n) => (n >= 1 ? new ServiceError('service unavailable', 503) : 'ok') });
    const first = await runBatchPush(
      { ...base(), ...args },
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), down.client),
    );
    expect(first.exitCode).toBe(5);
    const rest = fakeClient();
    const events: PushEvent[] = [];
    const second = await runBatchPush(
      { ...base(), ...args, resume: true },
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), rest.client, events),
    );
    expect(second.exitCode).toBe(4);
    expect(second.summary.resumed).toBe(true);
    expect(second.summary.requests).toMatchObject({ total: 3, acknowledged_before: 1, sent: 2 });
    expect(rest.bodies.flatMap((b) => b.customers)).toHaveLength(5);
    // Known staged from the journal: not streamed first, so no note about sorting.
    expect(second.summary.notes).toBeUndefined();
    expect(events.filter((e) => e.type === 'request').map((e) => e.type === 'request' && e.outcome)).toEqual([
      'from-journal',
      'accepted',
      'accepted',
    ]);
  });

  it('a second push without --resume sends everything again', async () => {
    const state = join(work, 'state-twice');
    const args = request({
      inputs: [{ path: 'export.csv', role: 'auto' }],
      mappingPath: 'mapping.json',
      rejectsPath: join(work, 'twice.csv'),
      chunkSize: 4,
    });
    await runBatchPush(
      args,
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fakeClient().client),
    );
    const again = fakeClient();
    const second = await runBatchPush(
      args,
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), again.client),
    );
    expect(second.summary.resumed).toBe(false);
    expect(second.summary.requests).toMatchObject({ acknowledged_before: 0, sent: 3 });
    // Without --changed-only or --full, no record of what was sent is made.
    expect(readdirSync(state).sort()).toEqual(['journals', 'locks']);
  });

  it('a corrupt journal is set aside with a warning through the run', async () => {
    const state = join(work, 'state-corrupt');
    const args = (resume: boolean) =>
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: 'mapping.json',
        rejectsPath: join(work, 'corrupt.csv'),
        resume,
      });
    const first = await runBatchPush(
      args(false),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fakeClient().client),
    );
    writeFileSync(first.summary.journal!, 'garbage\n');
    const warnings: string[] = [];
    const second = await runBatchPush(args(true), {
      ...environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fakeClient().client),
      warn: (line: string) => warnings.push(line),
    });
    expect(second.summary.resumed).toBe(false);
    expect(warnings[0]).toMatch(/^Warning: the journal .* is corrupt or was edited/);
  });
});

describe('what a run leaves behind and reports', () => {
  it('the lock names the command while the push runs; the staged pass leaves no second rejects file', async () => {
    const state = join(work, 'state-lockfile');
    const out = mkdtempSync(join(work, 'rejects-dir-'));
    const seen: string[] = [];
    const fake = fakeClient({
      answer: () => {
        seen.push(JSON.parse(readFileSync(join(state, 'locks', 'default.lock'), 'utf8')).command);
        return 'ok';
      },
    });
    const events: PushEvent[] = [];
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: 'mapping.json',
        rejectsPath: join(out, 'rejects.csv'),
      }),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fake.client, events),
    );
    expect(seen).toEqual(['customers batch']);
    expect(readdirSync(out)).toEqual(['rejects.csv']);
    expect(outcome.summary.elapsed_seconds).toBeLessThan(30);
    expect(outcome.summary.elapsed_seconds).toBeGreaterThanOrEqual(0);
    const staged = events.find((e) => e.type === 'staged');
    expect(staged?.type === 'staged' && staged.seconds).toBeLessThan(30);
    const input = events.find((e) => e.type === 'input');
    expect(input).toEqual({
      type: 'input',
      file: 'export.csv',
      sha256: createHash('sha256')
        .update(readFileSync(join(fixtures, 'export.csv')))
        .digest('hex'),
    });
    expect(events.filter((e) => e.type === 'request').map((e) => e.type === 'request' && e.outcome)).toEqual([
      'accepted',
    ]);
  });

  it('a check-only run reads each file once (no digest), is never "resumed", and counts the staged customers', async () => {
    const events: PushEvent[] = [];
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: 'mapping.json',
        rejectsPath: join(work, 'vo-2.csv'),
        validateOnly: true,
      }),
      environment(
        memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-vo-2') } }),
        fakeClient().client,
        events,
      ),
    );
    expect(outcome.summary.resumed).toBe(false);
    expect(events.some((e) => e.type === 'input')).toBe(false);
    expect(events.filter((e) => e.type === 'request').at(-1)).toMatchObject({ totalCustomers: 10 });
  });

  it('a rejects file that cannot be completed stops the run: failed, with a note', async () => {
    const folder = mkdtempSync(join(work, 'vanishing-'));
    const rejectsPath = join(folder, 'rejects.csv');
    // The folder of the rejects file goes away while the request is in flight.
    const fake = fakeClient({ answer: () => (rmSync(folder, { recursive: true }), 'ok') });
    const outcome = await runBatchPush(
      request({ inputs: [{ path: 'export.csv', role: 'auto' }], mappingPath: 'mapping.json', rejectsPath }),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-vanish') } }), fake.client),
    );
    expect(outcome.summary.status).toBe('failed');
    expect(outcome.exitCode).toBe(outcome.summary.exit_code);
    // Someone else removed the folder: the machine's doing (exit 2), not a bug of leadctl's (exit 1).
    expect(outcome.exitCode).toBe(2);
    expect(outcome.summary.error).toMatchObject({ code: 'environment' });
    expect(outcome.summary.error?.message).toContain(`the rejects file ${rejectsPath}: it is gone`);
    expect(outcome.summary.rejects_file).toBeNull();
    expect(outcome.summary.notes).toContainEqual(
      expect.stringContaining(`the rejects file ${rejectsPath} could not be written and was removed`),
    );
  });

  it('a rejects file named on a full device is refused before anything is sent', async () => {
    const fake = fakeClient();
    // The run is set up (and the named rejects file created) before the promise exists.
    await expect(
      (async () =>
        runBatchPush(
          request({
            inputs: [{ path: 'export.csv', role: 'auto' }],
            mappingPath: 'mapping.json',
            rejectsPath: '/dev/full',
          }),
          environment(
            memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: join(work, 'state-full-disk') } }),
            fake.client,
          ),
        ))(),
    ).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('the rejects file /dev/full') });
    expect(fake.bodies).toHaveLength(0);
  });
});

describe('the record of what was sent, in check-only runs and after refusals', () => {
  const args = (over: Partial<Parameters<typeof request>[0]>) =>
    request({
      inputs: [{ path: 'export.csv', role: 'auto' }],
      mappingPath: 'mapping.json',
      rejectsPath: join(work, 'record.csv'),
      delta: 'changed-only',
      ...over,
    });

  it('a check-only run with --changed-only makes no record, and counts everything as to be sent', async () => {
    const env = { LEADCTL_STATE_DIR: join(work, 'state-rec-vo'), LEADCTL_CONFIG_DIR: join(work, 'config-rec-vo') };
    const outcome = await runBatchPush(
      args({ validateOnly: true }),
      environment(memoryIO({ cwd: fixtures, env }), fakeClient().client),
    );
    expect(outcome.summary.delta).toMatchObject({ mode: 'changed-only', record: null });
    expect(outcome.summary.customers).toMatchObject({ valid: 9, unchanged: 0 });
    expect(existsSync(join(work, 'state-rec-vo', 'journals'))).toBe(false);
  });

  it('customers of a request the service refused are sent again by the next --changed-only run', async () => {
    const env = { LEADCTL_STATE_DIR: join(work, 'state-rec-ref'), LEADCTL_CONFIG_DIR: join(work, 'config-rec-ref') };
    const refusing = fakeClient({
      answer: (n) => (n === 0 ? new ValidationError('bad request', {}, { http: { status: 400 } }) : 'ok'),
    });
    const first = await runBatchPush(
      args({ chunkSize: 4, concurrency: 1 }),
      environment(memoryIO({ cwd: fixtures, env }), refusing.client),
    );
    expect(first.summary.customers).toMatchObject({ sent: 9, rejected: 5 });
    const next = fakeClient();
    const second = await runBatchPush(
      args({ chunkSize: 4 }),
      environment(memoryIO({ cwd: fixtures, env }), next.client),
    );
    expect(second.summary.customers).toMatchObject({ sent: 4, unchanged: 5 });
    expect(next.bodies.flatMap((b) => b.customers)).toHaveLength(4);
  });
});

describe('a journal that does not match the inputs, and a rejects file only when asked', () => {
  it('--resume with an acknowledgement edited to other customers: failed (exit 1) with a summary, not a crash', async () => {
    const state = join(work, 'state-mismatch');
    const args = (resume: boolean) =>
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: 'mapping.json',
        rejectsPath: join(work, 'mismatch.csv'),
        chunkSize: 4,
        resume,
      });
    const down = fakeClient({ answer: (n) => (n >= 1 ? new ServiceError('service unavailable', 503) : 'ok') });
    const first = await runBatchPush(
      args(false),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), down.client),
    );
    const path = first.summary.journal!;
    writeFileSync(path, readFileSync(path, 'utf8').replace(/"first":"[^"]*"/, '"first":"someone-else"'));
    const fake = fakeClient();
    const outcome = await runBatchPush(
      args(true),
      environment(memoryIO({ cwd: fixtures, env: { LEADCTL_STATE_DIR: state } }), fake.client),
    );
    expect(outcome.exitCode).toBe(1);
    expect(outcome.summary.status).toBe('failed');
    expect(outcome.summary.error).toMatchObject({
      code: 'journal_mismatch',
      message: expect.stringContaining('does not match request 1 of these inputs'),
    });
    expect(fake.bodies).toHaveLength(0);
  });

  it('a rejects file named with nothing rejected holds just its header; unnamed, none is made', async () => {
    const out = join(work, 'gen-clean');
    await writeExport({ out, customers: 20, seed: 4, paymentsPerCustomer: 1, shapes: ['denormalised'] });
    const run = (rejectsPath?: string) =>
      runBatchPush(
        request({
          inputs: [{ path: 'export.csv', role: 'auto' }],
          mappingPath: join(fixtures, 'mapping.json'),
          ...(rejectsPath ? { rejectsPath } : {}),
        }),
        environment(memoryIO({ cwd: out, env: { LEADCTL_STATE_DIR: join(work, 'state-clean') } }), fakeClient().client),
      );
    const unnamed = await run();
    expect(unnamed.summary.rejects).toBe(0);
    expect(unnamed.summary.rejects_file).toBeNull();
    expect(readdirSync(out).filter((n) => n.startsWith('leadctl-rejects-'))).toEqual([]);
    const named = join(work, 'clean-rejects.csv');
    const outcome = await run(named);
    expect(outcome.summary.rejects).toBe(0);
    expect(readFileSync(named, 'utf8')).toBe('source_file,row,customer_id,loan_id,payment_id,field,reason\n');
  });

  it('a signal in a check-only run says nothing is in flight', async () => {
    const out = join(work, 'gen-vo-signal');
    await writeExport({ out, customers: 2000, seed: 8, paymentsPerCustomer: 3, shapes: ['denormalised'] });
    const io = memoryIO({ cwd: out, env: { LEADCTL_STATE_DIR: join(work, 'state-vo-sig') } });
    const events: PushEvent[] = [];
    const env = {
      ...environment(io, fakeClient().client, events),
      onEvent: (e: PushEvent) => {
        events.push(e);
        if (e.type === 'reading' && e.rows === 5000) io.sendSignal('SIGTERM');
      },
    };
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        rejectsPath: join(work, 'vo-sig.csv'),
        validateOnly: true,
      }),
      env,
    );
    expect(outcome.exitCode).toBe(143);
    expect(events.filter((e) => e.type === 'stopping')).toEqual([{ type: 'stopping', reason: 'SIGTERM', inFlight: 0 }]);
  });
});

describe('a request waiting for a free slot when the run stops', () => {
  it('is not sent: counted as not sent, for --resume', async () => {
    const out = join(work, 'gen-waiting');
    await writeExport({ out, customers: 150, seed: 12, paymentsPerCustomer: 1, shapes: ['denormalised'] });
    const io = memoryIO({ cwd: out, env: { LEADCTL_STATE_DIR: join(work, 'state-waiting') } });
    let release!: () => void;
    const gate = new Promise<'ok'>((resolve) => (release = () => resolve('ok')));
    const fake = fakeClient({
      answer: (n) => {
        if (n > 0) return 'ok';
        // The next chunk is cut and waits for the one slot; then the signal comes, then the answer.
        setTimeout(() => io.sendSignal('SIGINT'), 1000);
        setTimeout(release, 1100);
        return gate;
      },
    });
    const outcome = await runBatchPush(
      request({
        inputs: [{ path: 'export.csv', role: 'auto' }],
        mappingPath: join(fixtures, 'mapping.json'),
        chunkSize: 50,
        concurrency: 1,
      }),
      environment(io, fake.client),
    );
    expect(outcome.exitCode).toBe(130);
    expect(fake.bodies).toHaveLength(1);
    expect(outcome.summary.requests).toMatchObject({ total: 3, sent: 1, not_sent: 2 });
    expect(outcome.summary.customers).toMatchObject({ accepted: 50 });
  });
});
