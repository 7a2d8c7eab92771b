import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LeadctlError } from '../../../../src/errors.js';
import { defaultRejectsName, reasonKind, RejectsWriter } from '../../../../src/jobs/push/rejects.js';
import { renderReasons } from '../../../../src/jobs/push/summary.js';
import type { Reject } from '../../../../src/jobs/push/validate.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-reasons-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rejects grouped by reason', () => {
  it('a kind of reason leaves out the values of the record', () => {
    expect(reasonKind('payment_amount', '"$12.345" has a fraction of a cent (column "Trans Amt")')).toBe(
      'payment_amount: … has a fraction of a cent (column …)',
    );
    expect(reasonKind('payment_amount', '"$0.001" has a fraction of a cent (column "Trans Amt")')).toBe(
      'payment_amount: … has a fraction of a cent (column …)',
    );
    expect(reasonKind(undefined, 'has 26 columns; the header has 27')).toBe('has … columns; the header has …');
    expect(reasonKind(undefined, 'not sent: loan LN-1008 was rejected')).toBe('not sent: loan … was rejected');
    expect(reasonKind('customer_id', 'required')).toBe('customer_id: required');
  });

  it('counts every reject under its kind, most frequent first, with the first record as the example', () => {
    const w = new RejectsWriter(join(dir, 'r.csv'), dir, ['export.csv'], false);
    for (const row of [4, 9, 12])
      w.add({
        src: 0,
        row,
        level: 'payment',
        customerId: 'C1',
        loanId: `LN-${row}`,
        paymentId: `P${row}`,
        reason: `not sent: loan LN-${row} was rejected`,
      });
    w.add({
      src: 0,
      row: 2,
      level: 'loan',
      customerId: 'C2',
      loanId: 'LN-2',
      field: 'loan_amount',
      reason: '"abc" is not an amount in dollars (like $1,234.56) (column "Principal")',
    });
    const reasons = w.reasons();
    expect(reasons.map((r) => [r.count, r.reason])).toEqual([
      [3, 'not sent: loan … was rejected'],
      [1, 'loan_amount: … is not an amount in dollars (like …) (column …)'],
    ]);
    expect(reasons[0]!.example).toEqual({
      source_file: 'export.csv',
      row: 4,
      customer_id: 'C1',
      loan_id: 'LN-4',
      payment_id: 'P4',
      field: null,
      reason: 'not sent: loan LN-4 was rejected',
    });
    const text = renderReasons(reasons).join('\n');
    expect(text).toBe(
      [
        'rejected, by reason (first of each):',
        '  3  not sent: loan … was rejected',
        '       e.g. export.csv row 4 (customer C1, loan LN-4, payment P4): not sent: loan LN-4 was rejected',
        '  1  loan_amount: … is not an amount in dollars (like …) (column …)',
        '       e.g. export.csv row 2 (customer C2, loan LN-2): "abc" is not an amount in dollars (like $1,234.56) (column "Principal")',
      ].join('\n'),
    );
  });

  it('shows ten kinds and counts the rest in one line', () => {
    const reasons = Array.from({ length: 13 }, (_, i) => ({
      reason: `r${i}`,
      count: 13 - i,
      example: {
        source_file: 'f.csv',
        row: i,
        customer_id: null,
        loan_id: null,
        payment_id: null,
        field: null,
        reason: `r${i}`,
      },
    }));
    const lines = renderReasons(reasons);
    expect(lines.at(-1)).toBe('   6  more, for 3 other reasons (in the rejects file)');
  });
});

describe('the rejects file', () => {
  let n = 0;
  const path = () => join(dir, `w${n++}.csv`);
  const reject = (over: Partial<Reject> = {}): Reject => ({
    src: 0,
    row: 2,
    level: 'payment',
    customerId: 'C1',
    loanId: 'L1',
    paymentId: 'P1',
    field: 'payment_at',
    reason: 'required',
    ...over,
  });
  const HEADER = 'source_file,row,customer_id,loan_id,payment_id,field,reason';

  it('the default one, in a folder that cannot be written: refused at once, saying to name one with --rejects', () => {
    const missing = join(dir, 'no-such-folder');
    let error: unknown;
    try {
      new RejectsWriter('leadctl-rejects-x.csv', missing, ['export.csv'], false);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({
      exitCode: 2,
      message:
        'cannot write the rejects file leadctl-rejects-x.csv: its folder does not exist (the default, in the working folder)',
      hint: 'name a rejects file in a folder you can write to, with --rejects FILE',
    });
    // Named by the user, the path is the user's: its own words.
    expect(() => new RejectsWriter('r.csv', missing, ['export.csv'], true)).toThrow(
      /^cannot write the rejects file r\.csv: its folder does not exist$/,
    );
  });

  it('named by the user: created at once, with just the header when nothing is rejected', () => {
    const p = path();
    const w = new RejectsWriter(p, dir, ['export.csv'], true);
    expect(w.path).toBe(p);
    expect(w.created).toBe(true);
    w.close();
    expect(readFileSync(p, 'utf8')).toBe(`${HEADER}\n`);
    expect(w.count).toBe(0);
    expect(w.reasons()).toEqual([]);
  });

  it('otherwise appears only when a reject comes', () => {
    const p = path();
    const w = new RejectsWriter(p, dir, ['export.csv'], false);
    expect(w.created).toBe(false);
    w.close();
    expect(existsSync(p)).toBe(false);
    const q = path();
    const v = new RejectsWriter(q, dir, ['export.csv'], false);
    v.add(reject());
    v.close();
    expect(v.created).toBe(true);
    expect(readFileSync(q, 'utf8')).toBe(`${HEADER}\nexport.csv,2,C1,L1,P1,payment_at,required\n`);
  });

  it('writes a line per reject, naming its file, with empty cells for what it lacks', () => {
    const p = path();
    const w = new RejectsWriter(p, dir, ['a.csv', 'b.csv'], false);
    w.add(reject({ src: 1, row: 7 }));
    w.add({ src: 0, row: 3, level: 'customer', customerId: 'C2', reason: 'must hold at least one loan' });
    w.add({ src: 5, row: 0, level: 'customer', customerId: '', reason: 'x' });
    w.close();
    expect(readFileSync(p, 'utf8').split('\n')).toEqual([
      HEADER,
      'b.csv,7,C1,L1,P1,payment_at,required',
      'a.csv,3,C2,,,,must hold at least one loan',
      ',0,,,,,x',
      '',
    ]);
    expect(w.count).toBe(3);
    const kinds = w.reasons();
    expect(kinds.map((k) => k.example)).toEqual([
      {
        source_file: 'b.csv',
        row: 7,
        customer_id: 'C1',
        loan_id: 'L1',
        payment_id: 'P1',
        field: 'payment_at',
        reason: 'required',
      },
      {
        source_file: 'a.csv',
        row: 3,
        customer_id: 'C2',
        loan_id: null,
        payment_id: null,
        field: null,
        reason: 'must hold at least one loan',
      },
      { source_file: '', row: 0, customer_id: null, loan_id: null, payment_id: null, field: null, reason: 'x' },
    ]);
  });

  it('says which later record superseded a duplicate: its row, and its file when another', () => {
    const p = path();
    const w = new RejectsWriter(p, dir, ['a.csv', 'b.csv'], false);
    w.add(reject({ reason: 'duplicate payment_id', field: 'payment_id', supersededBy: { src: 0, row: 9 } }));
    w.add(reject({ reason: 'duplicate payment_id', field: 'payment_id', supersededBy: { src: 1, row: 4 } }));
    w.add(reject({ reason: 'duplicate payment_id', field: 'payment_id', supersededBy: { src: 7, row: 4 } }));
    w.close();
    const reasons = readFileSync(p, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.slice(l.indexOf('payment_id,') + 'payment_id,'.length));
    expect(reasons).toEqual([
      'duplicate payment_id: superseded by the later record at row 9 (the last one wins)',
      'duplicate payment_id: superseded by the later record at b.csv row 4 (the last one wins)',
      'duplicate payment_id: superseded by the later record at ? row 4 (the last one wins)',
    ]);
    expect(w.reasons()[0]!.example.reason).toBe(
      'duplicate payment_id: superseded by the later record at row 9 (the last one wins)',
    );
  });

  it('writes to disk every 256 lines, not only at the end', () => {
    const p = path();
    const w = new RejectsWriter(p, dir, ['a.csv'], false);
    for (let i = 0; i < 255; i++) w.add(reject({ row: i }));
    expect(w.created).toBe(false);
    w.add(reject({ row: 255 }));
    expect(w.created).toBe(true);
    w.close();
    expect(readFileSync(p, 'utf8').trim().split('\n')).toHaveLength(257);
  });

  it('tells 50 kinds of reason apart, counts the rest as other reasons, most frequent first', () => {
    const w = new RejectsWriter(path(), dir, ['a.csv'], false);
    for (let i = 0; i < 50; i++) w.add(reject({ field: undefined, reason: `kind ${'x'.repeat(i)}` }));
    w.add(reject({ field: undefined, reason: 'kind x' }));
    w.add(reject({ field: undefined, reason: 'kind x' }));
    w.add(reject({ field: undefined, reason: 'one more kind' }));
    w.add(reject({ field: undefined, reason: 'and another' }));
    w.close();
    const kinds = w.reasons();
    expect(kinds).toHaveLength(51);
    expect(kinds[0]).toMatchObject({ reason: 'kind x', count: 3 });
    expect(kinds.slice(1, 50).every((k) => k.count === 1)).toBe(true);
    expect(kinds[50]).toMatchObject({ reason: 'other reasons', count: 2, example: kinds[49]!.example });
    expect(w.count).toBe(54);
  });

  it('a file that cannot be written: removed, told once, and the rejects still counted and grouped', () => {
    const failures: LeadctlError[] = [];
    const w = new RejectsWriter('/dev/full', dir, ['a.csv'], false, { onFailure: (e) => failures.push(e) });
    const long = 'y'.repeat(1000);
    for (let i = 0; i < 300; i++) w.add(reject({ row: i, reason: long }));
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(LeadctlError);
    expect(w.failure).toBe(failures[0]);
    expect(w.created).toBe(false);
    w.flush();
    w.close();
    expect(failures).toHaveLength(1);
    expect(w.count).toBe(300);
    expect(w.reasons()).toEqual([expect.objectContaining({ count: 300 })]);
  });

  it('a failure with no one to tell still leaves the run going', () => {
    const w = new RejectsWriter('/dev/full', dir, ['a.csv'], false);
    const long = 'y'.repeat(1000);
    expect(() => {
      for (let i = 0; i < 300; i++) w.add(reject({ row: i, reason: long }));
      w.close();
    }).not.toThrow();
    expect(w.failure).toBeInstanceOf(LeadctlError);
    expect(w.count).toBe(300);
  });

  it('a folder in place of the file is refused at once, naming the rejects file', () => {
    expect(() => new RejectsWriter(dir, dir, ['a.csv'], false)).toThrow(`the rejects file ${dir} is a directory`);
  });

  it('a reject without a customer id gets an empty cell', () => {
    const p = path();
    const w = new RejectsWriter(p, dir, ['a.csv'], false);
    w.add({ src: 0, row: 9, level: 'customer', reason: 'x' } as Reject);
    w.close();
    expect(readFileSync(p, 'utf8').split('\n')[1]).toBe('a.csv,9,,,,,x');
  });

  it('a file that cannot be completed fails at close, the same way', () => {
    const sub = join(dir, `gone${n++}`);
    mkdirSync(sub);
    const failures: LeadctlError[] = [];
    const w = new RejectsWriter(join(sub, 'r.csv'), dir, ['a.csv'], true, { onFailure: (e) => failures.push(e) });
    w.add(reject());
    rmSync(sub, { recursive: true });
    expect(() => w.close()).not.toThrow();
    expect(failures).toHaveLength(1);
    expect(w.failure).toBe(failures[0]);
    expect(w.created).toBe(false);
  });

  it('its default name is the run start to the second, in UTC', () => {
    expect(defaultRejectsName(new Date('2026-11-20T08:09:10.123Z'))).toBe('leadctl-rejects-20261120-080910Z.csv');
  });
});

describe('reasonKind', () => {
  it('puts the field in front once, unless the reason already starts with it', () => {
    expect(reasonKind('loan_id', 'loan_id: taken')).toBe('loan_id: taken');
    expect(reasonKind('loan_id', 'loan_id must be text')).toBe('loan_id must be text');
    expect(reasonKind('loan_id', 'loan_idx: taken')).toBe('loan_id: loan_idx: taken');
    expect(reasonKind('loan_id', 'taken')).toBe('loan_id: taken');
    expect(reasonKind('', 'taken')).toBe('taken');
  });

  it('leaves out quoted text (with doubled quotes inside) and every word holding a digit', () => {
    expect(reasonKind(undefined, '"a ""b"" c" is not a date')).toBe('… is not a date');
    expect(reasonKind(undefined, 'at row 12a; in x9:y (col2)')).toBe('at row …; in …:y (…)');
    expect(reasonKind(undefined, '"a" and "b"')).toBe('… and …');
  });
});
