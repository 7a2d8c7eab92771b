import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as csv from '../../../../src/ingest/lms/csv.js';
import { runBatchPush, type BatchPushRequest } from '../../../../src/jobs/push/batch.js';
import { renderSummary } from '../../../../src/jobs/push/summary.js';
import { environment, fakeClient, request } from '../../../helpers/batch-push.js';
import { memoryIO } from '../../../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../../../fixtures/lms/generate.mjs';

// Conversion is counted: a customer known unchanged from its raw rows must never reach it.
vi.mock('../../../../src/ingest/lms/csv.js', async (original) => {
  const real = await original<typeof import('../../../../src/ingest/lms/csv.js')>();
  return { ...real, readLoan: vi.fn(real.readLoan), readPayment: vi.fn(real.readPayment) };
});
const readLoan = vi.mocked(csv.readLoan);

const MAPPING = fileURLToPath(new URL('../../../../fixtures/lms/mapping.json', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-raw-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
beforeEach(() => {
  readLoan.mockClear();
});

type Row = Record<string, string>;
let serial = 0;

function home() {
  const dir = join(work, `home-${serial++}`);
  return { LEADCTL_CONFIG_DIR: join(dir, 'config'), LEADCTL_STATE_DIR: join(dir, 'state') };
}

/** A sorted two-file export, as rows to edit. */
async function twoFiles(customers: number, seed: number) {
  const out = join(work, `gen-${seed}`);
  await writeExport({ out, customers, seed, paymentsPerCustomer: 3, shapes: ['separate', 'denormalised'] });
  const read = (name: string) => parse(readFileSync(join(out, name), 'utf8'), { columns: true }) as Row[];
  return { loans: read('loans.csv'), payments: read('payments.csv'), rows: read('export.csv') };
}

function write(name: string, rows: Row[], options: { crlf?: boolean; quoteAll?: boolean } = {}): string {
  const path = join(work, `${serial++}-${name}`);
  writeFileSync(
    path,
    stringify(rows, {
      header: true,
      columns: Object.keys(rows[0]!),
      record_delimiter: options.crlf ? 'windows' : 'unix',
      quoted: options.quoteAll === true,
    }),
  );
  return path;
}

async function push(
  env: Record<string, string>,
  inputs: BatchPushRequest['inputs'],
  overrides: Partial<BatchPushRequest> = {},
  now?: () => Date,
) {
  const { client, bodies } = fakeClient();
  const outcome = await runBatchPush(
    request({
      inputs,
      mappingPath: MAPPING,
      chunkSize: 50,
      delta: 'changed-only',
      rejectsPath: join(work, `rejects-${serial++}.csv`),
      ...overrides,
    }),
    environment(memoryIO({ cwd: work, env, ...(now ? { now } : {}) }), client),
  );
  const sent = bodies.flatMap((b) => b.customers.map((c) => c.customer_id));
  return { outcome, summary: outcome.summary, sent };
}

const pair = (loans: string, payments: string): BatchPushRequest['inputs'] => [
  { path: loans, role: 'loans' },
  { path: payments, role: 'payments' },
];
const flip = (r: Row): Row => ({ ...r, 'Loan Status': r['Loan Status'] === 'PIF' ? 'CUR' : 'PIF' });

describe('--changed-only: customers whose raw rows are unchanged', () => {
  it('are counted unchanged without conversion; only the changed one is converted and sent', async () => {
    const env = home();
    const { loans, payments } = await twoFiles(60, 61);
    const first = await push(env, pair(write('l.csv', loans), write('p.csv', payments)), { delta: 'full' });
    expect(first.sent).toHaveLength(60);
    expect(readLoan).toHaveBeenCalledTimes(loans.length);

    readLoan.mockClear();
    const target = loans[7]!['Cust No']!;
    const edited = loans.map((r) => (r['Cust No'] === target ? flip(r) : r));
    const next = await push(env, pair(write('l2.csv', edited), write('p2.csv', payments)));
    expect(next.sent).toEqual([target]);
    // Only the changed customer's loans were converted.
    expect(readLoan).toHaveBeenCalledTimes(loans.filter((r) => r['Cust No'] === target).length);
    expect(next.summary.customers).toMatchObject({ read: 60, valid: 60, sent: 1, unchanged: 59 });
    expect(next.summary.payments.unchanged + next.summary.payments.sent).toBe(payments.length);
    expect(next.summary.loans.unchanged + next.summary.loans.sent).toBe(loans.length);
    expect(next.summary.delta?.unchanged_raw).toBe(59);
    expect(next.summary.accounting.balanced).toBe(true);
    expect(renderSummary(next.summary)).toMatch(/59 unchanged customers known from their raw rows/);
  });

  it('rows in another order, or spelt by another writer, take the full path once: nothing sent, then learnt', async () => {
    const env = home();
    const { rows } = await twoFiles(40, 67);
    await push(env, [{ path: write('e.csv', rows), role: 'auto' }], { delta: 'full' });
    // Each customer's rows reversed, the file still sorted by customer.
    const byCustomer = new Map<string, Row[]>();
    for (const r of rows) byCustomer.set(r['Cust No']!, [...(byCustomer.get(r['Cust No']!) ?? []), r]);
    const reordered = [...byCustomer.values()].flatMap((list) => list.reverse());
    const withTwoRows = [...byCustomer.values()].filter((list) => list.length > 1).length;
    readLoan.mockClear();
    const file = write('e2.csv', reordered);
    const next = await push(env, [{ path: file, role: 'auto' }]);
    expect(next.sent).toEqual([]);
    expect(next.summary.customers.unchanged).toBe(40);
    expect(next.summary.delta?.unchanged_raw).toBe(40 - withTwoRows);
    expect(readLoan).toHaveBeenCalled();
    readLoan.mockClear();
    const learnt = await push(env, [{ path: file, role: 'auto' }]);
    expect(learnt.summary.delta?.unchanged_raw).toBe(40);
    expect(readLoan).not.toHaveBeenCalled();
    // CRLF and every value quoted: the same rows, other lines.
    const spelt = write('e3.csv', reordered, { crlf: true, quoteAll: true });
    const other = await push(env, [{ path: spelt, role: 'auto' }]);
    expect(other.sent).toEqual([]);
    expect(other.summary.delta?.unchanged_raw).toBe(0);
    expect((await push(env, [{ path: spelt, role: 'auto' }])).summary.delta?.unchanged_raw).toBe(40);
  });

  it('where a loan row says something else than its other rows, which one is last still counts', async () => {
    const env = home();
    const { rows } = await twoFiles(20, 71);
    // A customer with one loan and at least two rows: its last row says the loan is paid in full.
    const counts = new Map<string, number>();
    for (const r of rows)
      counts.set(`${r['Cust No']}|${r['Loan No']}`, (counts.get(`${r['Cust No']}|${r['Loan No']}`) ?? 0) + 1);
    const target = rows.find((r) => counts.get(`${r['Cust No']}|${r['Loan No']}`)! >= 2)!;
    const ofLoan = (r: Row) => r['Cust No'] === target['Cust No'] && r['Loan No'] === target['Loan No'];
    const indices = rows.map((r, i) => (ofLoan(r) ? i : -1)).filter((i) => i >= 0);
    const base = rows.map((r) => ({ ...r }));
    for (const i of indices) base[i]!['Loan Status'] = 'CUR';
    base[indices[indices.length - 1]!]!['Loan Status'] = 'PIF';
    await push(env, [{ path: write('w.csv', base), role: 'auto' }], { delta: 'full' });
    // The same rows, the PIF one now first: the loan is sent as Current.
    const swapped = base.map((r) => ({ ...r }));
    const a = indices[0]!;
    const b = indices[indices.length - 1]!;
    [swapped[a], swapped[b]] = [swapped[b]!, swapped[a]!];
    const next = await push(env, [{ path: write('w2.csv', swapped), role: 'auto' }]);
    expect(next.sent).toEqual([target['Cust No']]);
    expect(next.summary.delta?.unchanged_raw).toBe(19);
  });

  it('a mapping change sends every customer down the full path; what is unchanged there is learnt for next time', async () => {
    const env = home();
    const { loans, payments } = await twoFiles(30, 73);
    const files = pair(write('l.csv', loans), write('p.csv', payments));
    await push(env, files, { delta: 'full' });
    // The same conversions, in a mapping that reads differently: nothing can be taken as known.
    const other = join(work, 'other-mapping.json');
    const spec = JSON.parse(readFileSync(MAPPING, 'utf8')) as { description: string };
    writeFileSync(other, JSON.stringify({ ...spec, description: 'the same export, described again' }));
    readLoan.mockClear();
    const changed = await push(env, files, { mappingPath: other });
    expect(readLoan).toHaveBeenCalledTimes(loans.length);
    expect(changed.sent).toEqual([]);
    expect(changed.summary.customers.unchanged).toBe(30);
    expect(changed.summary.delta?.unchanged_raw).toBe(0);
    // A check-only run learns nothing.
    const check = await push(env, files, { validateOnly: true });
    expect(check.summary.delta?.unchanged_raw).toBe(0);
    const learnt = await push(env, files, { mappingPath: other });
    expect(learnt.summary.delta?.unchanged_raw).toBe(30);
    expect(learnt.sent).toEqual([]);
  });

  it('a record made before raw digests were kept works as before, and gains them', async () => {
    const env = home();
    const { loans, payments } = await twoFiles(25, 79);
    const files = pair(write('l.csv', loans), write('p.csv', payments));
    const first = await push(env, files, { delta: 'full' });
    // The record as an older leadctl left it: no raw column at all.
    const db = new Database(first.summary.delta!.record!);
    db.exec('DROP INDEX customers_raw; ALTER TABLE customers DROP COLUMN raw');
    db.close();
    const old = await push(env, files);
    expect(old.sent).toEqual([]);
    expect(old.summary.customers.unchanged).toBe(25);
    expect(old.summary.delta?.unchanged_raw).toBe(0);
    const next = await push(env, files);
    expect(next.summary.delta?.unchanged_raw).toBe(25);
  });

  it('a raw digest counts only beside the payload it was recorded with (a record rewritten by an older version)', async () => {
    const env = home();
    const { loans, payments } = await twoFiles(10, 83);
    const files = pair(write('l.csv', loans), write('p.csv', payments));
    const first = await push(env, files, { delta: 'full' });
    const db = new Database(first.summary.delta!.record!);
    db.prepare('UPDATE customers SET payload = randomblob(16)').run();
    db.close();
    const next = await push(env, files);
    expect(next.summary.delta?.unchanged_raw).toBe(0);
    expect(next.sent).toHaveLength(10);
  });

  it('a customer with something refused last time takes the full path again: its rejects are written again', async () => {
    const env = home();
    const { loans, payments } = await twoFiles(20, 89);
    const target = payments[4]!['Cust No']!;
    const bad = payments.map((r, i) => (i === 4 ? { ...r, Posted: 'not a date' } : r));
    const files = pair(write('l.csv', loans), write('p.csv', bad));
    const first = await push(env, files, { delta: 'full' });
    expect(first.outcome.exitCode).toBe(4);
    const next = await push(env, files);
    expect(next.outcome.exitCode).toBe(4);
    expect(next.summary.payments.rejected).toBe(1);
    expect(next.summary.delta?.unchanged_raw).toBe(19);
    expect(next.sent).toEqual([]);
    expect(readFileSync(next.summary.rejects_file!, 'utf8')).toContain(target);
  });

  it('--max-age and --full still send what is known unchanged', async () => {
    const env = home();
    const { loans, payments } = await twoFiles(15, 97);
    const files = pair(write('l.csv', loans), write('p.csv', payments));
    const t0 = Date.parse('2026-10-01T00:00:00Z');
    const day = 24 * 3600 * 1000;
    await push(env, files, { delta: 'full' }, () => new Date(t0));
    expect((await push(env, files, {}, () => new Date(t0 + 29 * day))).summary.delta?.unchanged_raw).toBe(15);
    const old = await push(env, files, {}, () => new Date(t0 + 31 * day));
    expect(old.sent).toHaveLength(15);
    expect(old.summary.delta?.unchanged_raw).toBe(0);
    const full = await push(env, files, { delta: 'full' }, () => new Date(t0 + 32 * day));
    expect(full.sent).toHaveLength(15);
    expect(full.summary.delta?.unchanged_raw).toBe(0);
  });
});
