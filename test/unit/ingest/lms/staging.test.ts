import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
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
import { compareIds, removeStaleStaging, STAGING_CACHE_KIB, Staging } from '../../../../src/ingest/lms/staging.js';
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

describe('reading back more rows than the staging keeps in memory', () => {
  it('holds SQLite to a 2 MiB cache and sort, and gives every row back in order, the last of equal ids winning', () => {
    const staging = new Staging(work);
    try {
      const db = (staging as unknown as { db: { pragma(sql: string, options: { simple: true }): unknown } }).db;
      // Both sorts (loans and payments) are held for the whole push: each is bounded by this.
      expect(STAGING_CACHE_KIB).toBe(2048);
      expect(db.pragma('cache_size', { simple: true })).toBe(-2048);
      const random = mulberry32(7);
      const src = staging.addSource('payments.csv');
      const padding = 'x'.repeat(200);
      // About 7 MB of payments in random order, ids of varying length: the sort spills to merged runs.
      const expected = new Map<string, Map<string, number>>();
      const customers = Array.from({ length: 3000 }, (_, i) => `C${Math.floor(random() * 1e9).toString(36)}${i}`);
      for (const c of customers) staging.putLoan(c, 'L1', { src, row: 1 }, '{}', null, false);
      for (let row = 2; row < 32_002; row++) {
        const customerId = customers[Math.floor(random() * customers.length)]!;
        const paymentId = `P${Math.floor(random() * 12)}`;
        staging.putPayment(customerId, 'L1', paymentId, { src, row }, `{"n":${row},"pad":"${padding}"}`, null);
        const payments = expected.get(customerId) ?? new Map<string, number>();
        payments.set(paymentId, row);
        expected.set(customerId, payments);
      }
      const seen: string[] = [];
      for (const customer of staging.customers()) {
        seen.push(customer.customerId);
        const payments = customer.loans[0]!.payments;
        const wanted = [...(expected.get(customer.customerId) ?? new Map<string, number>())].sort(([a], [b]) =>
          compareIds(a, b),
        );
        expect(payments.map((p) => [p.paymentId, p.row])).toEqual(wanted);
        expect(payments.every((p) => p.data === `{"n":${p.row},"pad":"${padding}"}`)).toBe(true);
      }
      expect(seen).toEqual([...customers].sort(compareIds));
    } finally {
      staging.close();
    }
  });
});

describe('staging folders left behind, and the runs sweeping them', () => {
  /** A parent folder of its own, so that no other test's staging is swept or seen. */
  const parent = () => mkdtempSync(join(work, 'parent-'));
  const folder = (at: string, name: string, note?: string) => {
    const dir = join(at, `leadctl-staging-${name}`);
    mkdirSync(dir);
    if (note !== undefined) writeFileSync(join(dir, 'owner.pid'), note);
    return dir;
  };
  const deadPid = () =>
    Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());
  const twoHoursAgo = (dir: string) => {
    const t = (Date.now() - 2 * 3600_000) / 1000;
    utimesSync(dir, t, t);
  };

  it('a folder whose owner has ended is removed; a living owner keeps it', () => {
    const at = parent();
    const dead = folder(at, 'dead', String(deadPid()));
    const alive = folder(at, 'alive', String(process.pid));
    expect(removeStaleStaging(at)).toEqual([dead]);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(alive)).toBe(true);
  });

  it('a folder with no note, or a note not yet written (empty), is one being created: kept unless an hour old', () => {
    const at = parent();
    const none = folder(at, 'none');
    const empty = folder(at, 'empty', '');
    const garbled = folder(at, 'garbled', 'x');
    expect(removeStaleStaging(at)).toEqual([]);
    for (const dir of [none, empty, garbled]) expect(existsSync(dir)).toBe(true);
    twoHoursAgo(none);
    twoHoursAgo(empty);
    expect(removeStaleStaging(at).sort()).toEqual([empty, none].sort());
    expect(existsSync(garbled)).toBe(true);
  });

  it("a run's own folder holds its note whole (written aside, then renamed), and survives another run's sweep", () => {
    const at = parent();
    const staging = new Staging(at);
    try {
      const [name] = readdirSync(at);
      const files = readdirSync(join(at, name!));
      expect(files).toContain('owner.pid');
      expect(files.filter((f) => f.startsWith('owner.pid.'))).toEqual([]);
      expect(readFileSync(join(at, name!, 'owner.pid'), 'utf8')).toBe(String(process.pid));
      expect(removeStaleStaging(at)).toEqual([]);
      expect(readdirSync(at)).toEqual([name]);
    } finally {
      staging.close();
    }
  });
});
