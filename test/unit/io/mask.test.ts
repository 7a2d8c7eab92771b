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
