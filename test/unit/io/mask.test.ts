import { describe, expect, it } from 'vitest';
import { maskAccount, maskAllButLast, maskSsn } from '../../../src/io/mask.js';

describe('masking', () => {
  it('shows only the last four of an SSN, keeping separators', () => {
    expect(maskSsn('123456789')).toBe('*****6789');
    expect(maskSsn('123-45-6789')).toBe('***-**-6789');
    expect(maskSsn('6789')).toBe('6789');
    expect(maskSsn(undefined)).toBe('');
  });
  it('shows only the last four of an account number', () => {
    expect(maskAccount('000123456789')).toBe('********6789');
    expect(maskAccount('12')).toBe('12');
    expect(maskAllButLast('AB12 34CD', 2)).toBe('**** **CD');
  });
});

describe('maskPersonalNumbers (the text of another program)', () => {
  it('masks SSNs written with dashes or spaces and runs of 8+ digits; leaves dates, amounts, short ids and phone parts', async () => {
    const { maskPersonalNumbers } = await import('../../../src/io/mask.js');
    expect(maskPersonalNumbers('SSN 219-45-7781 and 219 45 7781 (219457781); account 000123456789.')).toBe(
      'SSN ***-**-7781 and *** ** 7781 (*****7781); account ********6789.',
    );
    expect(maskPersonalNumbers('due 2024-01-05, 1234.56 USD, lead 4521, call 312 555 0142, id 1234567')).toBe(
      'due 2024-01-05, 1234.56 USD, lead 4521, call 312 555 0142, id 1234567',
    );
    // Part of a longer run of spaced digits: not an SSN on its own.
    expect(maskPersonalNumbers('1 219 45 7781')).toBe('1 219 45 7781');
  });
});
