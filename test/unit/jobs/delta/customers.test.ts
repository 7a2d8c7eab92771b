import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ServiceError, ValidationError } from '../../../../src/errors.js';
import { canonicalPayload, CustomerDelta } from '../../../../src/jobs/delta/customers.js';
import { DeltaRecord, forgetProfile, recordPath } from '../../../../src/jobs/delta/record.js';
import { runBatchPush, type BatchPushRequest } from '../../../../src/jobs/push/batch.js';
import { renderSummary } from '../../../../src/jobs/push/summary.js';
import type { SentPayload } from '../../../../src/jobs/push/validate.js';
import type { RawCustomer } from '../../../../src/ingest/lms/groups.js';
import { environment, fakeClient, request, type FakeOptions } from '../../../helpers/batch-push.js';
import { memoryIO } from '../../../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { batchShapeLines, writeExport } from '../../../../fixtures/lms/generate.mjs';

const MAPPING = fileURLToPath(new URL('../../../../fixtures/lms/mapping.json', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-delta-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Row = Record<string, string>;

let serial = 0;
/** A private home for one scenario: its own config folder (the key) and state folder (the record). */
function home() {
  const dir = join(work, `home-${serial++}`);
  return { LEADCTL_CONFIG_DIR: join(dir, 'config'), LEADCTL_STATE_DIR: join(dir, 'state') };
}

async function exportRows(customers: number, seed = 21): Promise<{ header: string[]; rows: Row[] }> {
  const out = join(work, `gen-${seed}-${customers}`);
  await writeExport({ out, customers, seed, paymentsPerCustomer: 3, shapes: ['denormalised'] });
  const text = readFileSync(join(out, 'export.csv'), 'utf8');
  const rows = parse(text, { columns: true }) as Row[];
  return { header: Object.keys(rows[0]!), rows };
}

function writeRows(
  name: string,
  header: string[],
  rows: Row[],
  options: { crlf?: boolean; quoteAll?: boolean } = {},
): string {
  const path = join(work, name);
  writeFileSync(
    path,
    stringify(rows, {
      header: true,
      columns: header,
      record_delimiter: options.crlf ? 'windows' : 'unix',
      quoted: options.quoteAll === true,
    }),
  );
  return path;
}

function shuffled<T>(list: T[], seed: number): T[] {
  const out = [...list];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function push(
  env: Record<string, string>,
  file: string,
  overrides: Partial<BatchPushRequest> = {},
  answers: FakeOptions = {},
) {
  const { client, bodies } = fakeClient(answers);
  const outcome = await runBatchPush(
    request({
      inputs: [{ path: file, role: 'auto' }],
      mappingPath: MAPPING,
      chunkSize: 40,
      delta: 'changed-only',
      rejectsPath: join(work, `rejects-${serial++}.csv`),
      ...overrides,
    }),
    environment(memoryIO({ cwd: work, env }), client),
  );
  const sent = bodies.flatMap((b) => b.customers.map((c) => c.customer_id));
  return { outcome, summary: outcome.summary, sent };
}

describe('canonical payloads', () => {
  it('ignore the order of loans and of payments, and see every value', () => {
    const p1 = JSON.stringify({ payment_id: 'p1', amount: 1 });
    const p2 = JSON.stringify({ payment_id: 'p2', amount: 2 });
    const a: SentPayload = {
      loans: [
        { fields: { loan_id: 'A', amount: 5 }, payments: [p1, p2] },
        { fields: { loan_id: 'B' }, payments: [] },
      ],
    };
    const b: SentPayload = {
      loans: [
        { fields: { loan_id: 'B' }, payments: [] },
        { fields: { loan_id: 'A', amount: 5 }, payments: [p2, p1] },
      ],
    };
    expect(canonicalPayload('1', a)).toBe(canonicalPayload('1', b));
    expect(canonicalPayload('2', a)).not.toBe(canonicalPayload('1', a));
    const c = structuredClone(a);
    c.loans[0]!.payments[1] = JSON.stringify({ payment_id: 'p2', amount: 3 });
    expect(canonicalPayload('1', c)).not.toBe(canonicalPayload('1', a));
    const e = structuredClone(a);
    e.loans[0]!.fields.amount = 6;
    expect(canonicalPayload('1', e)).not.toBe(canonicalPayload('1', a));
    // A payment moved to another loan is a change.
    const d = structuredClone(a);
    d.loans[1]!.payments.push(d.loans[0]!.payments.pop()!);
    expect(canonicalPayload('1', d)).not.toBe(canonicalPayload('1', a));
  });
});

describe("raw lines' digests", () => {
  it('are given to the raws the look asks about, in every mode, and are those the check computes from the lines', () => {
    for (const mode of ['full', 'changed-only'] as const) {
      const env = home();
      const target = { profile: 'default', baseUrl: 'http://127.0.0.1:9' };
      const record = DeltaRecord.open(env.LEADCTL_STATE_DIR, env.LEADCTL_CONFIG_DIR, target, true)!;
      const delta = new CustomerDelta(record, { mode, maxAgeDays: 30 });
      delta.begin('run-1', 1);
      delta.useMapping({ spec: { columns: {} }, identity: true } as never);
      try {
        const asked = ['A', 'B'].map(
          (id): RawCustomer => ({ customerId: id, context: 'rows\nh', text: `${id},1\n${id},2\n` }),
        );
        expect(delta.unchangedRaw(asked)).toEqual([undefined, undefined]);
        const [a, b] = asked;
        expect(a!.digest).toMatch(/^[0-9a-f]+$/);
        expect(b!.digest).not.toBe(a!.digest);
        const payload: SentPayload = { loans: [] };
        // Hashed from the lines when the look did not ask (or kept them): the same digest.
        const fromLines = delta.digestOf('A', payload, {
          customerId: 'A',
          context: 'rows\nh',
          text: 'A,1\nA,2\n',
          loans: 0,
          payments: 0,
        });
        expect(fromLines.raw!.digest).toBe(a!.digest);
        // Given, the digest is used as it is: the look drops the lines once it has it.
        const fromDigest = delta.digestOf('A', payload, { ...a!, text: '', loans: 0, payments: 0 });
        expect(fromDigest.raw!.digest).toBe(a!.digest);
      } finally {
        delta.close();
      }
    }
  });
});

describe('settling in batches', () => {
  it('writes acknowledged customers by the thousands, in the order settled, and all of them when flushed', () => {
    const env = home();
    const target = { profile: 'default', baseUrl: 'http://127.0.0.1:9' };
    const record = DeltaRecord.open(env.LEADCTL_STATE_DIR, env.LEADCTL_CONFIG_DIR, target, true)!;
    const delta = new CustomerDelta(record, { mode: 'changed-only', maxAgeDays: 30 });
    delta.begin('run-1', 1);
    const c = (n: number, payload = 'p') => ({
      id: record.digest('customer', String(n)),
      payload: record.digest('payload', `${payload}${n}`),
    });
    try {
      // Remembered then forgotten, forgotten then remembered: the last word stands.
      delta.settle([c(1), c(2)], [], 10);
      delta.settle([c(3)], [c(1)], 11);
      delta.settle([], [c(3)], 12);
      delta.settle([c(3, 'again')], [], 13);
      expect(record.customerCount).toBe(0);
      delta.flushSettled();
      expect(record.customer(c(1).id)).toBeUndefined();
      expect(record.customer(c(2).id)).toEqual({ payload: c(2).payload, sentAt: 10, run: 'run-1' });
      expect(record.customer(c(3).id)).toEqual({ payload: c(3, 'again').payload, sentAt: 13, run: 'run-1' });
      // A few thousand settled are written without being asked.
      for (let start = 100; start < 5100; start += 1000)
        delta.settle(
          Array.from({ length: 1000 }, (_, i) => c(start + i)),
          [],
          20,
        );
      expect(record.customerCount).toBe(5002);
      delta.settle([c(9999)], [], 30);
      expect(record.customerCount).toBe(5002);
      delta.flushSettled();
      delta.flushSettled();
      expect(record.customerCount).toBe(5003);
    } finally {
      delta.close();
    }
  });

  it('a record that cannot be written at the end (a full disk) fails the run, with every send counted', async () => {
    const env = home();
    const { header, rows } = await exportRows(30, 67);
    const file = writeRows('settle-full.csv', header, rows);
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const settleAll = vi.spyOn(DeltaRecord.prototype, 'settleAll').mockImplementation(() => {
      throw full;
    });
    try {
      const { summary, sent } = await push(env, file);
      expect(settleAll).toHaveBeenCalled();
      expect(sent).toHaveLength(30);
      expect(summary.status).toBe('failed');
      expect(summary.exit_code).toBe(2);
      expect(summary.customers).toMatchObject({ read: 30, accepted: 30 });
    } finally {
      settleAll.mockRestore();
    }
    // Nothing was recorded: the next run sends them all again.
    expect((await push(env, file)).sent).toHaveLength(30);
  });

  it('a push writes every acknowledged customer before it ends, however few', async () => {
    const env = home();
    const { header, rows } = await exportRows(30, 61);
    const file = writeRows('settle.csv', header, rows);
    expect((await push(env, file)).sent).toHaveLength(30);
    expect((await push(env, file)).summary.customers).toMatchObject({ sent: 0, unchanged: 30 });
  });
});

describe('customers batch --changed-only', () => {
  it('sends everything the first time, nothing when the same export comes back in another order and format', async () => {
    const env = home();
    const { header, rows } = await exportRows(200);
    const first = await push(env, writeRows('a.csv', header, rows));
    expect(first.summary.customers).toMatchObject({ read: 200, sent: 200, accepted: 200, unchanged: 0 });
    expect(new Set(first.sent).size).toBe(200);

    // Other row order, CRLF line ends, every field quoted: the same data.
    const second = await push(env, writeRows('b.csv', header, shuffled(rows, 7), { crlf: true, quoteAll: true }));
    expect(second.sent).toEqual([]);
    expect(second.summary.status).toBe('completed');
    expect(second.summary.customers).toMatchObject({ read: 200, valid: 200, sent: 0, unchanged: 200 });
    expect(second.summary.payments.unchanged).toBe(first.summary.payments.accepted);
    expect(second.summary.loans.unchanged).toBe(first.summary.loans.accepted);
    expect(second.summary.accounting.balanced).toBe(true);
    expect(renderSummary(second.summary)).toMatch(/unchanged/);
  });

  it('NDJSON: lines recorded as sent are never parsed; a changed line, or one whose id the look cannot read, is', async () => {
    const env = home();
    const lines = [...batchShapeLines({ customers: 50, seed: 71, paymentsPerCustomer: 3 })];
    // Keys in another order: its id is not its first key, so the look never knows it by its line.
    const moved = JSON.parse(lines[10]!);
    lines[10] = JSON.stringify({ loans: moved.loans, 'Cust No': moved['Cust No'] });
    // Its id twice: the first says one customer, the whole line (the last one wins) another.
    const twice = JSON.parse(lines[20]!);
    lines[20] = `{"Cust No":"1000000",${JSON.stringify({ ...twice }).slice(1)}`;
    const file = join(work, `lines-${serial++}.ndjson`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const first = await push(env, file);
    expect(first.sent).toHaveLength(50);
    expect(first.sent).toContain(twice['Cust No']);
    expect(first.sent).not.toContain('1000000');

    const again = await push(env, file);
    expect(again.sent).toEqual([]);
    expect(again.summary.customers).toMatchObject({ read: 50, unchanged: 50 });
    // Those two are found unchanged by their payload only.
    expect(again.summary.delta!.unchanged_raw).toBe(48);

    const edited = JSON.parse(lines[30]!);
    edited.loans[0]['Loan Status'] = edited.loans[0]['Loan Status'] === 'CUR' ? 'PIF' : 'CUR';
    lines[30] = JSON.stringify(edited);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const third = await push(env, file);
    expect(third.sent).toEqual([edited['Cust No']]);
    expect(third.summary.customers).toMatchObject({ read: 50, sent: 1, unchanged: 49 });
    expect(third.summary.delta!.unchanged_raw).toBe(47);
  });

  it('sends exactly the customers with a changed payment, a new loan, a removed payment, and the new ones', async () => {
    const env = home();
    const { header, rows } = await exportRows(120, 23);
    await push(env, writeRows('c0.csv', header, rows));

    const ids = [...new Set(rows.map((r) => r['Cust No']!))];
    const changedPayment = ids[3]!;
    const newLoan = ids[10]!;
    // A customer with at least two payment rows, so that removing one leaves a loan.
    const removedPayment = ids.find(
      (id) => id !== changedPayment && id !== newLoan && rows.filter((r) => r['Cust No'] === id).length >= 2,
    )!;
    let edited = rows.map((r) => ({ ...r }));
    const payment = edited.find((r) => r['Cust No'] === changedPayment)!;
    payment['Trans Amt'] = '$1,234.56';
    const template = edited.find((r) => r['Cust No'] === newLoan)!;
    edited.push({
      ...template,
      'Loan No': `${template['Loan No']}-NEW`,
      'Lead Loan': 'N',
      'Trans ID': `${template['Trans ID']}-NEW`,
    });
    const drop = edited.findIndex((r) => r['Cust No'] === removedPayment);
    edited.splice(drop, 1);
    const donor = edited.filter((r) => r['Cust No'] === ids[50]);
    edited = edited.concat(
      donor.map((r) => ({
        ...r,
        'Cust No': 'NEW-1',
        'Trans ID': `${r['Trans ID']}-N1`,
        'Loan No': `${r['Loan No']}-N1`,
      })),
    );

    const next = await push(env, writeRows('c1.csv', header, shuffled(edited, 3)));
    expect(next.sent.sort()).toEqual([changedPayment, newLoan, removedPayment, 'NEW-1'].sort());
    expect(next.summary.customers).toMatchObject({ read: 121, sent: 4, accepted: 4, unchanged: 117 });
    expect(next.summary.accounting.balanced).toBe(true);
  });

  it('does not remember what the service skipped or refused, and sends it again next time', async () => {
    const env = home();
    const { header, rows } = await exportRows(100, 29);
    const file = writeRows('d.csv', header, rows);
    const target = rows[5]!['Cust No']!;
    let refusedIds: string[] = [];
    const first = await push(
      env,
      file,
      { chunkSize: 25 },
      {
        answer: (n, body) => {
          if (n === 3) refusedIds = body.customers.map((c) => c.customer_id);
          if (n === 3) return new ValidationError('the request was refused', {}, { details: { status: 422 } });
          const i = body.customers.findIndex((c) => c.customer_id === target);
          return i >= 0
            ? { skipped: [{ path: `customers.${i}.loans.0`, id: null, errors: ['lead_id: unknown lead'] }] }
            : 'ok';
        },
      },
    );
    expect(first.summary.customers.rejected).toBe(25);
    expect(first.summary.loans.rejected).toBeGreaterThan(25);
    expect(refusedIds).toHaveLength(25);

    const second = await push(env, file, { chunkSize: 25 });
    expect(second.sent.sort()).toEqual([target, ...refusedIds].sort());
    const third = await push(env, file, { chunkSize: 25 });
    expect(third.sent).toEqual([]);
  });

  it('remembers what a 2xx without per-record detail took (the service acknowledged it)', async () => {
    const env = home();
    const { header, rows } = await exportRows(30, 31);
    const file = writeRows('e.csv', header, rows);
    const { client } = fakeClient();
    // A service that answers `{}`: every customer unconfirmed.
    const bare = {
      ...client,
      send: async (spec: Parameters<typeof client.send>[0]) => ({ ...(await client.send(spec)), body: {} }),
    } as typeof client;
    const first = await runBatchPush(
      request({ inputs: [{ path: file, role: 'auto' }], mappingPath: MAPPING, delta: 'changed-only' }),
      environment(memoryIO({ cwd: work, env }), bare),
    );
    expect(first.summary.customers).toMatchObject({ sent: 30, unconfirmed: 30 });
    expect((await push(env, file)).sent).toEqual([]);
  });

  it('resends customers last sent more than --max-age days ago, and --full sends and refreshes everything', async () => {
    const env = home();
    const { header, rows } = await exportRows(20, 37);
    const file = writeRows('f.csv', header, rows);
    const day = 24 * 3600 * 1000;
    const at = (ms: number) => () => new Date(ms);
    const t0 = Date.parse('2026-10-01T00:00:00Z');
    const run = async (now: number, overrides: Partial<BatchPushRequest>) => {
      const { client, bodies } = fakeClient();
      const outcome = await runBatchPush(
        request({ inputs: [{ path: file, role: 'auto' }], mappingPath: MAPPING, ...overrides }),
        environment(memoryIO({ cwd: work, env, now: at(now) }), client),
      );
      return { summary: outcome.summary, sent: bodies.flatMap((b) => b.customers).length };
    };
    expect((await run(t0, { delta: 'changed-only' })).sent).toBe(20);
    expect((await run(t0 + 29 * day, { delta: 'changed-only' })).sent).toBe(0);
    expect((await run(t0 + 31 * day, { delta: 'changed-only' })).sent).toBe(20);
    expect((await run(t0 + 32 * day, { delta: 'changed-only', maxAgeDays: 1 })).sent).toBe(0);
    expect((await run(t0 + 40 * day, { delta: 'changed-only', maxAgeDays: 7 })).sent).toBe(20);
    const full = await run(t0 + 41 * day, { delta: 'full' });
    expect(full.sent).toBe(20);
    expect(full.summary.delta).toMatchObject({ mode: 'full' });
    expect((await run(t0 + 42 * day, { delta: 'changed-only', maxAgeDays: 7 })).sent).toBe(0);
  });

  it('validate-only says how many would be sent, and makes no record', async () => {
    const env = home();
    const { header, rows } = await exportRows(40, 41);
    const file = writeRows('g.csv', header, rows);
    const check = await push(env, file, { validateOnly: true });
    expect(check.sent).toEqual([]);
    expect(check.summary.customers).toMatchObject({ valid: 40, unchanged: 0 });
    expect(check.summary.delta?.record).toBeNull();
    await push(env, file);
    const again = await push(env, file, { validateOnly: true });
    expect(again.summary.customers).toMatchObject({ valid: 40, unchanged: 40 });
    expect(again.summary.accounting.balanced).toBe(true);
    expect(renderSummary(again.summary)).toMatch(/would send/);
  });

  it('an interrupted run, resumed, sends exactly the rest of the same delta', async () => {
    const env = home();
    const { header, rows } = await exportRows(300, 43);
    await push(env, writeRows('h0.csv', header, rows));
    // 150 customers change.
    const ids = [...new Set(rows.map((r) => r['Cust No']!))];
    const changed = new Set(ids.filter((_, i) => i % 2 === 0));
    const edited = rows.map((r) =>
      changed.has(r['Cust No']!) ? { ...r, 'Loan Status': r['Loan Status'] === 'PIF' ? 'CUR' : 'PIF' } : r,
    );
    const file = writeRows('h1.csv', header, edited);
    const down = await push(
      env,
      file,
      { chunkSize: 25, concurrency: 1 },
      { answer: (n) => (n >= 2 ? new ServiceError('service unavailable', 503) : 'ok') },
    );
    expect(down.outcome.exitCode).toBe(5);
    // What was not read to the end when the service went away is counted not sent, changed or not.
    expect(down.summary.customers.accepted).toBe(50);
    expect(down.summary.customers.unchanged + down.summary.customers.not_sent).toBe(250);

    // Resumed the same way, it sends only what was not acknowledged, choosing customers as before.
    const rest = await push(env, file, { chunkSize: 25, resume: true });
    expect(rest.summary.resumed).toBe(true);
    expect(rest.summary.requests).toMatchObject({ total: 6, acknowledged_before: 2, sent: 4 });
    expect(rest.sent).toHaveLength(100);
    expect(new Set([...down.sent.slice(0, 50), ...rest.sent])).toEqual(changed);
    expect(rest.summary.customers).toMatchObject({ accepted: 150, unchanged: 150, not_sent: 0 });
  });

  it('a completed push has nothing to resume: the weekly --full --resume after a nightly --changed-only sends everything', async () => {
    const env = home();
    const { header, rows } = await exportRows(60, 53);
    const file = writeRows('j.csv', header, rows);
    expect((await push(env, file, { resume: true })).sent).toHaveLength(60);
    const weekly = await push(env, file, { resume: true, delta: 'full' });
    expect(weekly.summary.resumed).toBe(false);
    expect(weekly.sent).toHaveLength(60);
    expect((await push(env, file, { resume: true })).summary.customers.sent).toBe(0);
  });

  it('keeps no customer id, loan id or payment id in clear, in a file only its owner can read; forget deletes it', async () => {
    const env = home();
    const { header, rows } = await exportRows(50, 47);
    const first = await push(env, writeRows('i.csv', header, rows));
    const path = first.summary.delta!.record!;
    expect(path).toBe(recordPath(env.LEADCTL_STATE_DIR, { profile: 'default', baseUrl: 'http://127.0.0.1:9' }));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const bytes = readFileSync(path).toString('latin1');
    for (const r of rows.slice(0, 30)) {
      for (const value of [r['Cust No'], r['Loan No'], r['Trans ID'], r['Lead ID']].filter(Boolean))
        expect(
          bytes.includes(value!),
          `${value} in ${bytes.slice(Math.max(0, bytes.indexOf(value!) - 40), bytes.indexOf(value!) + 40)}`,
        ).toBe(false);
    }
    const gone = forgetProfile(env.LEADCTL_STATE_DIR, env.LEADCTL_CONFIG_DIR, 'default');
    expect(gone.records).toEqual([path]);
    expect(gone.key).not.toBeNull();
    expect((await push(env, writeRows('i2.csv', header, rows))).sent).toHaveLength(50);
  });
});

describe('the record shared by two processes', () => {
  it('a run looking customers up does not keep another from writing (lists update beside a push)', async () => {
    const env = home();
    const target = { profile: 'default', baseUrl: 'http://127.0.0.1:9' };
    const reader = DeltaRecord.open(env.LEADCTL_STATE_DIR, env.LEADCTL_CONFIG_DIR, target, true)!;
    const writer = DeltaRecord.open(env.LEADCTL_STATE_DIR, env.LEADCTL_CONFIG_DIR, target, true)!;
    try {
      for (let i = 0; i < 10; i++) reader.customer(reader.digest('customer', String(i)));
      // The reader now sits idle between lookups (waiting on its input): within its short bound the file is free.
      await new Promise((r) => setTimeout(r, 120));
      const started = Date.now();
      writer.rememberList(7, 'Social Security Numbers', [writer.digest('list-value', '123456789')], Date.now());
      // Waiting for the reader's lock would take the 5 s busy timeout (or fail): well under it means free.
      expect(Date.now() - started).toBeLessThan(4000);
      expect(reader.list(7)).toMatchObject({ count: 1 });
    } finally {
      reader.close();
      writer.close();
    }
  });
});
