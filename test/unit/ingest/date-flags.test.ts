import { describe, expect, it } from 'vitest';
import { parseDateFlag, parseDateTimeFlag, parsePositiveInt, parseRetries } from '../../../src/ingest/date-flags.js';

describe('parseDateFlag', () => {
  const now = new Date('2024-03-01T02:00:00Z');
  it('accepts a real calendar date', () => {
    expect(parseDateFlag('2024-02-29', now)).toBe('2024-02-29');
  });
  it('refuses impossible dates and other forms, naming the flag', () => {
    expect(() => parseDateFlag('2023-02-29', now)).toThrow(/--date "2023-02-29" is not a real calendar date/);
    expect(() => parseDateFlag('2024-13-01', now)).toThrow(/not a real calendar date/);
    expect(() => parseDateFlag('01/05/2024', now)).toThrow(/--date must be a date YYYY-MM-DD/);
  });
  it('turns today and yesterday into UTC days', () => {
    expect(parseDateFlag('today', now)).toBe('2024-03-01');
    expect(parseDateFlag('Yesterday', now)).toBe('2024-02-29');
  });
});

describe('parseDateTimeFlag', () => {
  it('normalises to UTC YYYY-MM-DDTHH:mm:ssZ', () => {
    expect(parseDateTimeFlag('2024-01-05T14:00:00Z')).toBe('2024-01-05T14:00:00Z');
    expect(parseDateTimeFlag('2024-01-05T08:00:00-06:00')).toBe('2024-01-05T14:00:00Z');
    expect(parseDateTimeFlag('2024-01-05T23:30:00.750-02:00')).toBe('2024-01-06T01:30:00Z');
  });
  it('refuses a time without a zone and an impossible time', () => {
    expect(() => parseDateTimeFlag('2024-01-05T14:00:00')).toThrow(/with a zone/);
    expect(() => parseDateTimeFlag('2024-02-30T14:00:00Z')).toThrow(/not a real date and time/);
    expect(() => parseDateTimeFlag('2024-01-05T25:00:00Z')).toThrow(/not a real date and time/);
  });
  it('refuses an offset beyond ±14:00', () => {
    expect(parseDateTimeFlag('2024-01-05T14:00:00+14:00')).toBe('2024-01-05T00:00:00Z');
    expect(() => parseDateTimeFlag('2024-01-05T14:00:00+25:00')).toThrow(/at most ±14:00/);
  });
});

describe('parsePositiveInt', () => {
  it('accepts whole numbers within bounds only', () => {
    expect(parsePositiveInt('25', '--limit')).toBe(25);
    expect(() => parsePositiveInt('0', '--limit')).toThrow(/--limit must be a whole number of at least 1/);
    expect(() => parsePositiveInt('2.5', '--limit')).toThrow(/whole number/);
    expect(() => parsePositiveInt('1001', '--per-page', 1000)).toThrow(/at most 1000/);
  });
});

describe('parseRetries', () => {
  it('accepts 0 to 10 further attempts', () => {
    expect(parseRetries('0')).toBe(0);
    expect(parseRetries('10')).toBe(10);
    expect(() => parseRetries('11')).toThrow(/--retries must be a whole number from 0 to 10, got "11"/);
    expect(() => parseRetries('-1')).toThrow(/from 0 to 10/);
    expect(() => parseRetries('two')).toThrow(/from 0 to 10/);
  });
});
