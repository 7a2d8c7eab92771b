import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../../../fixtures/lms/generate.mjs';
import { InputError } from '../../../../src/errors.js';
import type { CustomerGroup } from '../../../../src/ingest/lms/groups.js';
import type { BatchInput } from '../../../../src/ingest/lms/inputs.js';
import { Staging } from '../../../../src/ingest/lms/staging.js';
import { loadMapping, type Mapping } from '../../../../src/ingest/mapping/mapping.js';
import { RunAccount } from '../../../../src/jobs/push/accounting.js';
import type { PushEvent } from '../../../../src/jobs/push/progress.js';
import {
  changedInputs,
  inputsDigest,
  ReadingStopped,
  regularFile,
  stagedDigest,
  stageInputs,
  stampInputs,
  streamableInput,
  streamedGroups,
} from '../../../../src/jobs/push/reading.js';
import type { RejectsWriter } from '../../../../src/jobs/push/rejects.js';
import type { Reject } from '../../../../src/jobs/push/validate.js';
import { memoryIO } from '../../../helpers/memory-io.js';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-reading-'));
let mapping: Mapping;
let counts: { customers: number; loans: number; payments: number; rows: number };

beforeAll(async () => {
  mapping = await loadMapping('mapping.json', fixtures);
  // Over 5,000 rows: the readers report their progress every 5,000.
  counts = await writeExport({ out: work, customers: 700, seed: 3, paymentsPerCustomer: 10 });
  writeFileSync(join(work, 'data.json'), '[]');
  mkdirSync(join(work, 'folder'));
  execFileSync('mkfifo', [join(work, 'fifo.csv')]);
}, 60_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function account() {
  const lines: Reject[] = [];
  const rejects = {
    path: 'rejects.csv',
    created: false,
    failure: undefined,
    get count() {
      return lines.length;
    },
    add: (r: Reject) => lines.push(r),
    close() {},
    reasons: () => [],
  } as unknown as RejectsWriter;
  return { account: new RunAccount(() => rejects), lines };
}

function context() {
  const events: PushEvent[] = [];
  const { account: acc, lines } = account();
  const ctx = {
    io: memoryIO({ cwd: work }),
    mapping,
    account: acc,
    signal: new AbortController().signal,
    onEvent: (e: PushEvent) => events.push(e),
  };
  return { ctx, events, lines };
}

const auto = (path: string): BatchInput => ({ path, role: 'auto' });
const loans: BatchInput = { path: 'loans.csv', role: 'loans' };
const payments: BatchInput = { path: 'payments.csv', role: 'payments' };

async function all(groups: AsyncGenerator<CustomerGroup, number>): Promise<{ groups: CustomerGroup[]; rows: number }> {
  const out: CustomerGroup[] = [];
  for (;;) {
    const next = await groups.next();
    if (next.done) return { groups: out, rows: next.value };
    out.push(next.value);
  }
}

describe('streamableInput and regularFile', () => {
  it('streams one named CSV file, by its name or by --format', () => {
    const input = auto('export.csv');
    expect(streamableInput([input], undefined, work)).toEqual({ inputs: [input] });
    expect(streamableInput([auto('data.json')], 'csv', work)).toEqual({ inputs: [auto('data.json')] });
  });

  it('streams one NDJSON file as documents; stages a JSON document, one with a role or an unknown format', () => {
    expect(streamableInput([auto('data.json')], undefined, work)).toBeUndefined();
    expect(streamableInput([auto('data.ndjson')], undefined, work)).toEqual({
      inputs: [auto('data.ndjson')],
      documents: 'ndjson',
    });
    expect(streamableInput([auto('export.csv')], 'ndjson', work)).toEqual({
      inputs: [auto('export.csv')],
      documents: 'ndjson',
    });
    expect(streamableInput([auto('export')], undefined, work)).toBeUndefined();
    expect(streamableInput([loans], undefined, work)).toBeUndefined();
  });

  it('streams a --loans and a --payments file side by side, in either order, and nothing else of two or more', () => {
    const pair = streamableInput([payments, loans], undefined, work);
    expect(pair).toEqual({ inputs: [payments, loans] });
    expect(streamableInput([loans, { ...loans, path: 'export.csv' }], undefined, work)).toBeUndefined();
    expect(streamableInput([payments, { ...payments, path: 'export.csv' }], undefined, work)).toBeUndefined();
    expect(streamableInput([auto('export.csv'), auto('loans.csv')], undefined, work)).toBeUndefined();
    expect(streamableInput([loans, payments, auto('export.csv')], undefined, work)).toBeUndefined();
    expect(streamableInput([], undefined, work)).toBeUndefined();
  });

  it('stages standard input and a FIFO, never streamed', () => {
    expect(streamableInput([auto('-')], 'csv', work)).toBeUndefined();
    expect(streamableInput([auto('fifo.csv')], undefined, work)).toBeUndefined();
    expect(streamableInput([loans, { path: 'fifo.csv', role: 'payments' }], undefined, work)).toBeUndefined();
  });

  it('a regular file is a file; a path that cannot be stat-ed counts as one (opening it says what is wrong)', () => {
    expect(regularFile('export.csv', work)).toBe(true);
    expect(regularFile('-', work)).toBe(false);
    expect(regularFile('folder', work)).toBe(false);
    expect(regularFile('fifo.csv', work)).toBe(false);
    expect(regularFile('missing.csv', work)).toBe(true);
    expect(regularFile(join(work, 'export.csv'), '/')).toBe(true);
  });
});

describe('streamedGroups', () => {
  it('one file: every customer, the rows read counted as they come, the source named', async () => {
    const { ctx, events } = context();
    const { groups, rows } = await all(await streamedGroups({ inputs: [auto('export.csv')] }, ctx));
    expect(rows).toBe(counts.rows);
    expect(groups).toHaveLength(counts.customers);
    expect(ctx.account.sources).toEqual(['export.csv']);
    // Told every 5,000 rows as they go by, and the whole count once the reading ends.
    expect(ctx.account.rowsRead).toBe(counts.rows);
    expect(events.filter((e) => e.type === 'reading').map((e) => e.type === 'reading' && e.rows)).toEqual([5000]);
    expect(events).toContainEqual({ type: 'reading', file: 'export.csv', rows: 5000 });
    expect(groups[0]!.origin.src).toBe(0);
  });

  it('a --loans and a --payments file: each read as its role says, in the order given', async () => {
    const { ctx, events } = context();
    const { groups } = await all(await streamedGroups({ inputs: [payments, loans] }, ctx));
    expect(ctx.account.sources).toEqual(['payments.csv', 'loans.csv']);
    expect(groups).toHaveLength(counts.customers);
    expect(groups.reduce((n, g) => n + g.loans.length, 0)).toBe(counts.loans);
    expect(groups.reduce((n, g) => n + g.loans.reduce((m, l) => m + l.payments.length, 0), 0)).toBe(counts.payments);
    // Loans come from the second input, payments from the first.
    expect(groups[0]!.loans[0]!.src).toBe(1);
    expect(groups[0]!.loans[0]!.payments[0]!.src).toBe(0);
    // Progress is the payments file's rows.
    expect(events.some((e) => e.type === 'reading' && e.file === 'payments.csv')).toBe(true);
    expect(events.every((e) => e.type !== 'reading' || e.file === 'payments.csv')).toBe(true);
    const lines = (name: string) => readFileSync(join(work, name), 'utf8').trimEnd().split('\n').length - 1;
    expect(ctx.account.rowsRead).toBe(lines('loans.csv') + lines('payments.csv'));
  });

  it('rows that cannot be made records are counted in the run account', async () => {
    writeFileSync(
      join(work, 'bad.csv'),
      `${readFileSync(join(work, 'export.csv'), 'utf8').split('\n')[0]}\n,LN-1,5,Y,N,PDL,CUR,$1.00,$1.00,1/1/2026,1/1/2026 8:00 AM,,,,T-1,$1.00,PMT,ACH,PAID,$1.00,$0.00,$0.00,,,,,1/5/2026 9:00 AM\n`,
    );
    const { ctx, lines } = context();
    await all(await streamedGroups({ inputs: [auto('bad.csv')] }, ctx));
    expect(lines.length).toBeGreaterThan(0);
    expect(ctx.account.tally.rejected.payments + ctx.account.tally.rejected.loans).toBeGreaterThan(0);
  });

  it('asks `unchanged` with the lines of each customer', async () => {
    const { ctx } = context();
    let asked = 0;
    const { groups } = await all(
      await streamedGroups({ inputs: [auto('export.csv')] }, ctx, (raws) => {
        asked += raws.length;
        return raws.map(() => ({ loans: 1, payments: 1 }));
      }),
    );
    expect(asked).toBe(counts.customers);
    expect(groups.every((g) => g.loans.length === 0)).toBe(true);
    const two = context();
    let askedTwo = 0;
    await all(
      await streamedGroups({ inputs: [loans, payments] }, two.ctx, (raws) => {
        askedTwo += raws.length;
        return raws.map(() => undefined);
      }),
    );
    expect(askedTwo).toBe(counts.customers);
  });
});

describe('stageInputs', () => {
  it('stages every input, with the payments checked ahead, reporting progress', async () => {
    const { ctx, events } = context();
    const staging = new Staging();
    try {
      const staged = await stageInputs([auto('export.csv')], undefined, ctx, staging, () => false);
      expect(staged.rowsRead).toBe(counts.rows);
      const groups = [...staged.groups()];
      expect(groups).toHaveLength(counts.customers);
      // Payments that pass the quick check are kept as the JSON sent.
      expect(groups.some((g) => g.loans.some((l) => l.payments.some((p) => p.json !== undefined)))).toBe(true);
      expect(events).toContainEqual({ type: 'reading', file: 'export.csv', rows: 5000 });
      expect(ctx.account.inputFullyRead).toBe(true);
    } finally {
      staging.close();
    }
  });

  it('stops at the next progress report once stopped, leaving the input not fully read', async () => {
    const { ctx, events } = context();
    const staging = new Staging();
    try {
      await expect(stageInputs([auto('export.csv')], 'csv', ctx, staging, () => true)).rejects.toBeInstanceOf(
        ReadingStopped,
      );
      expect(ctx.account.inputFullyRead).toBe(false);
      expect(events.filter((e) => e.type === 'reading')).toEqual([]);
    } finally {
      staging.close();
    }
  });
});

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('inputsDigest and stagedDigest', () => {
  it('digests the mapping and each file by its role and bytes, and reports each file', async () => {
    const { ctx, events } = context();
    const digest = await inputsDigest([loans, payments], ctx);
    const l = sha(readFileSync(join(work, 'loans.csv')));
    const p = sha(readFileSync(join(work, 'payments.csv')));
    expect(digest).toBe(sha(`mapping:${JSON.stringify(mapping.spec)}\nloans:${l}\npayments:${p}\n`));
    expect(events).toEqual([
      { type: 'input', file: 'loans.csv', sha256: l },
      { type: 'input', file: 'payments.csv', sha256: p },
    ]);
  });

  it('a missing file or a folder: the error of opening it', async () => {
    const { ctx } = context();
    const missing = inputsDigest([auto('missing.csv')], ctx);
    await expect(missing).rejects.toBeInstanceOf(InputError);
    await expect(missing).rejects.toThrow(/missing\.csv/);
    await expect(inputsDigest([auto('folder')], ctx)).rejects.toThrow(/is a directory/);
  });

  it('standard input and FIFOs are keyed by what was read; files by their bytes', async () => {
    const { ctx } = context();
    expect(await stagedDigest([auto('-')], 'read-digest', ctx)).toBe('read-digest');
    expect(await stagedDigest([loans, { path: 'fifo.csv', role: 'payments' }], 'read-digest', ctx)).toBe('read-digest');
    expect(await stagedDigest([loans, payments], 'read-digest', ctx)).toBe(await inputsDigest([loans, payments], ctx));
  });
});

describe('stampInputs and changedInputs', () => {
  it('stamps named files (not standard input nor a missing file) and finds none changed', () => {
    writeFileSync(join(work, 'stamp.csv'), 'a,b\n1,2\n');
    const stamps = stampInputs([auto('stamp.csv'), auto('-'), auto('gone.csv')], work);
    expect([...stamps.keys()]).toEqual(['stamp.csv']);
    expect(stamps.get('stamp.csv')!.size).toBe(8);
    expect(changedInputs(stamps, work)).toEqual([]);
  });

  it('`-` is standard input, even beside a file of that name', () => {
    const dir = join(work, 'dash');
    mkdirSync(dir);
    writeFileSync(join(dir, '-'), 'a\n');
    expect(stampInputs([auto('-')], dir).size).toBe(0);
  });

  it('notes a file that grew, or went, while it was read', () => {
    writeFileSync(join(work, 'grows.csv'), 'a,b\n');
    writeFileSync(join(work, 'goes.csv'), 'a,b\n');
    const when = new Date('2026-01-02T03:04:05.000Z');
    utimesSync(join(work, 'grows.csv'), when, when);
    utimesSync(join(work, 'goes.csv'), when, when);
    const stamps = stampInputs([auto('grows.csv'), auto('goes.csv')], work);
    writeFileSync(join(work, 'grows.csv'), 'a,b\n1,2\n');
    const later = new Date('2026-01-02T03:04:06.000Z');
    utimesSync(join(work, 'grows.csv'), later, later);
    rmSync(join(work, 'goes.csv'));
    expect(changedInputs(stamps, work)).toEqual([
      'grows.csv changed while it was read (4 bytes, modified 2026-01-02T03:04:05.000Z at the start, 8 bytes, modified 2026-01-02T03:04:06.000Z at the end): it was probably still being written; rerun once the export is complete (upserts are safe to repeat)',
      'goes.csv changed while it was read (4 bytes, modified 2026-01-02T03:04:05.000Z at the start, gone at the end): it was probably still being written; rerun once the export is complete (upserts are safe to repeat)',
    ]);
  });
});
