import { describe, expect, it } from 'vitest';
import { bytes, doctorExitCode, duration, fail, ok, skip, warn } from '../../../../src/jobs/doctor/check.js';

describe('the exit code of a doctor run', () => {
  it('is 0 with warnings and skips, else the largest failure code', () => {
    expect(doctorExitCode([ok('runtime', ''), warn('proxy', '', 'h'), skip('tls', '')])).toBe(0);
    expect(doctorExitCode([fail('clock', '', null, 2), fail('token', '', null, 3)])).toBe(3);
    expect(doctorExitCode([fail('token', '', null, 3), fail('dns', '', null, 5), fail('clock', '', null, 2)])).toBe(5);
  });
});

describe('words', () => {
  it('durations and sizes for people', () => {
    expect(duration(3_400)).toBe('3 s');
    expect(duration(-250_000)).toBe('4 min 10 s');
    expect(duration(5 * 3600_000 + 2 * 60_000)).toBe('5 h 2 min');
    expect(duration(3600_000)).toBe('1 h');
    expect(duration(5 * 3600_000 - 900)).toBe('5 h');
    expect(duration(86_400_000 * 3.5)).toBe('3 days');
    expect(bytes(512)).toBe('512 bytes');
    expect(bytes(1536 * 1024 * 1024)).toBe('1.5 GB');
    expect(bytes(75 * 1024 ** 3)).toBe('75 GB');
  });
});
