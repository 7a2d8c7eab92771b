import { describe, expect, it } from 'vitest';
import { maskAccount, maskAllButLast, maskSsn, redact, REDACTED } from '../../../src/output/mask.js';

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

describe('redact', () => {
  it('removes the given secrets, bearer credentials and JWTs', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const line = `Authorization: Bearer abc.def-123 secret=Zs9xQ2 token ${jwt}`;
    const out = redact(line, ['Zs9xQ2']);
    expect(out).not.toContain('abc.def-123');
    expect(out).not.toContain('Zs9xQ2');
    expect(out).not.toContain(jwt);
    expect(out).toContain(REDACTED);
  });
  it('removes client_secret, access_token and api_key fields', () => {
    const out = redact('client_secret=abc&x=1 {"access_token":"tok","api_key": "key9"}');
    expect(out).toBe(`client_secret=${REDACTED}&x=1 {"access_token":"${REDACTED}","api_key": "${REDACTED}"}`);
  });
  it('leaves ordinary text alone', () => {
    expect(redact('GET /api/v1/lists → 200 in 12 ms', [undefined, 'zz'])).toBe('GET /api/v1/lists → 200 in 12 ms');
  });
});
