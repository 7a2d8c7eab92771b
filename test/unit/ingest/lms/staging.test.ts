import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS generator shared with the benchmark
import { mulberry32, writeExport } from '../../../../fixtures/lms/generate.mjs';
import { stageCsv } from '../../../../src/ingest/lms/csv.js';
import { flatGroups } from '../../../../src/ingest/lms/groups.js';
import { loadMapping } from '../../../../src/ingest/mapping/mapping.js';
import { openInput } from '../../../../src/ingest/sources.js';
import { Staging } from '../../../../src/ingest/lms/staging.js';
import { paymentLooksValid } from '../../../../src/jobs/push/quick-check.js';
import { validateGroup } from '../../../../src/jobs/push/validate.js';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-repeats-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every customer's verdict (JSON sent, rejects with rows) for a one-row-per-payment file, staged. */
async function verdicts(file: string, options: { precheck: boolean; recentLoans?: number }) {
  const mapping = await loadMapping('mapping.json', fixtures);
  const staging = new Staging();
  try {
    await stageCsv(await openInput(file, { stdin: process.stdin, cwd: work }), 'rows', {
      staging,
      mapping,
      problems: () => {},
      precheckPayment: options.precheck ? paymentLooksValid : undefined,
      recentLoans: options.recentLoans,
    });
    staging.finish();
    return [...flatGroups(staging)].map((g) => {
      const r = validateGroup(g);
      return {
        id: g.customerId,
        origin: g.origin,
        json: r.valid?.json ?? null,
        trace: r.valid?.trace ?? null,
        rejects: r.rejects,
        seen: r.seen,
        duplicates: r.duplicates,
      };
    });
  } finally {
    staging.close();
  }
}

describe('staging a file with a row per payment, in any order', () => {
  it('gives the same verdicts, rows included, whether repeated loan rows are staged in full or as references', async () => {
    await writeExport({ out: join(work, 'gen'), customers: 120, seed: 11, shapes: ['denormalised'] });
    const [header, ...rows] = readFileSync(join(work, 'gen', 'export.csv'), 'utf8')
      .trimEnd()
      .split('\n');
    // Every row of one loan carries a bad amount (the loan is refused, naming its last row); one
    // row of another loan, somewhere in the middle, carries another product (its last row wins).
    const loanOf = (line: string) => line.split(',')[1];
    const loans = [...new Set(rows.map(loanOf))];
    const bad = loans[3];
    const changed = loans[7];
    let edited = 0;
    const lines = rows.map((line) => {
      const cells = line.split(',');
      if (cells[1] === bad) cells[7] = '$1.005';
      if (cells[1] === changed && edited++ === 1) cells[5] = cells[5] === 'PDL' ? 'INST' : 'PDL';
      return cells.join(',');
    });
    // A full shuffle, not the generator's bounded one: a loan's rows anywhere in the file.
    const random = mulberry32(5);
    for (let i = lines.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
    }
    writeFileSync(join(work, 'shuffled.csv'), [header, ...lines].join('\n') + '\n');

    const full = await verdicts('shuffled.csv', { precheck: false, recentLoans: 0 });
    const cached = await verdicts('shuffled.csv', { precheck: true });
    const evicting = await verdicts('shuffled.csv', { precheck: true, recentLoans: 3 });
    expect(full).toHaveLength(120);
    expect(cached).toEqual(full);
    expect(evicting).toEqual(full);
    // The refused loan names the last of its rows in the file.
    const lastRowOfBad = lines.reduce((last, line, i) => (loanOf(line) === bad ? i + 2 : last), 0);
    const refused = full.flatMap((v) => v.rejects).filter((r) => r.level === 'loan' && r.loanId === bad);
    expect(refused.map((r) => r.row)).toEqual([lastRowOfBad]);
    expect(full.every((v) => v.duplicates.loans === 0)).toBe(true);
  });
});
