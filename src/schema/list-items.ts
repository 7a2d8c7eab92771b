/**
 * The one validator of list items, shared by the sandbox and the CLI. It runs once per
 * row on files of millions of rows, so it is plain functions over char codes, not zod.
 * Values are expected already normalised (no delimiters): the service refuses
 * "123-45-6789" as badly formatted, and so do these.
 *
 * A reason says what is accepted where it is read: a request's items must be bare digits, while a
 * file given to leadctl may keep its delimiters (the normaliser takes them out), so the reasons
 * about a value's shape come in two wordings (`ItemSource`).
 */
import type { ListType } from './list-types.js';

/** Where the value was read: the items of a request (the service's rules), or a cell of a file. */
export type ItemSource = 'request' | 'file';

/** The reasons about a value's shape, by where it was read: each says what IS accepted there. */
export const SHAPE_REASONS = {
  ssn: {
    request: 'SSN must be exactly 9 digits with no dashes or spaces',
    file: 'SSN must have exactly 9 digits (dashes, spaces, dots or slashes between them are fine)',
  },
  ssn4: {
    request: 'last four of SSN must be exactly 4 digits with no dashes or spaces',
    file: 'last four of SSN must have exactly 4 digits (spaces or dashes between them are fine)',
  },
  zip: {
    request: 'ZIP code must be exactly 5 digits',
    file: 'ZIP code must have 5 digits, or 9 as ZIP+4 (12345-6789, which is cut to its 5-digit ZIP)',
  },
  phone: {
    request: 'phone number must be exactly 10 digits with no country code or delimiters',
    file: 'phone number must have 10 digits, area code first ((555) 123-4567, 555.123.4567 and a leading +1 or 1 are fine)',
  },
  routing: {
    request: 'routing number must be exactly 9 digits with no dashes or spaces',
    file: 'routing number must have exactly 9 digits (dashes or spaces between them are fine)',
  },
} as const;

const ZERO = 48;
const NINE = 57;

function isDigits(value: string, length: number): boolean {
  if (value.length !== length) return false;
  for (let i = 0; i < length; i++) {
    const c = value.charCodeAt(i);
    if (c < ZERO || c > NINE) return false;
  }
  return true;
}

function digitAt(value: string, index: number): number {
  return value.charCodeAt(index) - ZERO;
}

/** null when `value` is a possible SSN, else why not. */
export function ssnProblem(value: string, source: ItemSource = 'request'): string | null {
  if (!isDigits(value, 9)) return SHAPE_REASONS.ssn[source];
  const area = value.slice(0, 3);
  if (area === '000' || area === '666') return `SSN area number ${area} is never issued`;
  if (value.charCodeAt(0) === NINE) return `SSN area number ${area} is never issued (900-999 are not used)`;
  if (value.charCodeAt(3) === ZERO && value.charCodeAt(4) === ZERO) return 'SSN group number 00 is never issued';
  if (value.endsWith('0000')) return 'SSN serial number 0000 is never issued';
  return null;
}

export function ssn4Problem(value: string, source: ItemSource = 'request'): string | null {
  if (!isDigits(value, 4)) return SHAPE_REASONS.ssn4[source];
  if (value === '0000') return 'last four of SSN 0000 is never issued';
  return null;
}

export function zipProblem(value: string, source: ItemSource = 'request'): string | null {
  return isDigits(value, 5) ? null : SHAPE_REASONS.zip[source];
}

/** North American Numbering Plan: area code and exchange both start with 2-9. */
export function phoneProblem(value: string, source: ItemSource = 'request'): string | null {
  if (!isDigits(value, 10)) return SHAPE_REASONS.phone[source];
  if (digitAt(value, 0) < 2) return 'phone area code cannot start with 0 or 1';
  if (digitAt(value, 3) < 2) return 'phone exchange cannot start with 0 or 1';
  return null;
}

/** ABA routing transit number: 9 digits whose 3-7-1 weighted sum is a multiple of 10. */
export function routingNumberProblem(value: string, source: ItemSource = 'request'): string | null {
  if (!isDigits(value, 9)) return SHAPE_REASONS.routing[source];
  let sum = 0;
  for (let i = 0; i < 9; i += 3) {
    sum += 3 * digitAt(value, i) + 7 * digitAt(value, i + 1) + digitAt(value, i + 2);
  }
  return sum % 10 === 0 ? null : 'routing number checksum is invalid';
}

const EMAIL_MAX = 254;
const LOCAL_MAX = 64;
// RFC 5322 atext plus dots; dot placement is checked separately.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TOP_LEVEL_DOMAIN = /^[A-Za-z]{2,63}$/;
// The same rules in one pass, for the common case of a good address; the slower checks below name the problem.
const VALID_EMAIL =
  /^(?!\.)(?!.*\.\.)[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}(?<!\.)@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** A pragmatic address check: local@domain.tld, ASCII, no spaces, at most 254 characters. */
export function emailProblem(value: string): string | null {
  if (value.length <= EMAIL_MAX && VALID_EMAIL.test(value)) return null;
  if (value.length === 0) return 'email address must not be empty';
  if (value.length > EMAIL_MAX) return `email address is longer than ${EMAIL_MAX} characters`;
  if (/\s/.test(value)) return 'email address must not contain spaces';
  const at = value.lastIndexOf('@');
  if (at < 0) return 'email address must contain an @';
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (
    local.length === 0 ||
    local.length > LOCAL_MAX ||
    !LOCAL_PART.test(local) ||
    local.startsWith('.') ||
    local.endsWith('.') ||
    local.includes('..')
  ) {
    return 'email address has an invalid part before the @';
  }
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) {
    return 'email address has an invalid domain';
  }
  if (!TOP_LEVEL_DOMAIN.test(labels[labels.length - 1]!)) return 'email address has an invalid top-level domain';
  return 'email address is not valid';
}

export const MAX_NAME_ITEM_LENGTH = 255;

/** Employer names and affiliates: any text that is not blank and fits 255 characters. */
export function nameItemProblem(value: string): string | null {
  if (value.trim() === '') return 'must not be empty';
  if (value.length > MAX_NAME_ITEM_LENGTH) return `must be at most ${MAX_NAME_ITEM_LENGTH} characters`;
  return null;
}

export const isValidSsn = (value: string): boolean => ssnProblem(value) === null;
export const isValidSsn4 = (value: string): boolean => ssn4Problem(value) === null;
export const isValidZip = (value: string): boolean => zipProblem(value) === null;
export const isValidPhone = (value: string): boolean => phoneProblem(value) === null;
export const isValidRoutingNumber = (value: string): boolean => routingNumberProblem(value) === null;
export const isValidEmail = (value: string): boolean => emailProblem(value) === null;

/**
 * null when `value` is a valid item of a list of `type`, else the reason in words, worded for
 * where it was read (a file's value is checked once normalised, so the same rules apply).
 */
export function validateListItem(type: ListType, value: string, source: ItemSource = 'request'): string | null {
  switch (type) {
    case 'Social Security Numbers':
      return ssnProblem(value, source);
    case 'Last Four of Social Security Numbers':
      return ssn4Problem(value, source);
    case 'ZIP Codes':
      return zipProblem(value, source);
    case 'Telephone Numbers':
      return phoneProblem(value, source);
    case 'Bank Routing Numbers':
      return routingNumberProblem(value, source);
    case 'Email Addresses':
      return emailProblem(value);
    case 'Employer Names':
    case 'Affiliates':
      return nameItemProblem(value);
  }
}

/** How a bad row is reported in a 422 `errors.list` and by the CLI: row numbers are 1-based. */
export function listRowMessage(row: number, reason: string): string {
  return `Row ${row}: ${reason}`;
}
