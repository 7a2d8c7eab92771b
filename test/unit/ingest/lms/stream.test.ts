import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../../../fixtures/lms/generate.mjs';
import type { CustomerGroup } from '../../../../src/ingest/lms/groups.js';
import { stageExport } from '../../../../src/ingest/lms/inputs.js';
import type { RowProblem } from '../../../../src/ingest/lms/rows.js';
import { NotSortedError, streamTwoFiles } from '../../../../src/ingest/lms/stream.js';
import { loadMapping } from '../../../../src/ingest/mapping/mapping.js';
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
