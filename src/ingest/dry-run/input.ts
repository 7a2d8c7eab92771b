import { InputError, quoteValue, UsageError } from '../../errors.js';
import { maskLongNumbers } from '../../io/mask.js';
import { DryRunRequestSchema, formatZodIssues, type DryRunRequest, type LookbackWindow } from '../../schema/index.js';
import type { IO } from '../../io/io.js';
import { ssnProblem } from '../../schema/list-items.js';
import { spreadsheetProblem, type CellExpectation } from '../../schema/spreadsheet.js';
import { normaliseSsn } from '../lists/normalise.js';

const SSN_CELL: CellExpectation = {
  digits: 9,
  validPadded: (padded) => ssnProblem(padded) === null,
  empty: 'optional',
};
import { openInput } from '../sources.js';
import { checkHeaderNames, chooseDelimiter, EMPTY_INPUT_HINT, tableBatches, type TableRow } from '../table/reader.js';

export interface Lookbacks {
  previously_purchased_lookback_window?: LookbackWindow;
  underwriting_cost_lookback_window?: LookbackWindow;
}

/** `--purchased-lookback 30` or `off`: days, or false to switch the check off. */
export function parseLookback(value: string | undefined, flag: string): LookbackWindow | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'off' || v === 'false' || v === 'none') return false;
  if (/^\d+$/.test(v) && Number.isSafeInteger(Number(v))) return Number(v);
  throw new UsageError(`${flag} must be a whole number of days or "off", got "${value}"`);
}

export function lookbacksFrom(options: { purchasedLookback?: string; underwritingLookback?: string }): Lookbacks {
  const out: Lookbacks = {};
  const purchased = parseLookback(options.purchasedLookback, '--purchased-lookback');
  const underwriting = parseLookback(options.underwritingLookback, '--underwriting-lookback');
  if (purchased !== undefined) out.previously_purchased_lookback_window = purchased;
  if (underwriting !== undefined) out.underwriting_cost_lookback_window = underwriting;
  return out;
}

export type DryRunCheck = { ok: true; request: DryRunRequest } | { ok: false; problems: string[] };

/**
 * Builds the request from what a person or a CSV row gave, with the shared schema's rules and
 * messages that name the field. Empty values count as absent.
 */
export function buildDryRunRequest(
  ssn: string | undefined,
  email: string | undefined,
  lookbacks: Lookbacks,
): DryRunCheck {
  const problems: string[] = [];
  const body: Record<string, unknown> = { ...lookbacks };
  let ssnInvalid = false;
  if (ssn !== undefined && ssn.trim() !== '') {
    const digits = normaliseSsn(ssn);
    if (/^\d{9}$/.test(digits)) body.social_security_number = digits;
    else {
      ssnInvalid = true;
      problems.push(
        `ssn: ${spreadsheetProblem(ssn, SSN_CELL) ?? 'must be 9 digits (spaces, dashes and dots are ignored)'}`,
      );
    }
  }
  let emailInvalid = false;
  if (email !== undefined && email.trim() !== '') {
    const damage = spreadsheetProblem(email, { empty: 'optional' });
    if (damage === null) body.email = email.trim();
    else {
      emailInvalid = true;
      problems.push(`email: ${damage}`);
    }
  }
  if (emailInvalid && !ssnInvalid && body.social_security_number === undefined) return { ok: false, problems };
  if (!ssnInvalid && body.social_security_number === undefined && body.email === undefined) {
    if (ssn === undefined && email === undefined) return { ok: false, problems: ['give an SSN or an email (or both)'] };
    return { ok: false, problems: ['no ssn or email: at least one is needed'] };
  }
  // A bad SSN is already reported in its own words; a stand-in keeps the schema from also calling it missing.
  const parsed = DryRunRequestSchema.safeParse(ssnInvalid ? { ...body, social_security_number: '000000000' } : body);
  if (!parsed.success) {
    for (const issue of formatZodIssues(parsed.error)) {
      problems.push(`${issue.path === 'social_security_number' ? 'ssn' : issue.path}: ${issue.message}`);
    }
  }
  return problems.length || !parsed.success ? { ok: false, problems } : { ok: true, request: parsed.data };
}

// ---------------------------------------------------------------- bulk file

export interface DryRunFileRow {
  /** Row as a spreadsheet numbers it (the header is row 1). */
  row: number;
  /** Every cell of the row, in the header's order. */
  cells: string[];
  check: DryRunCheck;
}

export interface DryRunFile {
  name: string;
  header: string[];
  ssnColumn?: string;
  emailColumn?: string;
  rows: AsyncGenerator<DryRunFileRow>;
}

const SSN_HEADERS = ['ssn', 'social_security_number', 'social_security', 'socialsecuritynumber', 'ssn_number'];
const EMAIL_HEADERS = ['email', 'email_address', 'e_mail', 'emailaddress'];

function headerKey(h: string): string {
  return h
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** The header's names for a message: each cut to a sensible length, the first 30 at most. */
function columnList(header: readonly string[]): string {
  const shown = header.slice(0, 30).map((h) => quoteValue(maskLongNumbers(h), { quotes: false }));
  return shown.join(', ') + (header.length > shown.length ? `, … (${header.length} columns)` : '');
}

function findColumn(
  header: string[],
  wanted: string | undefined,
  candidates: string[],
  flag: string,
  file: string,
): number | undefined {
  if (wanted !== undefined) {
    const i = header.findIndex((h) => headerKey(h) === headerKey(wanted));
    if (i < 0)
      throw new InputError(`has no column "${wanted}" (${flag}); its columns are: ${columnList(header)}`, {
        file,
        row: 1,
      });
    return i;
  }
  const i = header.findIndex((h) => candidates.includes(headerKey(h)));
  return i < 0 ? undefined : i;
}

/**
 * Opens a CSV with a header row and at least an SSN or an email column (found by name, or named
 * with --ssn-column / --email-column), and yields each row with its request or its problems.
 */
export async function openDryRunFile(
  path: string,
  io: Pick<IO, 'stdin' | 'cwd' | 'input'>,
  options: { ssnColumn?: string; emailColumn?: string; lookbacks: Lookbacks },
): Promise<DryRunFile> {
  const chosen = await chooseDelimiter(await openInput(path, io), io.input?.delimiter);
  const input = chosen.input;
  const records = tableRows(tableBatches(input, { delimiter: chosen.delimiter }));
  const first = await records.next();
  if (first.done)
    throw new InputError('is empty: expected a header row with an ssn and/or email column', { file: input.name });
  const header = first.value.cells.map((h) => h.trim());
  checkHeaderNames(input.name, header, headerKey);
  const ssnIndex = findColumn(header, options.ssnColumn, SSN_HEADERS, '--ssn-column', input.name);
  const emailIndex = findColumn(header, options.emailColumn, EMAIL_HEADERS, '--email-column', input.name);
  if (ssnIndex === undefined && emailIndex === undefined) {
    throw new InputError(
      `has no ssn or email column; its columns are: ${columnList(header)}`,
      { file: input.name, row: 1 },
      {
        hint: 'name the columns with --ssn-column NAME and/or --email-column NAME',
      },
    );
  }
  async function* rows(): AsyncGenerator<DryRunFileRow> {
    let count = 0;
    for await (const { cells: record, row } of records) {
      count++;
      if (record.length !== header.length) {
        yield {
          row,
          cells: record,
          check: {
            ok: false,
            problems: [`has ${record.length} field${record.length === 1 ? '' : 's'}, the header has ${header.length}`],
          },
        };
        continue;
      }
      const ssn = ssnIndex === undefined ? undefined : record[ssnIndex];
      const email = emailIndex === undefined ? undefined : record[emailIndex];
      yield { row, cells: record, check: buildDryRunRequest(ssn ?? '', email ?? '', options.lookbacks) };
    }
    if (count === 0)
      throw new InputError(
        'has a header but no rows: nothing to check',
        { file: input.name },
        { hint: EMPTY_INPUT_HINT },
      );
  }
  return {
    name: input.name,
    header,
    ssnColumn: ssnIndex === undefined ? undefined : header[ssnIndex],
    emailColumn: emailIndex === undefined ? undefined : header[emailIndex],
    rows: rows(),
  };
}

/** The rows of the table batches one by one. */
async function* tableRows(batches: AsyncGenerator<TableRow[]>): AsyncGenerator<TableRow> {
  for await (const batch of batches) yield* batch;
}
