import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../../src/errors.js';
import {
  compileLevel,
  csvDelimiter,
  delimiterHint,
  IDENTITY_MAPPING,
  parseMapping,
  withDelimiter,
  type FieldError,
} from '../../../../src/ingest/mapping/mapping.js';
import { LEVEL_FIELDS } from '../../../../src/ingest/mapping/fields.js';
import { BatchPaymentSchema } from '../../../../src/schema/loan-performance.js';
import { paymentLooksValid, paymentRulesHold } from '../../../../src/schema/quick-check.js';

const fixtureMapping = () =>
  parseMapping(
    JSON.parse(readFileSync(new URL('../../../../fixtures/lms/mapping.json', import.meta.url), 'utf8')),
    'mapping.json',
  );

function read(
  mapping: ReturnType<typeof parseMapping>,
  level: 'customer' | 'loan' | 'payment',
  header: string[],
  cells: string[],
) {
  const { reader, missingColumns } = compileLevel(mapping, level, header, { strictColumns: true });
  const out: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  reader.read(cells, out, errors);
  return { out, errors, missingColumns };
}

/** The payment columns of the fixture export, in its order. */
const PAYMENT_HEADER = [
  'Trans ID',
  'Trans Amt',
  'Trans Type',
  'Method',
  'Trans Status',
  'Principal Paid',
  'Interest Paid',
  'Fees Paid',
  'Return Code',
  'Returned',
  'Fail Code',
  'Failed',
  'Posted',
];

describe('the fixture mapping', () => {
  it('turns an LMS loan row into API fields', () => {
    const header = [
      'Cust No',
      'Loan No',
      'Lead ID',
      'Lead Loan',
      'App Type',
      'Product',
      'Loan Status',
      'Principal',
      'Funded Amt',
      'First Due',
      'Applied',
      'E-Signed',
      'Withdrawn',
      'Originated',
    ];
    const cells = [
      '100102',
      'LN-1002',
      '500102',
      'Y',
      'r',
      'INST',
      'pif',
      '$1,250.00',
      '$1,200.00',
      '11/1/2026',
      '10/15/2026 6:05 PM',
      '',
      '',
      '10/16/2026 8:00 AM',
    ];
    const { out, errors, missingColumns } = read(fixtureMapping(), 'loan', header, cells);
    expect(missingColumns).toEqual([]);
    expect(errors).toEqual([]);
    expect(out).toEqual({
      loan_id: 'LN-1002',
      lead_id: 500102,
      management_system_id: 7,
      is_lead_loan: true,
      application_type: 'Returning',
      loan_type: 'Installment',
      loan_status: 'Paid In Full',
      loan_amount: 125000,
      funded_amount: 120000,
      first_payment_date: '2026-11-01',
      applied_at: '2026-10-15T23:05:00Z',
      originated_at: '2026-10-16T13:00:00Z',
    });
  });

  it('reports each bad cell with its field and column, and keeps the good ones', () => {
    const header = PAYMENT_HEADER;
    const cells = ['T-1', '$1.005', 'PMT', 'MG', 'ZZZ', '$1.00', '$0.00', '$0.00', '', '', '', '', '3/8/2026 3:01 AM'];
    const { out, errors } = read(fixtureMapping(), 'payment', header, cells);
    expect(errors.map((e) => [e.field, e.column])).toEqual([
      ['payment_amount', 'Trans Amt'],
      ['payment_status', 'Trans Status'],
    ]);
    expect(out).toMatchObject({
      payment_id: 'T-1',
      payment_type: 'Payment',
      payment_mode: 'Money Gram',
      principal: 100,
      payment_at: '2026-03-08T08:01:00Z',
    });
    expect(out).not.toHaveProperty('payment_amount');
  });

  it('lists mapped columns the header lacks', () => {
    const { missingColumns } = read(fixtureMapping(), 'customer', ['Customer'], ['1']);
    expect(missingColumns).toEqual([{ field: 'customer_id', column: 'Cust No' }]);
  });
});

describe('parseMapping', () => {
  const refused = (json: unknown) => {
    try {
      parseMapping(json, 'm.json');
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };
  it('names unknown fields, and the section they belong in', () => {
    expect(refused({ loan: { payment_amount: 'Amt' } })).toMatch(
      /loan\.payment_amount: not a field of the loan \(it belongs in "payment"\)/,
    );
    expect(refused({ loan: { LoanAmount: 'Amt' } })).toMatch(/did you mean "loan_amount"/);
  });
  it('checks zones, formats, constants and value-map targets before any row is read', () => {
    expect(refused({ source_time_zone: 'Central' })).toMatch(/not a time zone/);
    expect(refused({ datetime_format: 'h:mm a' })).toMatch(/needs a year/);
    expect(refused({ loan: { management_system_id: { const: 'seven' } } })).toMatch(/management_system_id\.const/);
    expect(refused({ loan: { loan_status: { column: 'S', values: { X: 'Paid Off' } } } })).toMatch(/values\["X"\]/);
    expect(refused({ loan: { loan_status: { column: 'S', money: 'dollars' } } })).toMatch(/only for money fields/);
    expect(refused({ loan: { loan_id: { column: 'L', colour: 'red' } } })).toMatch(/loan\.loan_id/);
  });
});

describe('value maps, constants and defaults', () => {
  const mapping = parseMapping({
    money: 'cents',
    loan: {
      loan_id: 'id',
      loan_status: { column: 'status', values: { pif: 'Paid In Full', ' Late ': 'Past Due' } },
      is_lead_loan: { column: 'lead', values: { L: true }, default: false },
      loan_amount: { column: 'amount', money: 'dollars' },
      funded_amount: 'funded',
      management_system_id: { const: 3 },
    },
  });
  const header = ['id', 'status', 'lead', 'amount', 'funded'];
  it('maps codes case-insensitively and passes exact API values through', () => {
    expect(read(mapping, 'loan', header, ['1', 'PIF', 'l', '$5', '500']).out).toMatchObject({
      loan_status: 'Paid In Full',
      is_lead_loan: true,
      loan_amount: 500,
      funded_amount: 500,
      management_system_id: 3,
    });
    expect(read(mapping, 'loan', header, ['1', 'late', 'N', '5', '1']).out).toMatchObject({
      loan_status: 'Past Due',
      is_lead_loan: false,
    });
    expect(read(mapping, 'loan', header, ['1', 'Current', '', '5', '1']).out).toMatchObject({
      loan_status: 'Current',
      is_lead_loan: false,
    });
  });

  it('gives each row its own answer when one reader reads many codes, known or not', () => {
    // More codes than the reader remembers as written, each seen in several spellings.
    const codes = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`C${i}`, i % 2 ? 'Current' : 'Past Due']));
    const many = parseMapping({ loan: { loan_id: 'id', loan_status: { column: 'status', values: codes } } });
    const { reader } = compileLevel(many, 'loan', ['id', 'status'], { strictColumns: true });
    const seen: unknown[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 100; i++) {
        for (const cell of [`C${i}`, `c${i}`, ` C${i} `, `X${i}`]) {
          const out: Record<string, unknown> = {};
          const errors: FieldError[] = [];
          reader.read(['1', cell], out, errors);
          seen.push([cell, out.loan_status, errors.map((e) => e.field)]);
        }
      }
    }
    const expected = Array.from({ length: 100 }, (_, i) => {
      const status = i % 2 ? 'Current' : 'Past Due';
      return [
        [`C${i}`, status, []],
        [`c${i}`, status, []],
        [` C${i} `, status, []],
        [`X${i}`, undefined, ['loan_status']],
      ];
    }).flat();
    expect(seen).toEqual([...expected, ...expected, ...expected]);
  });
});

describe('no mapping', () => {
  it('uses columns named as the API fields, in cents and ISO datetimes', () => {
    const header = ['customer_id', 'Loan_ID', 'loan_amount', 'applied_at', 'is_lead_loan', 'notes'];
    const { out, errors } = read(IDENTITY_MAPPING, 'loan', header, [
      'C1',
      'L1',
      '125000',
      '2026-11-20T18:05:00Z',
      'true',
      'x',
    ]);
    expect(errors).toEqual([]);
    expect(out).toEqual({ loan_id: 'L1', loan_amount: 125000, applied_at: '2026-11-20T18:05:00Z', is_lead_loan: true });
  });
});

describe('what a spreadsheet did to a cell', () => {
  const header = ['loan_id', 'lead_id', 'loan_amount', 'applied_at', 'loan_status', 'funded_amount'];
  const row = (over: Partial<Record<(typeof header)[number], string>>) =>
    header.map(
      (h) =>
        over[h] ?? { loan_id: 'L1', lead_id: '77', loan_amount: '125000', applied_at: '2026-11-20T18:05:00Z' }[h] ?? '',
    );

  it('names scientific notation in a number field and in an id, instead of "not a whole number"', () => {
    const { out, errors } = read(
      IDENTITY_MAPPING,
      'loan',
      header,
      row({ lead_id: '9.87654321E+08', loan_id: '1.23457E+11' }),
    );
    expect(errors).toEqual([
      {
        field: 'loan_id',
        column: 'loan_id',
        reason: expect.stringMatching(
          /^Excel wrote this number in scientific notation.*format the column as Text and export again$/,
        ),
      },
      {
        field: 'lead_id',
        column: 'lead_id',
        reason: expect.stringMatching(/^Excel wrote this number in scientific notation/),
      },
    ]);
    expect(out).not.toHaveProperty('lead_id');
  });

  it('words a placeholder for a required field and for an optional one', () => {
    const { errors } = read(
      IDENTITY_MAPPING,
      'loan',
      header,
      row({ loan_amount: 'N/A', loan_status: '#N/A', funded_amount: '-' }),
    );
    expect(errors.map((e) => [e.field, e.reason])).toEqual([
      [
        'loan_amount',
        'a placeholder for a missing value, but loan_amount is required: fill in the value or remove the row',
      ],
      ['loan_status', 'a placeholder for a missing value: leave the cell empty instead (an empty cell sends no value)'],
      [
        'funded_amount',
        'a placeholder for a missing value: leave the cell empty instead (an empty cell sends no value)',
      ],
    ]);
  });

  it('catches a placeholder id before it is sent as text, but keeps ids that merely look like numbers', () => {
    expect(read(IDENTITY_MAPPING, 'loan', header, row({ loan_id: 'NA' })).errors[0]?.reason).toMatch(
      /loan_id is required/,
    );
    expect(read(IDENTITY_MAPPING, 'loan', header, row({ loan_id: '2E15' })).out.loan_id).toBe('2E15');
  });

  it('says a routing number lost its leading zero', () => {
    const { errors } = read(IDENTITY_MAPPING, 'payment', ['payment_id', 'bank_routing_number'], ['P1', '21000021']);
    expect(errors[0]!.reason).toBe(
      '8 digits, not 9: a spreadsheet dropped the leading zero: format the column as Text (or give it a custom number format of 9 zeros) and export again',
    );
  });

  it('leaves a value map in charge: a mapped N/A is not a placeholder', () => {
    const mapping = parseMapping({
      loan: { loan_id: 'loan_id', loan_status: { column: 'loan_status', values: { 'N/A': 'Pending' } } },
    });
    expect(read(mapping, 'loan', ['loan_id', 'loan_status'], ['L1', 'N/A']).out.loan_status).toBe('Pending');
  });
});

describe('readers that vouch for their kinds', () => {
  const header = PAYMENT_HEADER;
  const payment = () =>
    compileLevel(fixtureMapping(), 'payment', header, { strictColumns: true, only: Object.keys(LEVEL_FIELDS.payment) })
      .reader;

  it('say so only when every field is one whose values always fit', () => {
    expect(payment().fitting).toBe(true);
    const loan = compileLevel(fixtureMapping(), 'loan', ['Loan No', 'Lead ID'], { strictColumns: false }).reader;
    expect(loan.fitting).toBe(false); // lead_id is an id: a constant may be 0
    const dated = parseMapping({ loan: { loan_id: 'id', first_payment_date: 'due' } });
    expect(compileLevel(dated, 'loan', ['id', 'due'], { strictColumns: true }).reader.fitting).toBe(false);
    // A payments file's keys are read as text but are not payment fields of a batch.
    const keys = compileLevel(fixtureMapping(), 'payment', ['Cust No', 'Loan No', 'Trans ID'], {
      strictColumns: false,
    });
    expect(keys.reader.fitting).toBe(false);
  });

  it('give values the full quick check and the schema judge as the rules between fields alone do', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
    // [usual values, odd ones]: mostly usual, so that many rows have no errors.
    const money = [
      ['$1.00', '($12.50)', '1,234.56', '0', '-$0.00'],
      ['$99999999999999.99', '1.005', ' $3 ', 'N/A', ''],
    ];
    const when = [
      ['1/2/2025 3:04 PM', '2/29/2024 11:59 PM', '3/10/2024 2:30 AM', '11/3/2024 1:30 AM', '12/31/9999 11:59 PM', ''],
      ['1/1/0999 1:00 AM', '1/1/2025', '13/1/2025 1:00 AM', '2/30/2025 1:00 AM'],
    ];
    const cells: Record<string, string[][]> = {
      'Trans ID': [
        ['T1', ' T2 ', 'T"3'],
        ['N/A', '1.5E+03', ''],
      ],
      'Trans Type': [['PMT', 'pmt', 'Payment', ''], ['ZZZ']],
      Method: [['ACHC', 'wire', 'Money Gram', ''], ['nope']],
      'Trans Status': [['PAID', 'RET', 'Returned', ''], ['?']],
      'Return Code': [['R01', ' ', ''], ['N/A']],
      'Fail Code': [['NSF', ''], ['-']],
    };
    const cell = (column: string) => {
      const [usual, odd] = cells[column] ?? (/Returned|Failed|Posted/.test(column) ? when : money);
      return pick(random() < 0.9 ? usual! : odd!);
    };
    const reader = payment();
    let fit = 0;
    for (let i = 0; i < 20_000; i++) {
      const row = header.map(cell);
      const out: Record<string, unknown> = {};
      const errors: FieldError[] = [];
      reader.read(row, out, errors);
      if (errors.length) continue;
      fit++;
      const zod = BatchPaymentSchema.safeParse(out).success;
      expect(paymentLooksValid(out), JSON.stringify(row)).toBe(zod);
      expect(paymentRulesHold(out), JSON.stringify(row)).toBe(zod);
    }
    expect(fit).toBeGreaterThan(2000);
  });
});

describe('the delimiter of an export', () => {
  const semicolon = parseMapping({ csv: { delimiter: ';' }, customer: { customer_id: 'Cust' } }, 'm.json');

  it('is the one --delimiter names, else the one of the mapping', () => {
    expect(csvDelimiter(withDelimiter(semicolon, undefined))).toBe(';');
    expect(csvDelimiter(withDelimiter(semicolon, '\t'))).toBe('\t');
    expect(withDelimiter(semicolon, '\t').spec.customer).toEqual({ customer_id: 'Cust' });
    const identity = withDelimiter(IDENTITY_MAPPING, ';');
    expect(csvDelimiter(identity)).toBe(';');
    expect(identity.identity).toBe(true);
    expect(csvDelimiter(IDENTITY_MAPPING)).toBe(',');
  });

  it('is named in a hint when the header came out as one column holding another', () => {
    expect(delimiterHint(['Cust No;Loan No;Lead ID'], IDENTITY_MAPPING)).toBe(
      'the header was read as one column holding 2 semicolons, split by comma: for a semicolon-separated file add --delimiter \';\', or "csv": { "delimiter": ";" } to the mapping',
    );
    expect(delimiterHint(['Cust No\tLoan No', ''], IDENTITY_MAPPING)).toContain(
      '1 tab, split by comma: for a tab-separated file add --delimiter tab',
    );
    expect(delimiterHint(['Cust No,Loan No'], semicolon)).toContain(
      'split by semicolon: for a comma-separated file add --delimiter comma',
    );
    // A header of several columns, or one column with nothing else in it: the mapping is what is wrong.
    expect(delimiterHint(['Cust No', 'Loan;No'], IDENTITY_MAPPING)).toBeUndefined();
    expect(delimiterHint(['Cust No'], IDENTITY_MAPPING)).toBeUndefined();
  });
});
