import { describe, expect, it } from 'vitest';
import {
  headerMatcher,
  listCellProblem,
  normaliseEmail,
  normaliseListValue,
  normaliseName,
  normalisePhone,
  normaliseRouting,
  normaliseSsn,
  normaliseSsn4,
  normaliseZip,
} from '../../../../src/ingest/lists/normalise.js';
import { LIST_TYPES, type ListType } from '../../../../src/schema/lists.js';

/** What the CLI does to one cell: normalise, then the service's own validator, worded for a file. */
function check(type: ListType, raw: string): { value: string; reason: string | null } {
  const value = normaliseListValue(type, raw);
  return { value, reason: listCellProblem(type, raw, value) };
}

describe('SSN', () => {
  it.each([
    ['123-45-6789', '123456789'],
    ['123 45 6789', '123456789'],
    ['123.45.6789', '123456789'],
    ['  123456789 ', '123456789'],
    ['123\u201345\u20136789', '123456789'], // en dashes from a word processor
    ['123/45/6789', '123456789'],
    ['078-05-1120', '078051120'],
  ])('%j normalises to %s', (raw, expected) => {
    expect(normaliseSsn(raw)).toBe(expected);
    expect(check('Social Security Numbers', raw)).toEqual({ value: expected, reason: null });
  });

  it('returns a clean value untouched (the same string)', () => {
    const clean = '123456789';
    expect(normaliseSsn(clean)).toBe(clean);
  });

  it.each([
    ['000-12-3456', /area number 000/],
    ['666-12-3456', /area number 666/],
    ['912-34-5678', /900-999/],
    ['123-00-4567', /group number 00/],
    ['123-45-0000', /serial number 0000/],
    ['12-345-678', /exactly 9 digits/],
    ['1234567890', /exactly 9 digits/],
    ['ABC-DE-FGHI', /exactly 9 digits/],
    ['123-45-678O', /exactly 9 digits/], // letter O, not zero
  ])('%j is refused: %s', (raw, reason) => {
    expect(check('Social Security Numbers', raw).reason).toMatch(reason);
  });

  it('does not invent digits: an 8-digit value stays invalid, and the reason says a spreadsheet dropped a zero', () => {
    expect(check('Social Security Numbers', '12345678')).toEqual({
      value: '12345678',
      reason:
        '8 digits, not 9: a spreadsheet dropped the leading zero: format the column as Text (or give it a custom number format of 9 zeros) and export again',
    });
    expect(check('Social Security Numbers', '123').reason).toBe(
      'SSN must have exactly 9 digits (dashes, spaces, dots or slashes between them are fine)',
    );
  });

  it('says what is accepted, delimiters included, not the request rule', () => {
    const reason = check('Social Security Numbers', 'ABC-DE-FGHI').reason!;
    expect(reason).toContain('dashes, spaces, dots or slashes between them are fine');
    expect(reason).not.toMatch(/no dashes/);
  });
});

describe('last four of SSN', () => {
  it('keeps leading zeros and strips spaces', () => {
    expect(normaliseSsn4(' 0123 ')).toBe('0123');
    expect(check('Last Four of Social Security Numbers', '0123').reason).toBeNull();
  });

  it('refuses 0000, short and non-digit values', () => {
    expect(check('Last Four of Social Security Numbers', '0000').reason).toMatch(/0000/);
    expect(check('Last Four of Social Security Numbers', '123').reason).toMatch(
      /^3 digits, not 4: .*leading zero: .*of 4 zeros\)/,
    );
    expect(check('Last Four of Social Security Numbers', '12a4').reason).toMatch(/4 digits/);
  });
});

describe('ZIP codes', () => {
  it.each([
    ['02134', '02134'],
    [' 90210 ', '90210'],
    ['10001-1234', '10001'],
    ['60614 2233', '60614'],
    ['941071234', '94107'],
  ])('%j becomes %s', (raw, expected) => {
    expect(normaliseZip(raw)).toBe(expected);
    expect(check('ZIP Codes', raw).reason).toBeNull();
  });

  it('does not repair what is not ZIP+4', () => {
    expect(check('ZIP Codes', '1234-56789')).toEqual({
      value: '1234-56789',
      reason: 'ZIP code must have 5 digits, or 9 as ZIP+4 (12345-6789, which is cut to its 5-digit ZIP)',
    });
    expect(check('ZIP Codes', '2134').reason).toMatch(
      /^4 digits, not 5: a spreadsheet dropped the leading zero: .*of 5 zeros\)/,
    );
    expect(check('ZIP Codes', '501').reason).toMatch(/^3 digits, not 5: a spreadsheet dropped the leading zeros/);
    expect(check('ZIP Codes', 'ABCDE').reason).not.toBeNull();
  });

  it('says what a spreadsheet did to a ZIP+4 that lost its leading zeros, with or without its dash', () => {
    expect(check('ZIP Codes', '2134-1234').reason).toMatch(
      /^4 digits, not 5: a spreadsheet dropped the leading zero: /,
    );
    expect(check('ZIP Codes', '501-1234').reason).toMatch(/^3 digits, not 5: a spreadsheet dropped the leading zeros/);
    expect(check('ZIP Codes', '21341234').reason).toMatch(/^8 digits, not 9: a spreadsheet dropped the leading zero: /);
    expect(check('ZIP Codes', '5011234').reason).toMatch(/^7 digits, not 9: /);
    // Whole ones are not touched.
    expect(check('ZIP Codes', '02134-1234')).toEqual({ value: '02134', reason: null });
  });
});

describe('telephone numbers', () => {
  it.each([
    ['(312) 555-0142', '3125550142'],
    ['+1 312.555.0142', '3125550142'],
    ['1-312-555-0142', '3125550142'],
    ['1 (312) 555 0142', '3125550142'],
    ['312/555-0142', '3125550142'],
    ['3125550142', '3125550142'],
  ])('%j becomes %s', (raw, expected) => {
    expect(normalisePhone(raw)).toBe(expected);
    expect(check('Telephone Numbers', raw).reason).toBeNull();
  });

  it('refuses foreign numbers, extensions and numbers outside the numbering plan', () => {
    expect(check('Telephone Numbers', '+44 20 7946 0958').reason).toMatch(/10 digits/);
    expect(check('Telephone Numbers', '312-555-0142 x12').reason).toMatch(/10 digits/);
    expect(check('Telephone Numbers', '(123) 555-0100').reason).toMatch(/area code/);
    expect(check('Telephone Numbers', '312-055-0142').reason).toMatch(/exchange/);
    // A leading 1 is only a country code when 11 digits remain.
    expect(normalisePhone('123456789')).toBe('123456789');
  });
});

describe('bank routing numbers (ABA checksum)', () => {
  it.each(['021000021', '011000015', '121000358', '026009593', '322271627'])('%s is valid', (routing) => {
    expect(check('Bank Routing Numbers', routing).reason).toBeNull();
  });

  it('strips delimiters before the checksum', () => {
    expect(normaliseRouting('021-000-021')).toBe('021000021');
    expect(normaliseRouting(' 0210 00021 ')).toBe('021000021');
  });

  it('refuses a wrong checksum and wrong lengths', () => {
    expect(check('Bank Routing Numbers', '021000022').reason).toBe('routing number checksum is invalid');
    expect(check('Bank Routing Numbers', '123456789').reason).toBe('routing number checksum is invalid');
    expect(check('Bank Routing Numbers', '21000021').reason).toMatch(/^8 digits, not 9: a spreadsheet dropped/);
    // Zeros put back would not give a valid number: not a spreadsheet's doing.
    expect(check('Bank Routing Numbers', '21000022').reason).toBe(
      'routing number must have exactly 9 digits (dashes or spaces between them are fine)',
    );
  });
});

describe('email addresses', () => {
  it('trims and lower-cases', () => {
    expect(normaliseEmail('  Jane.Doe@Example.COM ')).toBe('jane.doe@example.com');
    expect(check('Email Addresses', 'John_Smith+Promo@Mail.Example.org')).toEqual({
      value: 'john_smith+promo@mail.example.org',
      reason: null,
    });
  });

  it('refuses what is not an address', () => {
    expect(check('Email Addresses', 'not-an-email').reason).toMatch(/@/);
    expect(check('Email Addresses', 'bob@@example.com').reason).not.toBeNull();
    expect(check('Email Addresses', 'dave@example').reason).toMatch(/domain/);
    expect(check('Email Addresses', 'eve example@example.com').reason).toMatch(/spaces/);
  });
});

describe('employer names and affiliates', () => {
  it('trims and collapses inner whitespace of every kind', () => {
    expect(normaliseName('  Acme   Corporation  ')).toBe('Acme Corporation');
    expect(normaliseName('Initech\tLLC')).toBe('Initech LLC');
    expect(normaliseName('Umbrella\r\nCorp')).toBe('Umbrella Corp');
    expect(normaliseName('Wayne\u00a0Enterprises')).toBe('Wayne Enterprises');
    expect(check('Affiliates', ' Lead  Gen ')).toEqual({ value: 'Lead Gen', reason: null });
  });

  it('keeps case: names are not case-folded', () => {
    expect(normaliseName('ACME corp')).toBe('ACME corp');
  });

  it('refuses a name longer than 255 characters', () => {
    expect(check('Employer Names', 'x'.repeat(256)).reason).toMatch(/255/);
  });
});

describe('header matching', () => {
  it('recognises common header spellings per type', () => {
    const label = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');
    expect(headerMatcher('Social Security Numbers')(label('SSN'))).toBe('exact');
    expect(headerMatcher('Social Security Numbers')(label('Social Security Number'))).toBe('exact');
    expect(headerMatcher('Social Security Numbers')(label('borrower_ssn'))).toBe('loose');
    expect(headerMatcher('Social Security Numbers')(label('ssn_last4'))).toBe(false);
    expect(headerMatcher('Last Four of Social Security Numbers')(label('Last 4'))).toBe('exact');
    expect(headerMatcher('ZIP Codes')(label('Zip Code'))).toBe('exact');
    expect(headerMatcher('Telephone Numbers')(label('Home Phone'))).toBe('loose');
    expect(headerMatcher('Bank Routing Numbers')(label('ABA'))).toBe('exact');
    expect(headerMatcher('Email Addresses')(label('E-mail'))).toBe('exact');
    expect(headerMatcher('Employer Names')(label('Company Name'))).toBe('exact');
    expect(headerMatcher('Affiliates')(label('affiliate_id'))).toBe('exact');
    expect(headerMatcher('Affiliates')(label('state'))).toBe(false);
  });

  it('accepts the service type name itself as a header, for every type', () => {
    for (const type of LIST_TYPES)
      expect(headerMatcher(type)(type.toLowerCase().replace(/[^a-z0-9]/g, ''))).toBe('exact');
  });
});

describe("a spreadsheet's doing, in every list type", () => {
  it.each(LIST_TYPES)('%s: N/A, #N/A, NA, null and - are placeholders (empty rows are skipped)', (type) => {
    for (const cell of ['N/A', '#N/A', 'NA', 'null', '-', ' n/a ']) {
      expect(check(type, cell).reason, cell).toBe(
        'a placeholder for a missing value: leave the cell empty (empty rows are skipped) or remove the row',
      );
    }
  });

  it.each([
    ['Social Security Numbers', '1.23457E+08'],
    ['Social Security Numbers', '9.87654321E+08'],
    ['Telephone Numbers', '3.12555E+09'],
    ['ZIP Codes', '1.23E+5'],
    ['Bank Routing Numbers', '2.1E+07'],
    ['Last Four of Social Security Numbers', '1.2e3'],
  ] as const)('%s: %s is scientific notation, refused (it has lost digits)', (type, cell) => {
    expect(check(type, cell).reason).toBe(
      'Excel wrote this number in scientific notation, which has lost digits: format the column as Text and export again',
    );
  });

  it('keeps a name that only looks like a number as it is', () => {
    expect(check('Employer Names', '3M').reason).toBeNull();
    expect(check('Affiliates', 'NA Lending').reason).toBeNull();
  });
});
