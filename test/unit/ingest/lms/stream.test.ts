import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../../../fixtures/lms/generate.mjs';
import type { CustomerGroup, RawCustomer } from '../../../../src/ingest/lms/groups.js';
import { stageExport } from '../../../../src/ingest/lms/inputs.js';
import type { RowProblem } from '../../../../src/ingest/lms/rows.js';
import { NotSortedError, streamGroups, streamTwoFiles } from '../../../../src/ingest/lms/stream.js';
import { IDENTITY_MAPPING, loadMapping } from '../../../../src/ingest/mapping/mapping.js';
import { openInput } from '../../../../src/ingest/sources.js';
import { Staging } from '../../../../src/ingest/lms/staging.js';
import { validateGroup } from '../../../../src/jobs/push/validate.js';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-two-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const io = { stdin: process.stdin, cwd: work };
const byPlace = (a: RowProblem, b: RowProblem) => a.src - b.src || a.row - b.row;

async function staged(loans: string, payments: string) {
  const mapping = await loadMapping('mapping.json', fixtures);
  const staging = new Staging();
  const problems: RowProblem[] = [];
  try {
    const result = await stageExport({
      inputs: [
        { path: loans, role: 'loans' },
        { path: payments, role: 'payments' },
      ],
      mapping,
      problems: (p) => problems.push(p),
      io,
      staging,
    });
    return { groups: [...result.groups()], problems, rows: result.rowsRead };
  } finally {
    staging.close();
  }
}

async function streamed(loans: string, payments: string) {
  const mapping = await loadMapping('mapping.json', fixtures);
  const problems: RowProblem[] = [];
  const groups: CustomerGroup[] = [];
  const stream = streamTwoFiles({
    mapping,
    problems: (p) => problems.push(p),
    loans: { input: await openInput(loans, io), src: 0 },
    payments: { input: await openInput(payments, io), src: 1 },
  });
  let next = await stream.next();
  for (; !next.done; next = await stream.next()) groups.push(next.value);
  return { groups, problems, rows: next.value };
}

describe('two sorted files, read side by side', () => {
  it('give exactly the groups the staging gives: duplicates, orphans and problems included', async () => {
    await writeExport({ out: join(work, 'gen'), customers: 300, seed: 21, shapes: ['separate'] });
    const loans = readFileSync(join(work, 'gen', 'loans.csv'), 'utf8')
      .trimEnd()
      .split('\n');
    const payments = readFileSync(join(work, 'gen', 'payments.csv'), 'utf8')
      .trimEnd()
      .split('\n');
    // A loan row repeated (the later wins, the earlier is its duplicate), a loan row without a
    // customer id, a payment repeated three times, a payment of a loan that is not in the loans
    // file, a payment row with a column missing, and a bad amount.
    loans.splice(20, 0, loans[19]!.replace(/\$[\d,]+\.\d\d/, '$9.99'));
    loans.splice(40, 0, loans[40]!.replace(/^\d+,/, ','));
    payments.splice(50, 0, payments[49]!, payments[49]!.replace(/\$[\d,]+\.\d\d/, '$1.005'));
    payments.splice(90, 0, payments[90]!.replace(/,LN-\d+,/, ',LN-NOPE,'));
    payments.splice(130, 0, payments[130]!.replace(/,[^,]*$/, ''));
    writeFileSync(join(work, 'loans.csv'), loans.join('\n') + '\n');
    writeFileSync(join(work, 'payments.csv'), payments.join('\n') + '\n');

    const a = await staged('loans.csv', 'payments.csv');
    const b = await streamed('loans.csv', 'payments.csv');
    expect(b.groups).toEqual(a.groups);
    expect(b.rows).toBe(a.rows);
    expect([...b.problems].sort(byPlace)).toEqual([...a.problems].sort(byPlace));
    expect(b.groups.map((g) => validateGroup(g))).toEqual(a.groups.map((g) => validateGroup(g)));
    const duplicates = b.groups.flatMap((g) => g.duplicates);
    expect(duplicates.filter((d) => d.level === 'loan')).toHaveLength(1);
    expect(duplicates.filter((d) => d.level === 'payment')).toHaveLength(2);
    expect(b.groups.some((g) => g.orphans.length === 1)).toBe(true);
    expect(b.problems).toHaveLength(2);
  });

  it('notices a file that is not sorted', async () => {
    await writeExport({ out: join(work, 'mixed'), customers: 50, seed: 4, shuffle: true, shapes: ['separate'] });
    await expect(streamed('mixed/loans.csv', 'mixed/payments.csv')).rejects.toBeInstanceOf(NotSortedError);
  });
});

describe('lines, for the first look of --changed-only', () => {
  const HEADER = 'customer_id,loan_id,lead_id,is_lead_loan,loan_amount,applied_at,loan_status,payment_id,payment_at';
  let n = 0;
  /** Each customer's lines from a file with a row per payment; `unchanged` gives counts for `skip`. */
  async function look(lines: string[], options: { eol?: string; skip?: string } = {}) {
    const name = `raw-${n++}.csv`;
    writeFileSync(join(work, name), [HEADER, ...lines].join(options.eol ?? '\n') + (options.eol ?? '\n'));
    const seen = new Map<string, RawCustomer>();
    const groups: CustomerGroup[] = [];
    const problems: RowProblem[] = [];
    for await (const g of streamGroups(await openInput(name, io), {
      mapping: IDENTITY_MAPPING,
      src: 0,
      problems: (p) => problems.push(p),
      unchanged: (raws) =>
        raws.map((raw) => {
          seen.set(raw.customerId, raw);
          return raw.customerId === options.skip ? { loans: 7, payments: 9 } : undefined;
        }),
    }))
      groups.push(g);
    return { seen, groups, problems, text: (id: string) => seen.get(id)?.text };
  }
  const rows = [
    '1,L1,5,Y,100,2026-01-01,Current,P1,2026-02-01',
    '1,L1,5,Y,100,2026-01-01,Current,P2,2026-03-01',
    '1,L2,5,N,50,2026-01-05,Current,,',
    '2,L3,6,Y,70,2026-01-02,Current,P3,2026-02-02',
  ];

  it("are the customer's lines as the file has them, its header as their context", async () => {
    const a = await look(rows);
    expect(a.text('1')).toBe(`${rows.slice(0, 3).join('\n')}\n`);
    expect(a.text('2')).toBe(`${rows[3]}\n`);
    expect(a.seen.get('1')!.context).toBe(`rows\n${JSON.stringify(HEADER.split(','))}`);
    // Handed on with the customer, with what they hold, for the record.
    expect(a.groups[0]!.raw).toMatchObject({ text: a.text('1'), loans: 2, payments: 2 });
    const crlf = await look(rows, { eol: '\r\n' });
    expect(crlf.text('1')).toBe(`${rows.slice(0, 3).join('\r\n')}\r\n`);
    const quoted = await look([...rows.slice(0, 3), `"2","L3","6","Y","70","2026-01-02","Current","P3","2026-02-02"`]);
    expect(quoted.text('2')).toContain('"L3"');
    expect(quoted.groups[1]!.customerId).toBe('2');
  });

  it('a customer said unchanged comes with the counts recorded, never parsed nor converted', async () => {
    const { groups } = await look(rows, { skip: '1' });
    expect(groups[0]).toMatchObject({ customerId: '1', loans: [], unchanged: { loans: 7, payments: 9 } });
    expect(groups[1]!.unchanged).toBeUndefined();
    expect(groups[1]!.loans).toHaveLength(1);
  });

  it('lines the reader does not find to be the whole customer are never its lines', async () => {
    // A row of the wrong width inside the customer: refused by the reader, so its lines are not the customer's rows.
    const bad = await look([rows[0]!, '1,L1,5', rows[1]!, rows[3]!]);
    expect(bad.problems).toHaveLength(1);
    expect(bad.groups[0]!.raw).toBeUndefined();
    expect(bad.groups[1]!.raw).toBeDefined();
    // A blank line inside the customer: asked nothing about it.
    const blank = await look([rows[0]!, '', rows[1]!, rows[3]!]);
    expect(blank.seen.has('1')).toBe(false);
    expect(blank.groups[0]!.raw).toBeUndefined();
  });

  it('from a line it cannot cut for sure (a quoted line break), the rest reaches the reader as it is', async () => {
    const { seen, groups } = await look(
      [rows[0]!, '1,L1,5,Y,100,2026-01-01,"Current\nstill",P9,2026-02-01', rows[3]!],
      {
        skip: '2',
      },
    );
    expect(seen.size).toBe(0);
    expect(groups.map((g) => [g.customerId, g.unchanged])).toEqual([
      ['1', undefined],
      ['2', undefined],
    ]);
    expect(groups[0]!.loans[0]!.payments).toHaveLength(2);
  });

  it('files found unsorted are closed at once (the run stages them instead)', async () => {
    writeFileSync(
      join(work, 'unsorted-loans.csv'),
      'customer_id,loan_id,lead_id,is_lead_loan,loan_amount,applied_at\n2,L1,5,Y,1,2026-01-01\n1,L2,5,Y,1,2026-01-01\n',
    );
    // Far more than one read: what is not read yet is left unread unless the file is closed.
    const lines = Array.from({ length: 100_000 }, (_, i) => `${i + 2},L${i},P${i},2026-01-02\n`);
    writeFileSync(join(work, 'long-payments.csv'), `customer_id,loan_id,payment_id,payment_at\n${lines.join('')}`);
    const loans = await openInput('unsorted-loans.csv', io);
    const payments = await openInput('long-payments.csv', io);
    const stream = streamTwoFiles({
      mapping: IDENTITY_MAPPING,
      problems: () => {},
      loans: { input: loans, src: 0 },
      payments: { input: payments, src: 1 },
      unchanged: (raws) => raws.map(() => undefined),
    });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toBeInstanceOf(NotSortedError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(payments.stream.destroyed).toBe(true);
  });

  it('a customer whose rows are split is never skipped in part: the file is found unsorted', async () => {
    const split = look([rows[0]!, rows[3]!, rows[1]!], { skip: '2' });
    await expect(split).rejects.toBeInstanceOf(NotSortedError);
  });
});
