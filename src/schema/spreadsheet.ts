/**
 * What a spreadsheet does to a column of numbers or of gaps before it reaches a CSV file, put in
 * words that say what happened and what to do. The one home of these diagnoses: lists, pushes and
 * dry runs ask here when a cell was refused (or, for free text, before taking it).
 */

/** What the field expects, for the diagnosis to say what is true of it. */
export interface CellExpectation {
  /** Digits of a fixed-width number whose leading zeros count (an SSN: 9, a ZIP code: 5). */
  digits?: number;
  /** Whether the value checks out once its leading zeros are back (`digits` given). */
  validPadded?: (padded: string) => boolean;
  /** The field holds a number, so a bare `1.5e5` is scientific notation too (ids need the sign). */
  numeric?: boolean;
  /**
   * What an empty cell means: `required` (the record needs a value), `optional` (an empty cell
   * sends no value; the default), `skipped` (an empty row is skipped, as in a list).
   */
  empty?: 'required' | 'optional' | 'skipped';
  /** The field's name, for the words about a required value. */
  field?: string;
}

// What people and spreadsheets type for "no value"; compared trimmed and lower-cased.
const PLACEHOLDERS: ReadonlySet<string> = new Set(['n/a', '#n/a', 'na', 'null', '-']);
// Excel's formula errors (#N/A is a placeholder above, as it means "not available").
const FORMULA_ERRORS: ReadonlySet<string> = new Set([
  '#value!',
  '#ref!',
  '#div/0!',
  '#name?',
  '#num!',
  '#null!',
  '#spill!',
  '#calc!',
  '#getting_data',
]);
// Excel's "General" format writes 9.87654321E+08; other tools 1.23E+5 or 1.23e5.
const SIGNED_SCIENTIFIC = /^[+-]?\d(?:\.\d+)?[eE][+-]\d{1,3}$/;
const SCIENTIFIC = /^[+-]?\d+(?:\.\d+)?[eE][+-]?\d{1,3}$/;
const DIGITS = /^\d+$/;
/** A number that lost more leading zeros than this was most likely never one of these. */
const MAX_LOST_ZEROS = 3;

export const SCIENTIFIC_NOTATION_REASON =
  'Excel wrote this number in scientific notation, which has lost digits: format the column as Text and export again';

/** The words for a placeholder, true of the field: whether an empty cell would do. */
export function placeholderReason(empty: CellExpectation['empty'] = 'optional', field?: string): string {
  switch (empty) {
    case 'required':
      return `a placeholder for a missing value, but ${field ?? 'this field'} is required: fill in the value or remove the row`;
    case 'skipped':
      return 'a placeholder for a missing value: leave the cell empty (empty rows are skipped) or remove the row';
    case 'optional':
      return 'a placeholder for a missing value: leave the cell empty instead (an empty cell sends no value)';
  }
}

/** True for N/A, #N/A, NA, null and - (any case, spaces around). */
export function isPlaceholder(text: string): boolean {
  // Cheap first: these run on cells of free text, once per row.
  if (text.length > 8) return false;
  return PLACEHOLDERS.has(text.trim().toLowerCase());
}

export function isScientificNotation(text: string, numeric = false): boolean {
  const s = text.trim();
  return numeric ? SCIENTIFIC.test(s) : SIGNED_SCIENTIFIC.test(s);
}

/**
 * null when the cell shows no sign of a spreadsheet's doing, else what happened and what to do.
 * Meant for a value already refused (or free text about to be taken): it says nothing of values
 * that are merely wrong.
 */
export function spreadsheetProblem(text: string, expect: CellExpectation = {}): string | null {
  const s = text.trim();
  // Nothing a spreadsheet writes in these ways is longer: long text is left alone cheaply.
  if (s === '' || s.length > 24) return null;
  if (isPlaceholder(s)) return placeholderReason(expect.empty, expect.field);
  if (s.charCodeAt(0) === 35 /* # */ && FORMULA_ERRORS.has(s.toLowerCase())) {
    return `the spreadsheet's formula failed (${s.toUpperCase()}): fix the formula, or copy and paste the values, and export again`;
  }
  if (isScientificNotation(s, expect.numeric === true || expect.digits !== undefined))
    return SCIENTIFIC_NOTATION_REASON;
  const want = expect.digits;
  if (want !== undefined && DIGITS.test(s) && s.length < want && want - s.length <= MAX_LOST_ZEROS) {
    const padded = s.padStart(want, '0');
    if (expect.validPadded === undefined || expect.validPadded(padded)) return leadingZerosReason(s.length, want);
  }
  return null;
}

/**
 * "8 digits, not 9: a spreadsheet dropped the leading zero: …". The format is spelled out in words:
 * a run of nine zeros in a report reads as an SSN to the scanners that look for them.
 */
export function leadingZerosReason(found: number, want: number): string {
  const zeros = want - found === 1 ? 'zero' : 'zeros';
  return (
    `${found} digits, not ${want}: a spreadsheet dropped the leading ${zeros}: ` +
    `format the column as Text (or give it a custom number format of ${want} zeros) and export again`
  );
}
