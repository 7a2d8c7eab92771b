import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { type ApiClient, UPSERT_ANSWER } from '../../../../src/api/client.js';
import {
  AuthError,
  ConflictError,
  InterruptedError,
  LeadctlError,
  NotFoundError,
  RateLimitedError,
  ValidationError,
} from '../../../../src/errors.js';
import type { PushEnvironment } from '../../../../src/jobs/push/batch.js';
import type { PushEvent } from '../../../../src/jobs/push/progress.js';
import { runSinglePush, type SinglePushRequest } from '../../../../src/jobs/push/single.js';
import { memoryIO, type MemoryIO } from '../../../helpers/memory-io.js';
import { mountTinyFs, reportSkipped } from '../../../helpers/tiny-fs.js';
import { scratchDir } from '../../../helpers/scratch.js';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));

function environment(io: MemoryIO, api: () => Promise<ApiClient>): PushEnvironment {
  return {
    io,
    target: async () => ({ profile: 'default', baseUrl: 'http://127.0.0.1:9' }),
    api,
    onEvent: () => undefined,
    warn: () => undefined,
    stopGraceMs: 2000,
  };
}

describe('single upserts and signals', () => {
  it('a signal before anything is sent ends with the summary: nothing sent, every valid record not sent, exit 143', async () => {
    const io = memoryIO({ cwd: fixtures });
    let sent = 0;
    const client = {
      checkCredentials: async () => ({ accessToken: 't', obtainedAt: 0, expiresAt: 1e15 }),
      send: async () => {
        sent++;
        return { status: 200, headers: {}, attempts: 1, body: { data: {} } };
      },
    } as unknown as ApiClient;
    // The signal arrives while the run is still getting ready (credentials, then reading the file).
    const api = async () => {
      io.sendSignal('SIGTERM');
      return client;
    };
    const outcome = await runSinglePush(
      {
        kind: 'loan',
        input: 'loans.csv',
        mappingPath: 'mapping.json',
        rejectsPath: join(scratchDir('leadctl-single-'), 'rejects.csv'),
        concurrency: 2,
        validateOnly: false,
      },
      environment(io, api),
    );
    expect(outcome.exitCode).toBe(143);
    expect(outcome.summary.status).toBe('interrupted');
    expect(sent).toBe(0);
    const loans = outcome.summary.loans;
    expect(loans.not_sent).toBe(loans.valid);
    expect(loans.not_sent).toBeGreaterThan(0);
    expect(loans.read).toBe(loans.accepted + loans.rejected + loans.duplicates + loans.not_sent);
  });
});

const AT = '2026-03-06T16:15:00Z';
const loanRecord = (customer: string, loan: string, over: Record<string, unknown> = {}) => ({
  customer_id: customer,
  loan_id: loan,
  lead_id: 500101,
  loan_amount: 50000,
  applied_at: AT,
  ...over,
});
const paymentRecord = (loan: string, payment: string, over: Record<string, unknown> = {}) => ({
  customer_id: 'C1',
  loan_id: loan,
  lead_id: 500101,
  payment_id: payment,
  payment_at: AT,
  ...over,
});
const customerRecord = (customer: string, over: Record<string, unknown> = {}) => ({
  customer_id: customer,
  lead_loan: { loan_id: `L-${customer}`, lead_id: 500101, loan_amount: 50000, applied_at: AT, ...over },
});
const ndjson = (records: object[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

interface Sent {
  method: string;
  path: string;
  body: Record<string, unknown>;
  auth: string;
  repeat: string;
  subject?: string;
  answer: unknown;
}
type Answer = (
  request: Sent,
  index: number,
) => Promise<{ attempts?: number } | undefined> | { attempts?: number } | undefined;

/** A client whose answers the test gives: a value (attempts) or a thrown error, request by request. */
function fakeClient(answer: Answer = () => undefined) {
  const sent: Sent[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client = {
    checkCredentials: async () => ({ accessToken: 't', obtainedAt: 0, expiresAt: 1e15 }),
    send: async (request: Sent) => {
      const index = sent.length;
      sent.push(request);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await new Promise((r) => setTimeout(r, 2));
        const a = await answer(request, index);
        return { status: 200, headers: {}, attempts: a?.attempts ?? 1, body: { data: {} } };
      } finally {
        inFlight--;
      }
    },
  } as unknown as ApiClient;
  return { client, sent, maxInFlight: () => maxInFlight };
}

const scratchDirs: string[] = [];
afterAll(() => {
  for (const d of scratchDirs) rmSync(d, { recursive: true, force: true });
});

function scratch(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'leadctl-single-'));
  scratchDirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function push(
  dir: string,
  request: Partial<SinglePushRequest> & Pick<SinglePushRequest, 'kind' | 'input'>,
  client: ApiClient | (() => Promise<ApiClient>),
  events: PushEvent[] = [],
  stdin?: string,
) {
  const io = memoryIO({ cwd: dir, stdin });
  const env = environment(io, typeof client === 'function' ? client : async () => client);
  env.onEvent = (e) => events.push(e as PushEvent);
  return runSinglePush({ concurrency: 1, validateOnly: false, rejectsPath: 'rejects.csv', ...request }, env);
}

const rejectLines = (dir: string, name = 'rejects.csv') =>
  parse(readFileSync(join(dir, name), 'utf8'), { columns: true }) as Record<string, string>[];

describe('single upserts: what is sent, and the summary', () => {
  it('a rejects file the user named is created and named in the summary, even with nothing rejected', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1')]) });
    const { summary, exitCode } = await push(
      dir,
      { kind: 'loan', input: 'loans.ndjson', rejectsPath: 'named.csv' },
      fakeClient().client,
    );
    expect(exitCode).toBe(0);
    expect(summary).toMatchObject({ rejects_file: join(dir, 'named.csv'), rejects: 0 });
    expect(rejectLines(dir, 'named.csv')).toEqual([]);
  });

  it('loans push: one POST per loan under its customer, safe to repeat, counted with its retries', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C/1', 'L1'), loanRecord('C2', 'L2')]) });
    const fake = fakeClient((_r, i) => ({ attempts: i === 0 ? 3 : 1 }));
    const events: PushEvent[] = [];
    const { summary, exitCode } = await push(dir, { kind: 'loan', input: 'loans.ndjson' }, fake.client, events);
    expect(exitCode).toBe(0);
    expect(fake.sent.map((r) => r.path)).toEqual([
      '/api/v1/loan-performance/customers/C%2F1/loans',
      '/api/v1/loan-performance/customers/C2/loans',
    ]);
    expect(fake.sent[0]).toMatchObject({
      method: 'POST',
      auth: 'bearer',
      repeat: 'safe',
      subject: 'customer C/1',
      answer: UPSERT_ANSWER,
      body: { loan_id: 'L1', lead_id: 500101, loan_amount: 50000, applied_at: AT },
    });
    expect(summary).toMatchObject({
      command: 'loans push',
      status: 'completed',
      validate_only: false,
      resumed: false,
      rows_read: 2,
      duplicates: 0,
      requests: { total: 2, sent: 2, acknowledged_before: 0, not_sent: 0 },
      retries: 2,
      rejects_file: join(dir, 'rejects.csv'),
      rejects: 0,
      reasons: [],
      journal: null,
      exit_code: 0,
      accounting: { balanced: true },
    });
    expect(summary.error).toBeUndefined();
    expect(summary.notes).toBeUndefined();
    expect(summary.loans).toMatchObject({ read: 2, valid: 2, sent: 2, accepted: 2, rejected: 0, not_sent: 0 });
    expect(summary.customers).toMatchObject({ read: 0, sent: 0 });
    expect(summary.elapsed_seconds).toBeGreaterThanOrEqual(0);
    expect(summary.rows_per_second).toBeGreaterThan(0);
    expect(events[0]).toMatchObject({ type: 'staged', rows: 2 });
    expect(events.filter((e) => e.type === 'record')).toEqual([
      { type: 'record', done: 1, total: 2, rejected: 0 },
      { type: 'record', done: 2, total: 2, rejected: 0 },
    ]);
    // Named with --rejects, the file is made even with nothing in it (a cron script relies on it).
    expect(rejectLines(dir)).toEqual([]);
    expect(readFileSync(join(dir, 'rejects.csv'), 'utf8')).toMatch(/^source_file,row,/);
    // Not named: a file appears only when something is rejected.
    const quiet = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1')]) });
    await push(quiet, { kind: 'loan', input: 'loans.ndjson', rejectsPath: undefined }, fakeClient().client);
    expect(readdirSync(quiet)).toEqual(['loans.ndjson']);
  });

  it('customers push: the customer route, no subject, and the lead loan counted with it', async () => {
    const dir = scratch({ 'customers.json': JSON.stringify([customerRecord('C1'), customerRecord('C2')]) });
    const fake = fakeClient();
    const { summary } = await push(dir, { kind: 'customer', input: 'customers.json' }, fake.client);
    expect(fake.sent.map((r) => r.path)).toEqual([
      '/api/v1/loan-performance/customers',
      '/api/v1/loan-performance/customers',
    ]);
    expect(fake.sent[0]!.subject).toBeUndefined();
    expect(fake.sent[0]!.body).toEqual({
      customer_id: 'C1',
      lead_loan: { loan_id: 'L-C1', lead_id: 500101, loan_amount: 50000, applied_at: AT },
    });
    expect(summary.command).toBe('customers push');
    expect(summary.customers).toMatchObject({ read: 2, valid: 2, sent: 2, accepted: 2 });
    expect(summary.loans).toMatchObject({ read: 2, valid: 2, sent: 2, accepted: 2 });
  });

  it('payments push: the payments route of the customer', async () => {
    const dir = scratch({ 'p.ndjson': ndjson([paymentRecord('L1', 'P1')]) });
    const fake = fakeClient();
    const { summary } = await push(dir, { kind: 'payment', input: 'p.ndjson' }, fake.client);
    expect(fake.sent.map((r) => r.path)).toEqual(['/api/v1/loan-performance/customers/C1/payments']);
    expect(fake.sent[0]!.subject).toBe('customer C1');
    expect(summary.command).toBe('payments push');
    expect(summary.payments).toMatchObject({ read: 1, valid: 1, sent: 1, accepted: 1 });
    expect(summary.loans.read).toBe(0);
  });

  it('standard input: its format is seen from what it holds', async () => {
    const dir = scratch();
    const fake = fakeClient();
    const { summary } = await push(
      dir,
      { kind: 'loan', input: '-' },
      fake.client,
      [],
      JSON.stringify(loanRecord('C1', 'L1')),
    );
    expect(summary.loans.accepted).toBe(1);
    const csv = fakeClient();
    const fromCsv = await push(
      dir,
      { kind: 'loan', input: '-' },
      csv.client,
      [],
      'customer_id,loan_id,lead_id,loan_amount,applied_at\nC1,L1,5,100,2026-03-06T16:15:00Z\n',
    );
    expect(fromCsv.summary.loans).toMatchObject({ read: 1, accepted: 1 });
    // --format says it whatever the name.
    const named = scratch({ 'loans.txt': ndjson([loanRecord('C1', 'L1')]) });
    const byFormat = await push(named, { kind: 'loan', input: 'loans.txt', format: 'ndjson' }, fakeClient().client);
    expect(byFormat.summary.loans.accepted).toBe(1);
  });

  it('an input without records is an input error', async () => {
    const dir = scratch({ 'empty.json': '[]' });
    await expect(push(dir, { kind: 'loan', input: 'empty.json' }, fakeClient().client)).rejects.toThrow(/no records/);
  });

  it('at most --concurrency requests in flight', async () => {
    const records = Array.from({ length: 7 }, (_, i) => loanRecord('C1', `L${i}`));
    const dir = scratch({ 'loans.ndjson': ndjson(records) });
    const two = fakeClient(() => new Promise((r) => setTimeout(() => r(undefined), 5)));
    const { summary } = await push(dir, { kind: 'loan', input: 'loans.ndjson', concurrency: 2 }, two.client);
    expect(two.maxInFlight()).toBe(2);
    expect(summary.loans.accepted).toBe(7);
    const one = fakeClient(() => new Promise((r) => setTimeout(() => r(undefined), 5)));
    await push(dir, { kind: 'loan', input: 'loans.ndjson', concurrency: 1 }, one.client);
    expect(one.maxInFlight()).toBe(1);
  });

  it('--validate-only: nothing sent, no credentials asked; what would be sent counted', async () => {
    const dir = scratch({
      'loans.ndjson': ndjson([loanRecord('C1', 'L1'), loanRecord('C1', 'L2', { loan_amount: 'x' })]),
    });
    const api = async (): Promise<ApiClient> => {
      throw new Error('no client for a check');
    };
    const { summary, exitCode } = await push(dir, { kind: 'loan', input: 'loans.ndjson', validateOnly: true }, api);
    expect(exitCode).toBe(4);
    expect(summary).toMatchObject({
      status: 'validated_with_rejects',
      validate_only: true,
      requests: { total: 1, sent: 0, not_sent: 0 },
      accounting: { balanced: true },
    });
    expect(summary.loans).toMatchObject({ read: 2, valid: 1, sent: 0, rejected: 1 });
  });
});

describe('single upserts: records refused here or by the service', () => {
  it('a later record with the same id supersedes the earlier: a duplicate, listed with its id field', async () => {
    const dir = scratch({
      'loans.ndjson': ndjson([
        loanRecord('C1', 'L1', { loan_amount: 1 }),
        loanRecord('C1', 'L2'),
        loanRecord('C1', 'L1'),
      ]),
    });
    const fake = fakeClient();
    const { summary, exitCode } = await push(dir, { kind: 'loan', input: 'loans.ndjson' }, fake.client);
    expect(exitCode).toBe(4);
    expect(fake.sent).toHaveLength(2);
    expect(summary.duplicates).toBe(1);
    expect(summary.loans).toMatchObject({ read: 3, valid: 2, accepted: 2, duplicates: 1 });
    expect(rejectLines(dir)).toEqual([
      {
        source_file: 'loans.ndjson',
        row: '1',
        customer_id: 'C1',
        loan_id: 'L1',
        payment_id: '',
        field: 'loan_id',
        reason: 'duplicate loan_id: superseded by the later record at row 3 (the last one wins)',
      },
    ]);
  });

  it('duplicates of customers and payments name their own id field; a customer duplicate counts its loan', async () => {
    const dir = scratch({
      'c.ndjson': ndjson([customerRecord('C1'), customerRecord('C1')]),
      'p.ndjson': ndjson([paymentRecord('L1', 'P1'), paymentRecord('L1', 'P1')]),
    });
    const c = await push(dir, { kind: 'customer', input: 'c.ndjson', rejectsPath: 'c.csv' }, fakeClient().client);
    expect(c.summary.customers.duplicates).toBe(1);
    expect(c.summary.loans).toMatchObject({ read: 2, duplicates: 1, accepted: 1 });
    expect(rejectLines(dir, 'c.csv')[0]).toMatchObject({
      field: 'customer_id',
      reason: expect.stringMatching(/^duplicate customer_id/),
    });
    const p = await push(dir, { kind: 'payment', input: 'p.ndjson', rejectsPath: 'p.csv' }, fakeClient().client);
    expect(p.summary.payments.duplicates).toBe(1);
    expect(p.summary.loans.duplicates).toBe(0);
    expect(rejectLines(dir, 'p.csv')[0]).toMatchObject({ field: 'payment_id', payment_id: 'P1' });
  });

  it('invalid records are not sent: each problem listed once, the column it came from named', async () => {
    const dir = scratch({
      'loans.ndjson': ndjson([loanRecord('C1', 'L1', { loan_amount: 'abc', applied_at: 'soon' })]),
    });
    const fake = fakeClient();
    const { summary } = await push(dir, { kind: 'loan', input: 'loans.ndjson' }, fake.client);
    expect(fake.sent).toHaveLength(0);
    expect(summary.loans).toMatchObject({ read: 1, valid: 0, rejected: 1, sent: 0 });
    const lines = rejectLines(dir);
    expect(lines.map((l) => l.field).sort()).toEqual(['applied_at', 'loan_amount']);
    // The fields are the columns: no column named besides.
    expect(lines.some((l) => l.reason!.includes('column'))).toBe(false);
    expect(lines.map((l) => l.reason).sort()).toEqual([
      '"abc" is not a whole number of cents',
      '"soon" does not match ISO 8601 (YYYY-MM-DD…)',
    ]);
    expect(lines.every((l) => l.row === '1' && l.customer_id === 'C1' && l.loan_id === 'L1')).toBe(true);

    const mapped = await push(
      fixtures,
      { kind: 'loan', input: 'loans.csv', mappingPath: 'mapping.json', rejectsPath: join(dir, 'mapped.csv') },
      fakeClient().client,
    );
    const bad = rejectLines(dir, 'mapped.csv').filter((l) => l.field === 'loan_amount');
    expect(bad.length).toBeGreaterThan(0);
    expect(bad[0]!.reason).toMatch(/\(column "Principal"\)$/);
    expect(mapped.summary.loans.rejected).toBeGreaterThan(0);
  });

  it('a customer record: its loan fields are named under lead_loan, once each', async () => {
    const dir = scratch({
      'c.ndjson': ndjson([
        customerRecord('C1', { loan_amount: 'abc' }),
        customerRecord('C2', { applied_at: undefined }),
      ]),
    });
    const { summary } = await push(dir, { kind: 'customer', input: 'c.ndjson' }, fakeClient().client);
    expect(summary.customers).toMatchObject({ read: 2, rejected: 2 });
    expect(summary.loans).toMatchObject({ read: 2, rejected: 2 });
    const lines = rejectLines(dir);
    expect(lines.map((l) => [l.customer_id, l.field])).toEqual([
      ['C1', 'lead_loan.loan_amount'],
      ['C2', 'lead_loan.applied_at'],
    ]);
  });

  it('a row without a customer id is read and rejected', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('', 'L1'), loanRecord('C1', 'L2')]) });
    const { summary } = await push(dir, { kind: 'loan', input: 'loans.ndjson' }, fakeClient().client);
    expect(summary.loans).toMatchObject({ read: 2, rejected: 1, accepted: 1 });
    expect(rejectLines(dir)[0]).toMatchObject({ customer_id: '', field: 'customer_id' });
  });

  it('the service refuses a record (422, 409): rejected with each of its reasons; the run goes on', async () => {
    const dir = scratch({
      'loans.ndjson': ndjson([
        loanRecord('C1', 'L1'),
        loanRecord('C1', 'L2'),
        loanRecord('C1', 'L3'),
        loanRecord('C1', 'L4'),
      ]),
    });
    const fake = fakeClient((_r, i) => {
      if (i === 0)
        throw new ValidationError('The given data was invalid.', {
          loan_amount: ['too big', 'odd'],
          lead_id: ['unknown'],
        });
      if (i === 1) throw new ConflictError('conflict', { loan_id: ['belongs to another customer'] });
      if (i === 2) throw new ValidationError('nothing said');
      return undefined;
    });
    const { summary, exitCode } = await push(dir, { kind: 'loan', input: 'loans.ndjson' }, fake.client);
    expect(exitCode).toBe(4);
    expect(summary.status).toBe('completed_with_rejects');
    expect(summary.loans).toMatchObject({ read: 4, valid: 4, sent: 4, accepted: 1, rejected: 3, not_sent: 0 });
    expect(summary.requests).toMatchObject({ total: 4, sent: 4, not_sent: 0 });
    expect(summary.rejects).toBe(5);
    expect(summary.reasons?.reduce((n, r) => n + r.count, 0)).toBe(5);
    expect(summary.rejects_file).toBe(join(dir, 'rejects.csv'));
    expect(rejectLines(dir).map((l) => [l.loan_id, l.field, l.reason])).toEqual([
      ['L1', 'loan_amount', 'refused by the service: too big'],
      ['L1', 'loan_amount', 'refused by the service: odd'],
      ['L1', 'lead_id', 'refused by the service: unknown'],
      ['L2', 'loan_id', 'refused by the service as a conflict (HTTP 409): belongs to another customer'],
      ['L3', '', 'refused by the service: nothing said'],
    ]);
  });

  it('a customer refused by the service counts its loan as refused too', async () => {
    const dir = scratch({ 'c.ndjson': ndjson([customerRecord('C1')]) });
    const fake = fakeClient(() => {
      throw new ValidationError('bad', { customer_id: ['taken'] });
    });
    const { summary } = await push(dir, { kind: 'customer', input: 'c.ndjson' }, fake.client);
    expect(summary.customers).toMatchObject({ sent: 1, rejected: 1, accepted: 0 });
    expect(summary.loans).toMatchObject({ sent: 1, rejected: 1, accepted: 0 });
  });

  it('a loan or payment whose customer the service does not know (404): rejected, push the customer first', async () => {
    const dir = scratch({
      'loans.ndjson': ndjson([loanRecord('C1', 'L1'), loanRecord('C2', 'L2')]),
      'p.ndjson': ndjson([paymentRecord('L1', 'P1')]),
    });
    const notFound = (status?: number) => new NotFoundError('not found', status ? { http: { status } } : {});
    const loans = await push(
      dir,
      { kind: 'loan', input: 'loans.ndjson' },
      fakeClient((_r, i) => {
        throw notFound(i === 0 ? undefined : 410);
      }).client,
    );
    expect(loans.exitCode).toBe(4);
    expect(loans.summary.loans).toMatchObject({ sent: 2, rejected: 2, not_sent: 0 });
    expect(rejectLines(dir).map((l) => l.reason)).toEqual([
      'the service does not know customer C1 (HTTP 404): push it first',
      'the service does not know customer C2 (HTTP 410): push it first',
    ]);
    const payments = await push(
      dir,
      { kind: 'payment', input: 'p.ndjson', rejectsPath: 'p.csv' },
      fakeClient(() => {
        throw notFound(404);
      }).client,
    );
    expect(payments.summary.payments).toMatchObject({ sent: 1, rejected: 1 });
    expect(rejectLines(dir, 'p.csv')[0]).toMatchObject({
      customer_id: 'C1',
      loan_id: 'L1',
      payment_id: 'P1',
      reason: 'the service does not know customer C1 or its loan L1 (HTTP 404): push it first',
    });
  });
});

describe('single upserts: what stops a run', () => {
  const three = () => ndjson([loanRecord('C1', 'L1'), loanRecord('C1', 'L2'), loanRecord('C1', 'L3')]);

  it('refused credentials: the rest is not sent, exit 3', async () => {
    const dir = scratch({ 'loans.ndjson': three() });
    const fake = fakeClient((_r, i) => {
      if (i === 1) throw new AuthError('token refused');
      return undefined;
    });
    const { summary, exitCode } = await push(dir, { kind: 'loan', input: 'loans.ndjson' }, fake.client);
    expect(exitCode).toBe(3);
    expect(fake.sent).toHaveLength(2);
    expect(summary).toMatchObject({
      status: 'authentication_failed',
      exit_code: 3,
      error: { code: 'authentication', message: 'token refused' },
      requests: { total: 3, sent: 1, not_sent: 2 },
    });
    expect(summary.loans).toMatchObject({ read: 3, valid: 3, sent: 1, accepted: 1, not_sent: 2 });
    expect(summary.accounting.balanced).toBe(true);
  });

  it('a service that stays down: service_unavailable, exit 5; a customer not sent counts its loan', async () => {
    const dir = scratch({ 'c.ndjson': ndjson([customerRecord('C1'), customerRecord('C2'), customerRecord('C3')]) });
    const fake = fakeClient(() => {
      throw new RateLimitedError('still rate limited');
    });
    const { summary, exitCode } = await push(dir, { kind: 'customer', input: 'c.ndjson' }, fake.client);
    expect(exitCode).toBe(5);
    expect(fake.sent).toHaveLength(1);
    expect(summary).toMatchObject({ status: 'service_unavailable', requests: { total: 3, sent: 0, not_sent: 3 } });
    expect(summary.customers).toMatchObject({ not_sent: 3, sent: 0 });
    expect(summary.loans).toMatchObject({ not_sent: 3, sent: 0 });
    expect(summary.accounting.balanced).toBe(true);
  });

  it('a request the deployment refuses, or a 404 for a customer itself: failed, with its exit code', async () => {
    const dir = scratch({ 'loans.ndjson': three(), 'c.ndjson': ndjson([customerRecord('C1'), customerRecord('C2')]) });
    const refused = await push(
      dir,
      { kind: 'loan', input: 'loans.ndjson' },
      fakeClient(() => {
        throw new LeadctlError('request_refused', 2, 'HTTP 405');
      }).client,
    );
    expect(refused.exitCode).toBe(2);
    expect(refused.summary).toMatchObject({ status: 'failed', requests: { sent: 0, not_sent: 3 } });
    const missingRoute = await push(
      dir,
      { kind: 'customer', input: 'c.ndjson' },
      fakeClient(() => {
        throw new NotFoundError('no such route');
      }).client,
    );
    expect(missingRoute.summary).toMatchObject({ status: 'failed', exit_code: 2, error: { message: 'no such route' } });
    expect(missingRoute.summary.customers).toMatchObject({ rejected: 0, not_sent: 2 });
  });

  it('an error of leadctl itself is thrown, after what is in flight ends', async () => {
    const dir = scratch({ 'loans.ndjson': three() });
    const fake = fakeClient((_r, i) => {
      if (i === 0) throw new TypeError('a bug');
      return undefined;
    });
    await expect(push(dir, { kind: 'loan', input: 'loans.ndjson', concurrency: 2 }, fake.client)).rejects.toThrow(
      'a bug',
    );
    expect(fake.sent.length).toBeLessThan(3);
  });

  it('a second signal cuts off the requests in flight', async () => {
    const dir = scratch({ 'loans.ndjson': three() });
    const io = memoryIO({ cwd: dir });
    let signals = 0;
    const client = {
      checkCredentials: async () => ({ accessToken: 't', obtainedAt: 0, expiresAt: 1e15 }),
      send: (request: { signal: AbortSignal }) =>
        new Promise((_resolve, reject) => {
          // What the client throws when cut off: the signal's reason, not an error of its own.
          request.signal.addEventListener('abort', () => reject(request.signal.reason));
          if (signals++ === 0) {
            io.sendSignal('SIGINT');
            setTimeout(() => io.sendSignal('SIGINT'), 10);
          }
        }),
    } as unknown as ApiClient;
    const env = environment(io, async () => client);
    env.stopGraceMs = 60_000;
    const started = Date.now();
    const { summary, exitCode } = await runSinglePush(
      { kind: 'loan', input: 'loans.ndjson', concurrency: 1, validateOnly: false, rejectsPath: 'r.csv' },
      env,
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(exitCode).toBe(130);
    expect(summary.loans).toMatchObject({ sent: 0, not_sent: 3 });
  });
});

describe('single upserts: the run around the requests', () => {
  it('credentials are checked before the file is read: refused ones stop the run at once', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1')]) });
    let sent = 0;
    const client = {
      checkCredentials: async () => {
        throw new AuthError('no token');
      },
      send: async () => {
        sent++;
        return { status: 200, headers: {}, attempts: 1, body: {} };
      },
    } as unknown as ApiClient;
    await expect(push(dir, { kind: 'loan', input: 'loans.ndjson' }, client)).rejects.toBeInstanceOf(AuthError);
    expect(sent).toBe(0);
  });

  it('a named file whose extension says nothing: its format is seen from what it holds', async () => {
    const dir = scratch({ 'loans.export': ndjson([loanRecord('C1', 'L1'), loanRecord('C1', 'L2')]) });
    const { summary } = await push(dir, { kind: 'loan', input: 'loans.export' }, fakeClient().client);
    expect(summary.loans.accepted).toBe(2);
  });

  it('stages under LEADCTL_TMPDIR, and leaves nothing there', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1')]) });
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const during: string[][] = [];
    const fake = fakeClient(() => {
      during.push(readdirSync(tmp));
      return undefined;
    });
    const io = memoryIO({ cwd: dir, env: { LEADCTL_TMPDIR: tmp } });
    const { summary } = await runSinglePush(
      { kind: 'loan', input: 'loans.ndjson', concurrency: 1, validateOnly: false },
      environment(io, async () => fake.client),
    );
    expect(summary.loans.accepted).toBe(1);
    expect(during[0]).toHaveLength(1);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('the time taken, to a tenth of a second, and the rows per second', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1'), loanRecord('C1', 'L2')]) });
    const slow = fakeClient(() => new Promise((r) => setTimeout(() => r(undefined), 200)));
    const { summary } = await push(dir, { kind: 'loan', input: 'loans.ndjson' }, slow.client);
    expect(summary.elapsed_seconds).toBeGreaterThanOrEqual(0.3);
    expect(summary.elapsed_seconds).toBeLessThan(20);
    expect(Math.abs(summary.elapsed_seconds * 10 - Math.round(summary.elapsed_seconds * 10))).toBeLessThan(1e-9);
    expect(summary.rows_per_second).toBeGreaterThan(0);
    expect(summary.rows_per_second).toBeLessThanOrEqual(Math.ceil(2 / 0.3));
  });

  it('a signal waits for the requests in flight as long as the grace lasts, then cuts them off', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1'), loanRecord('C1', 'L2')]) });
    const io = memoryIO({ cwd: dir });
    const events: PushEvent[] = [];
    const client = {
      checkCredentials: async () => ({ accessToken: 't', obtainedAt: 0, expiresAt: 1e15 }),
      send: (request: { signal: AbortSignal }) =>
        new Promise((_resolve, reject) => {
          request.signal.addEventListener('abort', () => reject(request.signal.reason));
          setTimeout(() => io.sendSignal('SIGTERM'), 1);
        }),
    } as unknown as ApiClient;
    const env = environment(io, async () => client);
    env.stopGraceMs = 50;
    env.onEvent = (e) => events.push(e as PushEvent);
    const { summary, exitCode } = await runSinglePush(
      { kind: 'loan', input: 'loans.ndjson', concurrency: 1, validateOnly: false, rejectsPath: 'r.csv' },
      env,
    );
    expect(exitCode).toBe(143);
    expect(summary.error).toBeUndefined();
    expect(summary.loans).toMatchObject({ sent: 0, not_sent: 2 });
    expect(events.filter((e) => e.type === 'stopping')).toEqual([{ type: 'stopping', reason: 'SIGTERM', inFlight: 1 }]);
    // Once the run is over, a signal is no longer its business.
    io.sendSignal('SIGINT');
    expect(events.filter((e) => e.type === 'stopping')).toHaveLength(1);
  });
});

describe('single upserts: a rejects file that fills the disk', () => {
  it('stops the run: failed (exit 2), the file removed, its lines counted in a note, the rest not sent', async () => {
    const dir = scratch();
    const tiny = mountTinyFs(dir, 'full');
    if ('skipped' in tiny) {
      reportSkipped('a rejects file that fills the disk during a single push', tiny.skipped);
      expect(typeof tiny.skipped).toBe('string');
      return;
    }
    try {
      // 1,500 records refused here (about 150 KB of reject lines for a 64 KB disk), then good ones.
      const bad = Array.from({ length: 1500 }, (_, i) => loanRecord(`C${i}`, `L${i}`, { loan_amount: 'not money' }));
      const good = Array.from({ length: 5 }, (_, i) => loanRecord('Z9', `G${i}`));
      writeFileSync(join(dir, 'loans.ndjson'), ndjson([...bad, ...good]));
      const rejects = join(tiny.dir, 'rejects.csv');
      const fake = fakeClient();
      const { summary, exitCode } = await push(
        dir,
        { kind: 'loan', input: 'loans.ndjson', rejectsPath: rejects },
        fake.client,
      );
      expect(exitCode).toBe(2);
      expect(fake.sent).toHaveLength(0);
      expect(summary).toMatchObject({
        status: 'failed',
        exit_code: 2,
        rejects_file: null,
        rejects: 1500,
        error: { code: 'environment' },
        notes: [`the rejects file ${rejects} could not be written and was removed: its 1500 line(s) are counted here`],
      });
      expect(summary.loans).toMatchObject({ read: 1505, rejected: 1500, not_sent: 5, sent: 0 });
      expect(summary.accounting.balanced).toBe(true);
      expect(readdirSync(tiny.dir)).toEqual([]);
    } finally {
      tiny.unmount();
    }
  });

  it('the first error that stopped the run is the one reported, not the rejects file failing after it', async () => {
    const dir = scratch();
    const tiny = mountTinyFs(dir, 'full');
    if ('skipped' in tiny) {
      reportSkipped('a rejects file that fills the disk after a refused request', tiny.skipped);
      expect(typeof tiny.skipped).toBe('string');
      return;
    }
    try {
      // Two good loans first (by customer id): the first is refused as a request (405), which stops
      // the run; then 1,500 records refused here fill the disk with their reject lines.
      const good = [loanRecord('A0', 'G0'), loanRecord('A0', 'G1')];
      const bad = Array.from({ length: 1500 }, (_, i) => loanRecord(`C${i}`, `L${i}`, { loan_amount: 'not money' }));
      writeFileSync(join(dir, 'loans.ndjson'), ndjson([...good, ...bad]));
      const rejects = join(tiny.dir, 'rejects.csv');
      const fake = fakeClient(() => {
        throw new LeadctlError('request_refused', 2, 'HTTP 405 for the loans route');
      });
      const { summary } = await push(dir, { kind: 'loan', input: 'loans.ndjson', rejectsPath: rejects }, fake.client);
      expect(fake.sent).toHaveLength(1);
      expect(summary).toMatchObject({
        status: 'failed',
        exit_code: 2,
        error: { code: 'request_refused', message: 'HTTP 405 for the loans route' },
        rejects_file: null,
        notes: [`the rejects file ${rejects} could not be written and was removed: its 1500 line(s) are counted here`],
      });
      expect(summary.loans).toMatchObject({ read: 1502, rejected: 1500, not_sent: 2, sent: 0 });
    } finally {
      tiny.unmount();
    }
  });
});

describe('single upserts: more of the edges', () => {
  it('a customer whose lead_loan is not an object: rejected on the field lead_loan itself', async () => {
    const dir = scratch({ 'c.ndjson': ndjson([{ customer_id: 'C1', lead_loan: 5 }]) });
    const { summary } = await push(dir, { kind: 'customer', input: 'c.ndjson' }, fakeClient().client);
    expect(summary.customers.rejected).toBe(1);
    expect(rejectLines(dir).map((l) => l.field)).toContain('lead_loan');
    expect(rejectLines(dir).map((l) => l.field)).not.toContain('lead_loan.lead_loan');
  });

  it('a file named .txt is read as CSV, whatever it holds', async () => {
    const dir = scratch({ 'loans.txt': ndjson([loanRecord('C1', 'L1')]) });
    await expect(push(dir, { kind: 'loan', input: 'loans.txt' }, fakeClient().client)).rejects.toThrow(/not valid CSV/);
  });

  it('an empty input: the error names it', async () => {
    const dir = scratch({ 'nothing.ndjson': '' });
    await expect(push(dir, { kind: 'loan', input: 'nothing.ndjson' }, fakeClient().client)).rejects.toThrow(
      /^nothing\.ndjson: no records/,
    );
  });

  it('reading, then sending: the staged event tells the rows and the seconds it took', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1')]) });
    const events: PushEvent[] = [];
    await push(dir, { kind: 'loan', input: 'loans.ndjson' }, fakeClient().client, events);
    const staged = events.find((e) => e.type === 'staged') as { rows: number; seconds: number };
    expect(staged.rows).toBe(1);
    expect(staged.seconds).toBeGreaterThanOrEqual(0);
    expect(staged.seconds).toBeLessThan(60);
  });

  it('a signal while a pipe is read stops the reading at once', async () => {
    const dir = scratch();
    const io = memoryIO({ cwd: dir });
    const pipe = new PassThrough();
    pipe.write(`${JSON.stringify(loanRecord('C1', 'L1'))}\n`);
    Object.assign(io, { stdin: pipe });
    const run = runSinglePush(
      { kind: 'loan', input: '-', format: 'ndjson', concurrency: 1, validateOnly: false },
      environment(io, async () => fakeClient().client),
    );
    setTimeout(() => io.sendSignal('SIGINT'), 50);
    try {
      const outcome = await Promise.race([
        run.then(
          () => 'ended',
          (err: unknown) => err,
        ),
        new Promise((r) => setTimeout(() => r('still reading'), 10_000)),
      ]);
      expect(outcome).toBeInstanceOf(InterruptedError);
    } finally {
      pipe.end();
      await run.catch(() => undefined);
    }
  });

  it('the first signal lets the requests in flight finish within the grace', async () => {
    const dir = scratch({ 'loans.ndjson': ndjson([loanRecord('C1', 'L1'), loanRecord('C1', 'L2')]) });
    const io = memoryIO({ cwd: dir });
    let sent = 0;
    const client = {
      checkCredentials: async () => ({ accessToken: 't', obtainedAt: 0, expiresAt: 1e15 }),
      send: (request: { signal: AbortSignal }) =>
        new Promise((resolve, reject) => {
          sent++;
          request.signal.addEventListener('abort', () => reject(request.signal.reason));
          // Answered after the default grace (1 s) would have run out, well within this run's.
          setTimeout(() => resolve({ status: 200, headers: {}, attempts: 1, body: { data: {} } }), 1500);
          setTimeout(() => io.sendSignal('SIGINT'), 1);
        }),
    } as unknown as ApiClient;
    const env = environment(io, async () => client);
    env.stopGraceMs = 60_000;
    const { summary, exitCode } = await runSinglePush(
      { kind: 'loan', input: 'loans.ndjson', concurrency: 1, validateOnly: false, rejectsPath: 'r.csv' },
      env,
    );
    expect(exitCode).toBe(130);
    expect(sent).toBe(1);
    expect(summary.loans).toMatchObject({ sent: 1, accepted: 1, not_sent: 1 });
  });

  it('a bug that ends the run still leaves the rejects file written in full', async () => {
    const dir = scratch({
      'loans.ndjson': ndjson([loanRecord('C1', 'L1', { loan_amount: 'x' }), loanRecord('C1', 'L2')]),
    });
    const fake = fakeClient(() => {
      throw new TypeError('a bug');
    });
    await expect(push(dir, { kind: 'loan', input: 'loans.ndjson' }, fake.client)).rejects.toThrow('a bug');
    expect(rejectLines(dir).map((l) => [l.loan_id, l.field])).toEqual([['L1', 'loan_amount']]);
    expect(readdirSync(dir).sort()).toEqual(['loans.ndjson', 'rejects.csv']);
  });
});
