import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../../../fixtures/lms/generate.mjs';
import { stageExport, type BatchInput } from '../../../../src/ingest/lms/inputs.js';
import type { RowProblem } from '../../../../src/ingest/lms/rows.js';
import { sniffFormat } from '../../../../src/ingest/lms/rows.js';
import { IDENTITY_MAPPING, loadMapping, type Mapping } from '../../../../src/ingest/mapping/mapping.js';
import { Staging } from '../../../../src/ingest/lms/staging.js';
import { validateGroup } from '../../../../src/jobs/push/validate.js';
import { NotSortedError, streamGroups } from '../../../../src/ingest/lms/stream.js';
import { openInput } from '../../../../src/ingest/sources.js';
import type { CustomerGroup } from '../../../../src/ingest/lms/groups.js';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-lms-'));
const open: Staging[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function stage(inputs: BatchInput[], mapping: Mapping, cwd = work) {
  const staging = new Staging();
  open.push(staging);
  const problems: RowProblem[] = [];
  const staged = await stageExport({
    inputs,
    mapping,
    problems: (p) => problems.push(p),
    io: { stdin: process.stdin, cwd },
    staging,
  });
  return { staged, problems, sources: staging.sources };
}

/** What would be sent, customer by customer, in order. */
async function bodies(inputs: BatchInput[], mapping: Mapping, cwd = work) {
  const { staged } = await stage(inputs, mapping, cwd);
  return [...staged.groups()].map((g) => validateGroup(g).valid?.json ?? null);
}

describe('row order', () => {
  it('gives the same customers, in the same order, whatever the order of the rows', async () => {
    const mapping = await loadMapping('mapping.json', fixtures);
    await writeExport({ out: join(work, 'sorted'), customers: 300, seed: 3 });
    await writeExport({ out: join(work, 'shuffled'), customers: 300, seed: 3, shuffle: true });
    const sortedRows = readFileSync(join(work, 'sorted', 'export.csv'), 'utf8');
    const shuffledRows = readFileSync(join(work, 'shuffled', 'export.csv'), 'utf8');
    expect(shuffledRows).not.toEqual(sortedRows);
    const a = await bodies([{ path: 'sorted/export.csv', role: 'auto' }], mapping);
    const b = await bodies([{ path: 'shuffled/export.csv', role: 'auto' }], mapping);
    const c = await bodies(
      [
        { path: 'shuffled/loans.csv', role: 'loans' },
        { path: 'shuffled/payments.csv', role: 'payments' },
      ],
      mapping,
    );
    expect(a).toHaveLength(300);
    expect(a.every((x) => x !== null)).toBe(true);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  });

  it('reads gzip-compressed files', async () => {
    const mapping = await loadMapping('mapping.json', fixtures);
    writeFileSync(join(work, 'export.csv.gz'), gzipSync(readFileSync(join(fixtures, 'export.csv'))));
    const plain = await bodies([{ path: 'export.csv', role: 'auto' }], mapping, fixtures);
    const zipped = await bodies([{ path: join(work, 'export.csv.gz'), role: 'auto' }], mapping, fixtures);
    expect(zipped).toEqual(plain);
  });
});

describe('streaming a sorted file', () => {
  async function streamed(path: string, mapping: Mapping, cwd = work) {
    const problems: RowProblem[] = [];
    const groups: CustomerGroup[] = [];
    for await (const g of streamGroups(await openInput(path, { stdin: process.stdin, cwd }), {
      mapping,
      src: 0,
      problems: (p) => problems.push(p),
    }))
      groups.push(g);
    return { groups, problems };
  }

  it('gives exactly the groups the staging gives, duplicates and problems included', async () => {
    const mapping = await loadMapping('mapping.json', fixtures);
    await writeExport({ out: join(work, 'sorted-stream'), customers: 400, seed: 8 });
    // Break a few rows in place: a repeated payment, a row without a customer, a bad amount.
    const path = join(work, 'sorted-stream', 'export.csv');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.splice(40, 0, lines[39]!.replace(/\$[\d,]+\.\d\d/, '$1.005'));
    lines.splice(80, 0, lines[80]!.replace(/^\d+,/, ','));
    lines.splice(120, 0, lines[119]!);
    writeFileSync(path, lines.join('\n'));
    const staged = await stage([{ path: 'sorted-stream/export.csv', role: 'auto' }], mapping);
    const stagedGroups = [...staged.staged.groups()];
    const stream = await streamed('sorted-stream/export.csv', mapping);
    expect(stream.groups).toEqual(stagedGroups);
    expect(stream.problems).toEqual(staged.problems);
    expect(stream.groups.flatMap((g) => g.duplicates)).toHaveLength(2); // both inserted copies repeat a payment id
    expect(stream.groups.map((g) => validateGroup(g))).toEqual(stagedGroups.map((g) => validateGroup(g)));
  });

  it('notices an unsorted file', async () => {
    const mapping = await loadMapping('mapping.json', fixtures);
    const err = await streamed('export.csv', mapping, fixtures).catch((e) => e);
    expect(err).toBeInstanceOf(NotSortedError);
    expect(err.message).toMatch(/customer 100101 comes after 100105/);
  });
});

describe('batch-shape JSON and NDJSON', () => {
  const loan = (id: string, extra: Record<string, unknown> = {}) => ({
    loan_id: id,
    management_system_id: 7,
    is_lead_loan: true,
    loan_amount: 50000,
    applied_at: '2026-01-02T03:04:05Z',
    payments: [{ payment_id: `${id}-P1`, payment_amount: 1000, payment_at: '2026-02-01T00:00:00Z' }],
    ...extra,
  });

  it('reads {customers: [...]}; a repeated customer is its last occurrence', async () => {
    writeFileSync(
      join(work, 'batch.json'),
      JSON.stringify({
        customers: [
          { customer_id: 'B', loans: [loan('L1')] },
          { customer_id: 'A', loans: [loan('L2')] },
          { customer_id: 'B', loans: [loan('L3')] },
        ],
      }),
    );
    const { staged } = await stage([{ path: 'batch.json', role: 'auto' }], IDENTITY_MAPPING);
    const groups = [...staged.groups()];
    expect(
      groups.map((g) => [
        g.customerId,
        g.loans.map((l) => l.loanId),
        g.duplicates.map((d) => [d.level, d.row, d.winner.row]),
      ]),
    ).toEqual([
      ['A', ['L2'], []],
      ['B', ['L3'], [['customer', 1, 3]]],
    ]);
    expect(JSON.parse(validateGroup(groups[1]!).valid!.json!)).toEqual({ customer_id: 'B', loans: [loan('L3')] });
  });

  it('reports unknown keys, bad values and broken NDJSON lines per record', async () => {
    const lines = [
      JSON.stringify({
        customer_id: 'C1',
        loans: [loan('L1', { colour: 'red' }), loan('L2', { loan_amount: '12.50' })],
      }),
      '{not json',
      JSON.stringify({ customer_id: 'C2', loans: [loan('L3')] }),
    ];
    writeFileSync(join(work, 'batch.ndjson'), lines.join('\n') + '\n');
    const { staged, problems } = await stage([{ path: 'batch.ndjson', role: 'auto' }], IDENTITY_MAPPING);
    expect(problems.map((p) => [p.row, p.reason.slice(0, 14)])).toEqual([[2, 'not valid JSON']]);
    const results = [...staged.groups()].map((g) => validateGroup(g));
    expect(results[0]!.rejects.map((r) => [r.row, r.loanId, r.field])).toEqual([
      [1, 'L1', 'colour'],
      [1, 'L1', undefined],
      [1, 'L2', 'loan_amount'],
      [1, 'L2', undefined],
      [1, undefined, 'loans'],
    ]);
    expect(results[0]!.valid).toBeUndefined();
    expect(results[1]!.valid?.customerId).toBe('C2');
  });

  it('tells formats apart by their first characters', () => {
    expect(sniffFormat('[{"customer_id":1}]')).toBe('json');
    expect(sniffFormat('{"customers": [\n')).toBe('json');
    expect(sniffFormat('{"customer_id":"1","loans":[]}\n{"customer_id":"2","loans":[]}\n')).toBe('ndjson');
    expect(sniffFormat('\uFEFFCust No,Loan No\n')).toBe('csv');
  });
});

describe('a batch JSON export too large to wait for', () => {
  it('reports its progress as records come, and stops reading when the progress callback throws', async () => {
    const customers = Array.from({ length: 2500 }, (_, i) => ({ customer_id: `C${i}`, loans: [] }));
    writeFileSync(join(work, 'many.json'), JSON.stringify({ customers }));
    const seen: number[] = [];
    const staging = new Staging();
    open.push(staging);
    const stop = new Error('stopped');
    const reading = stageExport({
      inputs: [{ path: 'many.json', role: 'auto' }],
      mapping: IDENTITY_MAPPING,
      problems: () => {},
      io: { stdin: process.stdin, cwd: work },
      staging,
      onRows: (_file, rows) => {
        seen.push(rows);
        if (rows >= 2000) throw stop;
      },
    });
    await expect(reading).rejects.toBe(stop);
    expect(seen).toEqual([1000, 2000]);
  });
});
