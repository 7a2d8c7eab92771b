import { validateListItem } from '../../schema/list-items.js';
import type { ListType } from '../../schema/list-types.js';
import {
  isPlaceholder,
  leadingZerosReason,
  placeholderReason,
  spreadsheetProblem,
  type CellExpectation,
} from '../../schema/spreadsheet.js';

/**
 * Per-type normalisers: they fix what is only formatting (delimiters, spaces, case, a country
 * code, ZIP+4) and nothing else — a value that is wrong stays wrong for the validator to report.
 * They run once per row of files of millions of rows: already-clean values return untouched.
 */

/** What a list's values are, for normalising, deduplicating and serialising. */
export type ListValueKind = 'ssn' | 'ssn4' | 'zip' | 'phone' | 'routing' | 'email' | 'name';

export const LIST_VALUE_KINDS: Readonly<Record<ListType, ListValueKind>> = {
  'Social Security Numbers': 'ssn',
  'Last Four of Social Security Numbers': 'ssn4',
  'ZIP Codes': 'zip',
  'Telephone Numbers': 'phone',
  'Bank Routing Numbers': 'routing',
  'Email Addresses': 'email',
  'Employer Names': 'name',
  Affiliates: 'name',
};

/** Digits expected by the numeric kinds (used for zero padding and leading-zero hints). */
export const DIGITS_OF: Readonly<Partial<Record<ListValueKind, number>>> = {
  ssn: 9,
  ssn4: 4,
  zip: 5,
  phone: 10,
  routing: 9,
};

// Spaces of every kind (incl. no-break and zero-width), hyphens and dashes, dots, slashes, underscores.
const NUMBER_DELIMITERS = /[\s\u00a0\u200b-\u200d\ufeff\u2010-\u2015\-./_]+/g;
const PHONE_DELIMITERS = /[\s\u00a0\u200b-\u200d\ufeff\u2010-\u2015\-./_()]+/g;
const ZIP_PLUS_FOUR = /^(\d{5})[-\u2010-\u2015]?\d{4}$/;
const SPACES = /[\s\u200b-\u200d]+/g;
const INNER_WHITESPACE = /[\s\u00a0\u200b-\u200d\ufeff]+/g;

function isDigits(value: string, length: number): boolean {
  if (value.length !== length) return false;
  for (let i = 0; i < length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function stripDelimiters(value: string, length: number): string {
  return isDigits(value, length) ? value : value.replace(NUMBER_DELIMITERS, '');
}

/** `123-45-6789`, `123 45 6789`, `123.45.6789` → `123456789`. */
export function normaliseSsn(value: string): string {
  // The usual dashed form, built in one allocation: this runs once per row of big files.
  if (value.length === 11 && value.charCodeAt(3) === 45 && value.charCodeAt(6) === 45) {
    const c = (i: number) => value.charCodeAt(i);
    const digits = String.fromCharCode(c(0), c(1), c(2), c(4), c(5), c(7), c(8), c(9), c(10));
    if (isDigits(digits, 9)) return digits;
  }
  return stripDelimiters(value, 9);
}

export function normaliseSsn4(value: string): string {
  return stripDelimiters(value, 4);
}

/** Spaces go; ZIP+4 (`12345-6789`, `12345 6789`, `123456789`) becomes its 5-digit ZIP. */
export function normaliseZip(value: string): string {
  if (isDigits(value, 5)) return value;
  const compact = value.replace(SPACES, '');
  const plusFour = ZIP_PLUS_FOUR.exec(compact);
  return plusFour ? plusFour[1]! : compact;
}

/** `(555) 123-4567`, `+1 555.123.4567`, `1-555-123-4567` → `5551234567`. */
export function normalisePhone(value: string): string {
  if (isDigits(value, 10)) return value;
  let digits = value.replace(PHONE_DELIMITERS, '');
  if (digits.startsWith('+1')) digits = digits.slice(2);
  else if (digits.length === 11 && digits.charCodeAt(0) === 49 && isDigits(digits, 11)) digits = digits.slice(1);
  return digits;
}

export function normaliseRouting(value: string): string {
  return stripDelimiters(value, 9);
}

export function normaliseEmail(value: string): string {
  const trimmed = value.trim();
  return hasUpperCase(trimmed) ? trimmed.toLowerCase() : trimmed;
}

function hasUpperCase(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return true;
  }
  return false;
}

/** Employer names and affiliates: trimmed, inner runs of whitespace become one space. */
export function normaliseName(value: string): string {
  return value.replace(INNER_WHITESPACE, ' ').trim();
}

const NORMALISERS: Readonly<Record<ListValueKind, (value: string) => string>> = {
  ssn: normaliseSsn,
  ssn4: normaliseSsn4,
  zip: normaliseZip,
  phone: normalisePhone,
  routing: normaliseRouting,
  email: normaliseEmail,
  name: normaliseName,
};

export function normaliserFor(type: ListType): (value: string) => string {
  return NORMALISERS[LIST_VALUE_KINDS[type]];
}

export function normaliseListValue(type: ListType, value: string): string {
  return normaliserFor(type)(value);
}

/** What a file's cell may look like, for the spreadsheet diagnoses (phones never start with 0). */
const CELL_EXPECTATIONS: Readonly<Record<ListType, CellExpectation>> = Object.fromEntries(
  (Object.keys(LIST_VALUE_KINDS) as ListType[]).map((type) => {
    const kind = LIST_VALUE_KINDS[type];
    const digits = kind === 'phone' ? undefined : DIGITS_OF[kind];
    const expectation: CellExpectation = {
      empty: 'skipped',
      numeric: DIGITS_OF[kind] !== undefined,
      ...(digits === undefined
        ? {}
        : { digits, validPadded: (padded: string) => validateListItem(type, padded) === null }),
    };
    return [type, expectation];
  }),
) as Record<ListType, CellExpectation>;

/**
 * null when a file's cell holds a valid item of a list of `type` (given its normalised value),
 * else the reason: what a spreadsheet did to it, when that is what happened, else what the file
 * may hold. A placeholder (N/A) is refused even in a list of names, where it would be taken as one.
 */
export function listCellProblem(type: ListType, cell: string, normalised: string): string | null {
  const reason = validateListItem(type, normalised, 'file');
  if (reason === null)
    return LIST_VALUE_KINDS[type] === 'name' && isPlaceholder(cell) ? placeholderReason('skipped') : null;
  return (
    spreadsheetProblem(cell, CELL_EXPECTATIONS[type]) ??
    (LIST_VALUE_KINDS[type] === 'zip' ? zipPlusFourZeros(cell.trim()) : null) ??
    reason
  );
}

/**
 * A ZIP+4 whose leading zeros a spreadsheet dropped: `2134-1234` (from 02134-1234) or `21341234`
 * (from 021341234 stored as a number); null for anything else.
 */
function zipPlusFourZeros(cell: string): string | null {
  const dashed = /^(\d{3,4})[-\u2010-\u2015](\d{4})$/.exec(cell);
  if (dashed) return leadingZerosReason(dashed[1]!.length, 5);
  return /^\d{7,8}$/.test(cell) ? leadingZerosReason(cell.length, 9) : null;
}

/**
 * Header labels that name a column of this type, compared lower-cased with only letters and
 * digits kept: `exact` labels win over `loose` (substring) ones.
 */
export function headerMatcher(type: ListType): (label: string) => 'exact' | 'loose' | false {
  const kind = LIST_VALUE_KINDS[type];
  const { exact, loose } = HEADER_LABELS[kind === 'name' ? (type === 'Affiliates' ? 'affiliate' : 'employer') : kind];
  const exactSet = new Set([...exact, type.toLowerCase().replace(/[^a-z0-9]/g, '')]);
  return (label) => (exactSet.has(label) ? 'exact' : loose.test(label) ? 'loose' : false);
}

const HEADER_LABELS: Record<
  Exclude<ListValueKind, 'name'> | 'employer' | 'affiliate',
  { exact: string[]; loose: RegExp }
> = {
  ssn: {
    exact: [
      'ssn',
      'ssns',
      'socialsecuritynumber',
      'socialsecurity',
      'socialsecurityno',
      'ssnumber',
      'ssnno',
      'ssnnumber',
    ],
    loose: /^(?!.*(last|four|4)).*(ssn|socialsecurity)/,
  },
  ssn4: {
    exact: [
      'ssn4',
      'last4',
      'lastfour',
      'ssnlast4',
      'ssnlastfour',
      'last4ssn',
      'lastfourssn',
      'lastfourofssn',
      'last4ofssn',
    ],
    loose: /(last|l)(4|four)|ssn4/,
  },
  zip: { exact: ['zip', 'zips', 'zipcode', 'zipcodes', 'postalcode', 'postcode', 'zip5'], loose: /zip|postal/ },
  phone: {
    exact: ['phone', 'phones', 'phonenumber', 'phonenumbers', 'telephone', 'telephonenumber', 'tel', 'mobile', 'cell'],
    loose: /phone|mobile|cell|^tel/,
  },
  routing: {
    exact: [
      'routing',
      'routingnumber',
      'routingnumbers',
      'bankroutingnumber',
      'aba',
      'abanumber',
      'rtn',
      'routingtransitnumber',
    ],
    loose: /routing|^aba|rtn/,
  },
  email: { exact: ['email', 'emails', 'emailaddress', 'emailaddresses', 'mail'], loose: /e?mail/ },
  employer: { exact: ['employer', 'employers', 'employername', 'company', 'companyname'], loose: /employer|company/ },
  affiliate: {
    exact: ['affiliate', 'affiliates', 'affiliateid', 'affiliatename', 'affiliatecode'],
    loose: /affiliate/,
  },
};
