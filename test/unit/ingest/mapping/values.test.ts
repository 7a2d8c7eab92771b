import { describe, expect, it } from 'vitest';
import {
  enumMatcher,
  parseBoolean,
  parseMoney,
  parseMoneyGeneral,
  parseWholeNumber,
} from '../../../../src/ingest/mapping/values.js';

describe('parseMoney in dollars', () => {
  it.each([
    ['$1,234.56', 123456],
    ['1234.5', 123450],
    ['$0.07', 7],
    ['12', 1200],
    [' $ 12.00 ', 1200],
    ['-$5', -500],
    ['$-5.25', -525],
    ['($12.00)', -1200],
    ['(1,000)', -100000],
    ['.5', 50],
    ['12.340', 1234],
  ])('%s → %i cents', (text, cents) => {
    expect(parseMoney(text, 'dollars')).toEqual({ ok: true, value: cents });
  });

  it('refuses a fraction of a cent rather than rounding it', () => {
    const result = parseMoney('$12.345', 'dollars');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(/fraction of a cent/);
  });

  it.each(['abc', '$', '1,23', '12,34.00', '--5', '$1.2.3', '(-5)'])('refuses %j', (text) => {
    expect(parseMoney(text, 'dollars').ok).toBe(false);
  });
});

describe('parseMoney in cents', () => {
  it('reads whole numbers with or without thousands separators', () => {
    expect(parseMoney('123450', 'cents')).toEqual({ ok: true, value: 123450 });
    expect(parseMoney('1,234', 'cents')).toEqual({ ok: true, value: 1234 });
    expect(parseMoney('-500', 'cents')).toEqual({ ok: true, value: -500 });
  });
  it('refuses decimals and dollar signs with a reason', () => {
    const result = parseMoney('12.5', 'cents');
    expect(!result.ok && result.reason).toMatch(/whole number of cents/);
    expect(parseMoney('$12', 'cents')).toEqual({ ok: true, value: 12 });
    expect(parseMoney('twelve', 'cents').ok).toBe(false);
  });
  it('refuses amounts beyond exact integers', () => {
    expect(parseMoney('99999999999999999999', 'cents').ok).toBe(false);
  });
});

describe('parseBoolean', () => {
  it.each(['Y', 'yes', 'TRUE', '1', 't'])('%s is true', (t) =>
    expect(parseBoolean(t)).toEqual({ ok: true, value: true }),
  );
  it.each(['n', 'No', 'false', '0', 'F'])('%s is false', (t) =>
    expect(parseBoolean(t)).toEqual({ ok: true, value: false }),
  );
  it('refuses anything else', () => expect(parseBoolean('maybe').ok).toBe(false));
});

describe('parseWholeNumber', () => {
  it('reads digits only', () => {
    expect(parseWholeNumber(' 42 ')).toEqual({ ok: true, value: 42 });
    expect(parseWholeNumber('4.2').ok).toBe(false);
    expect(parseWholeNumber('-4').ok).toBe(false);
  });
});

describe('enumMatcher', () => {
  const match = enumMatcher(['Paid In Full', 'Past Due', 'ACH', 'ACH Collection']);
  it('matches up to case, spaces and punctuation, returning the exact name', () => {
    expect(match('paid in full')).toEqual({ ok: true, value: 'Paid In Full' });
    expect(match('PAID_IN_FULL')).toEqual({ ok: true, value: 'Paid In Full' });
    expect(match('ach-collection')).toEqual({ ok: true, value: 'ACH Collection' });
    expect(match('ach')).toEqual({ ok: true, value: 'ACH' });
  });
  it('names the allowed values when nothing matches', () => {
    const result = match('PIF');
    expect(!result.ok && result.reason).toContain('Paid In Full, Past Due');
  });
});

describe('the fast dollar reader', () => {
  it('agrees with the general reader on generated amounts, well and badly formed', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pieces = [
      '$',
      '(',
      ')',
      '-',
      ',',
      '.',
      ' ',
      '0',
      '1',
      '2',
      '5',
      '9',
      '00',
      '123',
      ',000',
      '.5',
      '.05',
      '.005',
      'x',
    ];
    const texts: string[] = [];
    for (let i = 0; i < 20000; i++) {
      let t = '';
      const n = 1 + Math.floor(random() * 7);
      for (let k = 0; k < n; k++) t += pieces[Math.floor(random() * pieces.length)];
      texts.push(t);
    }
    for (let i = 0; i < 5000; i++) {
      const cents = Math.floor(random() * 1e9);
      const dollars = `${Math.floor(cents / 100).toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')}`;
      texts.push(`$${dollars}`, `(${dollars})`, dollars.replace(/,/g, ''), `($${dollars})`);
    }
    for (const text of texts) expect(parseMoney(text, 'dollars'), text).toEqual(parseMoneyGeneral(text, 'dollars'));
  });
});
