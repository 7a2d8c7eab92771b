import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { MAPPING, pushEnv } from './push-helpers.js';

/** The binary against a sandbox: only what changed is sent, and lists diff counts exactly. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-delta-'));
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startSandboxProcess();
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

type Row = Record<string, string>;
const read = (path: string) => parse(readFileSync(path, 'utf8'), { columns: true }) as Row[];
const write = (path: string, rows: Row[]) =>
  writeFileSync(path, stringify(rows, { header: true, columns: Object.keys(rows[0]!) }));
const batchRequests = async () =>
  ((await sandbox.stats()) as any).requests.by_route['POST /api/v1/loan-performance/batches/customers'] ?? 0;

describe('customers batch --changed-only, as a nightly job runs it', () => {
  it('sends nothing the second night, exactly the 50 changed and 10 new customers the third', async () => {
    const dir = join(work, 'lms');
    await writeExport({
      out: dir,
      customers: 300,
      seed: 17,
      paymentsPerCustomer: 3,
      shuffle: true,
      shapes: ['separate'],
    });
    const env = pushEnv(sandbox);
    const args = [
      'customers',
      'batch',
      '--loans',
      'loans.csv',
      '--payments',
      'payments.csv',
      '--mapping',
      MAPPING,
      // Two requests a run, as the 1,500 customers this once had made in chunks of 1,000.
      '--chunk-size',
      '200',
      '--changed-only',
      '-o',
      'json',
    ];

    const first = await runBinary(args, { env, cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).customers).toMatchObject({ read: 300, sent: 300, accepted: 300, unchanged: 0 });

    // The same export, its rows in another order.
    const loans = read(join(dir, 'loans.csv'));
    const payments = read(join(dir, 'payments.csv'));
    write(join(dir, 'loans.csv'), [...loans].reverse());
    write(join(dir, 'payments.csv'), [...payments].reverse());
    const before = await batchRequests();
    const second = await runBinary(args, { env, cwd: dir });
    expect(second.code, second.stderr).toBe(0);
    const quiet = JSON.parse(second.stdout);
    expect(quiet.customers).toMatchObject({ read: 300, valid: 300, sent: 0, unchanged: 300 });
    expect(quiet.payments).toMatchObject({ sent: 0, unchanged: payments.length });
    expect(quiet.accounting.balanced).toBe(true);
    expect(await batchRequests()).toBe(before);

    // 50 customers get a payment changed; 10 new customers arrive.
    const customers = [...new Set(loans.map((l) => l['Cust No']!))];
    const changed = new Set(customers.slice(100, 150));
    const touched = new Set<string>();
    const editedPayments = payments.map((p) => {
      if (!changed.has(p['Cust No']!) || touched.has(p['Cust No']!)) return p;
      touched.add(p['Cust No']!);
      return { ...p, 'Trans Amt': '$9,999.99' };
    });
    expect(touched.size).toBe(50);
    const donors = customers.slice(0, 10);
    const newLoans = donors.flatMap((c, i) =>
      loans
        .filter((l) => l['Cust No'] === c)
        .map((l) => ({ ...l, 'Cust No': `NEW-${i}`, 'Lead ID': '', 'Lead Loan': 'N' })),
    );
    const newPayments = donors.flatMap((c, i) =>
      payments
        .filter((p) => p['Cust No'] === c)
        .map((p) => ({ ...p, 'Cust No': `NEW-${i}`, 'Trans ID': `${p['Trans ID']}-N${i}` })),
    );
    write(join(dir, 'loans.csv'), [...loans, ...newLoans]);
    write(join(dir, 'payments.csv'), [...editedPayments, ...newPayments]);

    const third = await runBinary([...args, '--rejects', join(work, 'rejects.csv')], { env, cwd: dir });
    const night = JSON.parse(third.stdout);
    expect(night.customers, third.stderr).toMatchObject({ read: 310, sent: 60, unchanged: 250 });
    expect(night.customers.accepted + night.customers.rejected).toBe(60);
    expect(night.accounting.balanced).toBe(true);

    // The same unsorted files again: sorted by their lines, every customer whose lines were learnt
    // (nothing refused) is skipped before it is parsed.
    const again = JSON.parse((await runBinary(args, { env, cwd: dir })).stdout);
    expect(again.customers).toMatchObject({ read: 310, sent: night.customers.rejected });
    expect(again.delta.unchanged_raw).toBe(310 - night.customers.rejected);

    // The human summary shows the unchanged column.
    const human = await runBinary(args.filter((a) => a !== '-o' && a !== 'json').concat(['-o', 'table']), {
      env,
      cwd: dir,
    });
    expect(human.stdout).toMatch(/unchanged/);
    expect(human.stdout).toMatch(/customers\s+310\s+310\s+3\d\d\s+\d+/);

    // The record: 0600, and no customer, loan or payment id in clear.
    const record = night.delta.record as string;
    expect(statSync(record).mode & 0o777).toBe(0o600);
    const bytes = readFileSync(record).toString('latin1');
    for (const id of [
      ...customers.slice(0, 40),
      ...loans.slice(0, 40).map((l) => l['Loan No']!),
      ...payments.slice(0, 40).map((p) => p['Trans ID']!),
    ]) {
      expect(bytes.includes(id), id).toBe(false);
    }

    // state show counts it; state forget deletes it, and the next run sends everything.
    const shown = await runBinary(['state', 'show', '-o', 'json'], { env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ record, customers: 310 });
    const forgot = await runBinary(['state', 'forget', '--yes', '-o', 'json'], { env });
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(JSON.parse(forgot.stdout)).toMatchObject({
      profile: 'default',
      records_removed: [record],
      key_removed: true,
    });
    const after = await runBinary(args, { env, cwd: dir });
    expect(JSON.parse(after.stdout).customers).toMatchObject({ sent: 310, unchanged: 0 });
  });
});

describe('customers batch --changed-only on a sorted export: unchanged raw rows are not converted', () => {
  it('sends only the changed customer; a mapping change and an old record take the full path', async () => {
    const dir = join(work, 'sorted');
    await writeExport({ out: dir, customers: 300, seed: 19, paymentsPerCustomer: 3, shapes: ['separate'] });
    const env = pushEnv(sandbox);
    const args = (mapping = MAPPING) => [
      'customers',
      'batch',
      '--loans',
      'loans.csv',
      '--payments',
      'payments.csv',
      '--mapping',
      mapping,
      '--changed-only',
      '-o',
      'json',
    ];
    const push = async (mapping?: string) => {
      const run = await runBinary(args(mapping), { env, cwd: dir });
      expect(run.code, run.stderr).toBe(0);
      const summary = JSON.parse(run.stdout);
      expect(summary.accounting.balanced).toBe(true);
      return summary;
    };

    const first = await push();
    expect(first.customers).toMatchObject({ read: 300, sent: 300, unchanged: 0 });
    expect(first.delta.unchanged_raw).toBe(0);

    // One customer's loan status changes.
    const loans = read(join(dir, 'loans.csv'));
    const target = loans[40]!['Cust No']!;
    write(
      join(dir, 'loans.csv'),
      loans.map((l) =>
        l['Cust No'] === target ? { ...l, 'Loan Status': l['Loan Status'] === 'PIF' ? 'CUR' : 'PIF' } : l,
      ),
    );
    const before = await batchRequests();
    const second = await push();
    expect(second.customers).toMatchObject({ read: 300, valid: 300, sent: 1, unchanged: 299 });
    expect(second.delta.unchanged_raw).toBe(299);
    expect(await batchRequests()).toBe(before + 1);

    // The same conversions under a mapping that reads differently: all take the full path, none is sent.
    const other = join(dir, 'mapping.json');
    writeFileSync(other, JSON.stringify({ ...JSON.parse(readFileSync(MAPPING, 'utf8')), description: 'again' }));
    const remapped = await push(other);
    expect(remapped.customers).toMatchObject({ sent: 0, unchanged: 300 });
    expect(remapped.delta.unchanged_raw).toBe(0);
    expect((await push(other)).delta.unchanged_raw).toBe(300);

    // A record as an older leadctl left it (no raw digests): it works, and learns them.
    const db = new Database(second.delta.record as string);
    db.exec('DROP INDEX customers_raw; ALTER TABLE customers DROP COLUMN raw');
    db.close();
    const old = await push(other);
    expect(old.customers).toMatchObject({ sent: 0, unchanged: 300 });
    expect(old.delta.unchanged_raw).toBe(0);
    expect((await push(other)).delta.unchanged_raw).toBe(300);
    expect(await batchRequests()).toBe(before + 1);
  });
});

describe('lists diff and lists update', () => {
  const ssn = (n: number) =>
    `${String(100 + (n % 600)).padStart(3, '0')}-${String(10 + (n % 89)).padStart(2, '0')}-${String(1000 + n).padStart(4, '0')}`;
  const file = (name: string, values: string[]) => {
    const path = join(work, name);
    writeFileSync(path, ['SSN', ...values].join('\r\n') + '\r\n');
    return path;
  };

  it('counts exactly what an update adds and removes, asks before replacing, and keeps no SSN in clear', async () => {
    const env = pushEnv(sandbox);
    const first = Array.from({ length: 500 }, (_, i) => ssn(i));
    const created = await runBinary(
      ['lists', 'create', '--name', 'Delta SSNs', '--type', 'ssn', file('first.csv', first), '-o', 'json'],
      { env },
    );
    expect(created.code, created.stderr).toBe(0);
    const id = JSON.parse(created.stdout).list_id as number;

    // 40 removed, 25 added, the rest in another order and spelling (no dashes).
    const next = [
      ...first
        .slice(40)
        .reverse()
        .map((v) => v.replace(/-/g, '')),
      ...Array.from({ length: 25 }, (_, i) => ssn(5000 + i)),
    ];
    const nextFile = file('next.csv', next);
    const diff = await runBinary(['lists', 'diff', String(id), nextFile, '-o', 'json'], { env });
    expect(diff.code, diff.stderr).toBe(0);
    expect(JSON.parse(diff.stdout)).toMatchObject({ list_id: id, added: 25, removed: 40, unchanged: 460 });

    const shown = await runBinary(['lists', 'diff', String(id), nextFile, '--show', '-o', 'table'], { env });
    expect(shown.stdout).toContain('25 added, 40 removed, 460 unchanged');
    expect(shown.stdout).toContain('***-**-6000');
    expect(shown.stdout.match(/\*\*\*-\*\*-\d{4}/g)).toHaveLength(25);
    expect(shown.stdout).not.toMatch(/\b\d{3}-?\d{2}-?\d{4}\b/);

    // Without a terminal the update needs --yes; with it, the summary carries the same counts.
    const refused = await runBinary(['lists', 'update', String(id), nextFile], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('25 added, 40 removed, 460 unchanged');
    const updated = await runBinary(['lists', 'update', String(id), nextFile, '--yes', '-o', 'json'], { env });
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).changes).toEqual({ added: 25, removed: 40, unchanged: 460 });

    // The record now holds the update: the same file is no change at all.
    const again = await runBinary(['lists', 'diff', String(id), nextFile, '-o', 'json'], { env });
    expect(JSON.parse(again.stdout)).toMatchObject({ added: 0, removed: 0, unchanged: 485 });

    const record = readFileSync(
      JSON.parse((await runBinary(['state', 'show', '-o', 'json'], { env })).stdout).record,
    ).toString('latin1');
    for (const v of [...first.slice(0, 50), ...next.slice(0, 50)]) {
      expect(record.includes(v), v).toBe(false);
      expect(record.includes(v.replace(/-/g, '')), v).toBe(false);
    }
  });

  it('refuses an update that would remove more than half of the list (a file cut short) unless --max-removed allows it', async () => {
    const env = pushEnv(sandbox);
    const all = Array.from({ length: 200 }, (_, i) => ssn(i));
    const created = await runBinary(
      ['lists', 'create', '--name', 'Guarded SSNs', '--type', 'ssn', file('all.csv', all), '-o', 'json'],
      { env },
    );
    expect(created.code, created.stderr).toBe(0);
    const id = JSON.parse(created.stdout).list_id as number;
    const before = (await sandbox.stats()).list_items;

    // The first 60 rows of the export and 5 new ones: 140 of 200 removed (70%).
    const cut = file('cut.csv', [...all.slice(0, 60), ...Array.from({ length: 5 }, (_, i) => ssn(7000 + i))]);
    const diff = await runBinary(['lists', 'diff', String(id), cut, '-o', 'table'], { env });
    expect(diff.stdout).toContain('5 added, 140 removed, 60 unchanged');
    expect(diff.stdout).toContain('lists update would refuse this file: it removes more than 50% of the list');
    const json = await runBinary(['lists', 'diff', String(id), cut, '-o', 'json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ removed: 140, refused_by_default: true });
    const refused = await runBinary(['lists', 'update', String(id), cut, '--yes'], { env });
    expect(refused.code).toBe(2);
    expect(errorLines(refused.stderr)).toContain(
      `Error: list ${id}: ${cut} would remove 140 of the 200 values last uploaded from here (70%), more than --max-removed allows (50%); nothing was sent`,
    );
    expect(refused.stderr).toContain('--max-removed 100%');
    expect((await sandbox.stats()).list_items).toBe(before);

    // A count works as a limit too; one at the limit passes.
    const byCount = await runBinary(['lists', 'update', String(id), cut, '--yes', '--max-removed', '139'], { env });
    expect(byCount.code).toBe(2);
    expect(byCount.stderr).toContain('more than --max-removed allows (139)');
    const allowed = await runBinary(
      ['lists', 'update', String(id), cut, '--yes', '--max-removed', '140', '-o', 'json'],
      {
        env,
      },
    );
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout).changes).toEqual({ added: 5, removed: 140, unchanged: 60 });
    expect((await sandbox.stats()).list_items).toBe(before - 200 + 65);

    // From a machine with no record of the list the limit cannot be applied: said, not silently skipped.
    const elsewhere = await runBinary(['lists', 'update', String(id), cut, '--yes', '--max-removed', '10%'], {
      env: pushEnv(sandbox),
    });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(elsewhere.stderr).toContain(
      `Warning: --max-removed is not applied: there is no record here of list ${id}'s values`,
    );

    const bad = await runBinary(['lists', 'update', String(id), cut, '--yes', '--max-removed', '150%'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-removed takes a number of values (500) or a percentage from 0% to 100%');
  });

  it('refuses to diff a list it has no record of (exit 2), and says how to get one', async () => {
    const env = pushEnv(sandbox);
    const res = await runBinary(['lists', 'diff', '999', file('any.csv', [ssn(1)])], { env });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/no record of list 999's values on this machine/);
    expect(res.stderr).toMatch(/lists update 999 FILE/);
  });
});
