import { describe, expect, it } from 'vitest';
import { ssnProblem } from '../../../src/schema/list-items.js';
import {
  isPlaceholder,
  isScientificNotation,
  leadingZerosReason,
  placeholderReason,
  SCIENTIFIC_NOTATION_REASON,
  spreadsheetProblem,
} from '../../../src/schema/spreadsheet.js';

describe('spreadsheetProblem', () => {
  it.each(['9.87654321E+08', '1.23E+5', '1E+05', '-4.5E-03', ' 1.23457E+11 '])(
    '%j is scientific notation: format the column as Text',
    (cell) => {
      expect(spreadsheetProblem(cell)).toBe(SCIENTIFIC_NOTATION_REASON);
      expect(SCIENTIFIC_NOTATION_REASON).toMatch(
        /^Excel wrote this number in scientific notation.*format the column as Text and export again$/,
      );
    },
  );

  it('takes 1.5e5 as scientific notation only where a number is expected (2E15 may be an id)', () => {
    expect(spreadsheetProblem('1.5e5', { numeric: true })).toBe(SCIENTIFIC_NOTATION_REASON);
    expect(spreadsheetProblem('2E15')).toBeNull();
    expect(spreadsheetProblem('2E15', { digits: 9 })).toBe(SCIENTIFIC_NOTATION_REASON);
    expect(isScientificNotation('12E4')).toBe(false);
    expect(isScientificNotation('12E4', true)).toBe(true);
  });

  it.each(['N/A', '#N/A', 'NA', 'null', 'NULL', '-', ' n/a '])('%j is a placeholder', (cell) => {
    expect(isPlaceholder(cell)).toBe(true);
    expect(spreadsheetProblem(cell)).toBe(placeholderReason('optional'));
  });

  it('words a placeholder for what an empty cell would mean for the field', () => {
    expect(spreadsheetProblem('N/A', { empty: 'required', field: 'loan_id' })).toBe(
      'a placeholder for a missing value, but loan_id is required: fill in the value or remove the row',
    );
    expect(spreadsheetProblem('N/A', { empty: 'optional' })).toBe(
      'a placeholder for a missing value: leave the cell empty instead (an empty cell sends no value)',
    );
    expect(spreadsheetProblem('#N/A', { empty: 'skipped' })).toBe(
      'a placeholder for a missing value: leave the cell empty (empty rows are skipped) or remove the row',
    );
  });

  it('names a formula error', () => {
    expect(spreadsheetProblem('#REF!')).toBe(
      "the spreadsheet's formula failed (#REF!): fix the formula, or copy and paste the values, and export again",
    );
    expect(spreadsheetProblem('#div/0!')).toMatch(/\(#DIV\/0!\)/);
  });

  it('says a spreadsheet dropped leading zeros only when zeros put back make a valid value', () => {
    const ssn = { digits: 9, validPadded: (padded: string) => ssnProblem(padded) === null };
    expect(spreadsheetProblem('12345678', ssn)).toBe(leadingZerosReason(8, 9));
    expect(leadingZerosReason(8, 9)).toBe(
      '8 digits, not 9: a spreadsheet dropped the leading zero: format the column as Text (or give it a custom number format of 9 zeros) and export again',
    );
    expect(spreadsheetProblem('1234567', ssn)).toMatch(/^7 digits, not 9: a spreadsheet dropped the leading zeros/);
    // 000012345 is never issued (area 000): not a lost zero but a wrong number.
    expect(spreadsheetProblem('12345', ssn)).toBeNull();
    expect(spreadsheetProblem('2134', { digits: 5 })).toBe(leadingZerosReason(4, 5));
    expect(spreadsheetProblem('2', { digits: 5 })).toBeNull();
    expect(spreadsheetProblem('123456789', { digits: 9 })).toBeNull();
  });

  it('leaves values that are merely wrong, and long text, to the field rules', () => {
    expect(spreadsheetProblem('ABC-DE-FGHI', { digits: 9 })).toBeNull();
    expect(spreadsheetProblem('')).toBeNull();
    expect(spreadsheetProblem('None of the above, really')).toBeNull();
    expect(spreadsheetProblem('Nashville')).toBeNull();
  });
});
