import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, fail, ok, warn } from '../../../src/jobs/doctor/check.js';
import { CHECK_LABELS, DoctorText, wantsUnicode } from '../../../src/output/doctor.js';

describe('the text for people', () => {
  it('UTF-8 marks unless the locale names another charset', () => {
    expect(wantsUnicode({})).toBe(true);
    expect(wantsUnicode({ LANG: 'en_US.UTF-8' })).toBe(true);
    expect(wantsUnicode({ LANG: 'C.utf8' })).toBe(true);
    expect(wantsUnicode({ LANG: 'C' })).toBe(false);
    expect(wantsUnicode({ LC_ALL: 'POSIX', LANG: 'en_US.UTF-8' })).toBe(false);
    expect(wantsUnicode({ LC_CTYPE: 'de_DE.ISO-8859-1' })).toBe(false);
  });

  it('every check has its label', () => {
    expect(Object.keys(CHECK_LABELS)).toEqual([...CHECK_NAMES]);
  });

  it('one line a check, the hint indented under the value; colour only on the mark', () => {
    const text = new DoctorText(false, true);
    expect(text.line(fail('clock', 'clock 5 h ahead of the service', 'set the clock', 2))).toBe(
      '✗ clock          clock 5 h ahead of the service\n                 hint: set the clock\n',
    );
    const ascii = new DoctorText(false, false);
    expect(ascii.line(warn('proxy', 'v', 'h'))).toBe('WARN proxy          v\n                    hint: h\n');
    const colour = new DoctorText(true, true).line(ok('token', 'a token came back'));
    expect(colour).toContain('token          a token came back');
    expect(colour.startsWith('\u001b[')).toBe(true);
  });
});
