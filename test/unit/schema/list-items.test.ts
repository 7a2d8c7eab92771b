import { describe, expect, it } from 'vitest';
import {
  LIST_TYPES,
  isValidEmail,
  isValidPhone,
  isValidRoutingNumber,
  isValidSsn,
  isValidSsn4,
  isValidZip,
  listRowMessage,
  validateListItem,
} from '../../../src/schema/index.js';

describe('SSN', () => {
  it.each(['123456789', '001010001', '665999999', '667010001', '899991234', '078051120'])('%s is possible', (ssn) => {
    expect(validateListItem('Social Security Numbers', ssn)).toBeNull();
    expect(isValidSsn(ssn)).toBe(true);
  });

  it.each([
    ['000123456', 'SSN area number 000 is never issued'],
    ['666123456', 'SSN area number 666 is never issued'],
    ['900123456', 'SSN area number 900 is never issued'],
    ['999123456', 'SSN area number 999 is never issued'],
    ['123001234', 'SSN group number 00 is never issued'],
    ['123450000', 'SSN serial number 0000 is never issued'],
  ])('%s is refused: %s', (ssn, reason) => {
    expect(validateListItem('Social Security Numbers', ssn)).toContain(reason);
    expect(isValidSsn(ssn)).toBe(false);
  });

  it.each(['123-45-6789', '12345678', '1234567890', '12345678a', '', ' 23456789'])('"%s" is badly formatted', (ssn) => {
    expect(validateListItem('Social Security Numbers', ssn)).toBe(
      'SSN must be exactly 9 digits with no dashes or spaces',
    );
  });

  it('checks the group and serial only on the right digits', () => {
    expect(isValidSsn('123100000')).toBe(false); // serial 0000
    expect(isValidSsn('123100001')).toBe(true);
    expect(isValidSsn('120012345')).toBe(true); // zeros across area and group, group is 01
  });
});

describe('last four of SSN', () => {
  it('takes 4 digits except 0000', () => {
    expect(validateListItem('Last Four of Social Security Numbers', '6789')).toBeNull();
    expect(validateListItem('Last Four of Social Security Numbers', '0001')).toBeNull();
    expect(validateListItem('Last Four of Social Security Numbers', '0000')).toContain('0000 is never issued');
    expect(validateListItem('Last Four of Social Security Numbers', '678')).toContain('exactly 4 digits');
    expect(validateListItem('Last Four of Social Security Numbers', '67890')).toContain('exactly 4 digits');
    expect(isValidSsn4('12a4')).toBe(false);
  });
});

describe('ZIP', () => {
  it('takes exactly 5 digits', () => {
    expect(isValidZip('73301')).toBe(true);
    expect(isValidZip('02134')).toBe(true);
    expect(validateListItem('ZIP Codes', '7330')).toBe('ZIP code must be exactly 5 digits');
    expect(validateListItem('ZIP Codes', '73301-1234')).toBe('ZIP code must be exactly 5 digits');
    expect(isValidZip('733011234')).toBe(false);
  });
});

describe('phone (NANP)', () => {
  it.each(['5125550100', '2125551234', '9999999999'])('%s is valid', (phone) => expect(isValidPhone(phone)).toBe(true));
  it.each([
    ['0125550100', 'area code cannot start with 0 or 1'],
    ['1125550100', 'area code cannot start with 0 or 1'],
    ['5120550100', 'exchange cannot start with 0 or 1'],
    ['5121550100', 'exchange cannot start with 0 or 1'],
    ['512555010', 'exactly 10 digits'],
    ['15125550100', 'exactly 10 digits'],
    ['512-555-0100', 'exactly 10 digits'],
  ])('%s is refused: %s', (phone, reason) => {
    expect(validateListItem('Telephone Numbers', phone)).toContain(reason);
  });
});

describe('routing number (ABA checksum)', () => {
  it.each(['011000015', '021000021', '122105155', '011401533', '091000019'])('%s has a valid checksum', (rtn) => {
    expect(validateListItem('Bank Routing Numbers', rtn)).toBeNull();
    expect(isValidRoutingNumber(rtn)).toBe(true);
  });
  it.each(['011000016', '021000022', '122105156', '123456789', '111111111'])('%s has an invalid checksum', (rtn) => {
    expect(validateListItem('Bank Routing Numbers', rtn)).toBe('routing number checksum is invalid');
  });
  it.each(['02100002', '0210000210', '021-000-021', 'abcdefghi'])('%s is not 9 digits', (rtn) => {
    expect(validateListItem('Bank Routing Numbers', rtn)).toBe(
      'routing number must be exactly 9 digits with no dashes or spaces',
    );
  });
  it('catches every single-digit change of a valid number', () => {
    const valid = '021000021';
    for (let i = 0; i < 9; i++) {
      for (let d = 0; d <= 9; d++) {
        const changed = valid.slice(0, i) + d + valid.slice(i + 1);
        if (changed !== valid) expect(isValidRoutingNumber(changed), changed).toBe(false);
      }
    }
  });
});

describe('email', () => {
  it.each(['a@b.co', 'first.last+tag@example.com', "o'brien@mail.example.org", 'x_y-z@sub-domain.example.io'])(
    '%s is valid',
    (email) => expect(isValidEmail(email)).toBe(true),
  );
  it.each([
    ['plainaddress', 'must contain an @'],
    ['a b@example.com', 'must not contain spaces'],
    ['@example.com', 'before the @'],
    ['.a@example.com', 'before the @'],
    ['a..b@example.com', 'before the @'],
    ['a.@example.com', 'before the @'],
    ['a@localhost', 'invalid domain'],
    ['a@-example.com', 'invalid domain'],
    ['a@example..com', 'invalid domain'],
    ['a@example.c', 'invalid top-level domain'],
    ['a@example.c0m', 'invalid top-level domain'],
    ['a@b@example.com', 'before the @'],
    ['', 'must not be empty'],
    [`${'a'.repeat(64)}@${'b'.repeat(186)}.com`, 'longer than 254'],
  ])('%s is refused: %s', (email, reason) => {
    expect(validateListItem('Email Addresses', email)).toContain(reason);
  });
  it('refuses a local part over 64 characters', () => {
    expect(isValidEmail(`${'a'.repeat(65)}@example.com`)).toBe(false);
    expect(isValidEmail(`${'a'.repeat(64)}@example.com`)).toBe(true);
  });
});

describe('employer names and affiliates', () => {
  it.each(['Employer Names', 'Affiliates'] as const)('%s: non-empty and at most 255 characters', (type) => {
    expect(validateListItem(type, 'Acme Corp')).toBeNull();
    expect(validateListItem(type, 'x'.repeat(255))).toBeNull();
    expect(validateListItem(type, 'x'.repeat(256))).toBe('must be at most 255 characters');
    expect(validateListItem(type, '')).toBe('must not be empty');
    expect(validateListItem(type, '   ')).toBe('must not be empty');
  });
});

describe('validateListItem', () => {
  it('has a rule for every list type that refuses an empty value', () => {
    for (const type of LIST_TYPES) expect(validateListItem(type, ''), type).not.toBeNull();
  });
  it('phrases a row message with its 1-based row number', () => {
    expect(listRowMessage(3, 'routing number checksum is invalid')).toBe('Row 3: routing number checksum is invalid');
  });
});

describe('email fast path', () => {
  it('agrees with the detailed checks: no address falls through to the generic reason', () => {
    const alphabet = ['a', 'b', 'Z', '1', '.', '.', '-', '@', '@', '+', '_', ' ', 'é', 'c', 'o', 'm'];
    let seed = 12345;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let valid = 0;
    for (let i = 0; i < 20000; i++) {
      const length = 3 + Math.floor(next() * 14);
      let candidate = '';
      for (let j = 0; j < length; j++) candidate += alphabet[Math.floor(next() * alphabet.length)];
      const reason = validateListItem('Email Addresses', candidate);
      expect(reason, candidate).not.toBe('email address is not valid');
      if (reason === null) valid++;
    }
    expect(valid).toBeGreaterThan(0);
  });
});

describe('reasons say what is accepted where the value was read', () => {
  // A file keeps its delimiters (the normaliser takes them out); a request's items are bare digits.
  it.each([
    ['Social Security Numbers', '123-45-678', /9 digits \(dashes, spaces, dots or slashes between them are fine\)/],
    ['Last Four of Social Security Numbers', '12 3', /4 digits \(spaces or dashes between them are fine\)/],
    ['ZIP Codes', '1234', /5 digits, or 9 as ZIP\+4/],
    ['Telephone Numbers', '555-0142', /10 digits, area code first .*\+1 or 1 are fine/],
    ['Bank Routing Numbers', '0210-0002', /9 digits \(dashes or spaces between them are fine\)/],
  ] as const)('%s: a file may keep its delimiters; a request may not', (type, value, fileWording) => {
    const file = validateListItem(type, value.replace(/[^0-9]/g, ''), 'file');
    expect(file).toMatch(fileWording);
    expect(file).not.toMatch(/\bno (dashes|delimiters|spaces)/);
    expect(validateListItem(type, value, 'request')).toMatch(
      /exactly \d+ digits( with no| with no country code or)? ?(dashes|delimiters)?/,
    );
  });

  it('words the rules that are not about shape the same in both', () => {
    expect(validateListItem('Social Security Numbers', '000123456', 'file')).toBe(
      validateListItem('Social Security Numbers', '000123456', 'request'),
    );
    expect(validateListItem('Bank Routing Numbers', '021000022', 'file')).toBe('routing number checksum is invalid');
  });
});
