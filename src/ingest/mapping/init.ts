import { quoteValue } from '../../errors.js';
import { maskLongNumbers } from '../../io/mask.js';
import { checkFormat, compileDateParser, compileDateTimeParser, ISO_FORMAT, resolveZone } from './datetime.js';
import { LEVEL_FIELDS, LEVELS, PAYMENT_JOIN_KEYS, type FieldKind, type Level } from './fields.js';
import { enumMatcher, looseKey } from './values.js';
import type { FieldSpec, MappingFile } from './mapping.js';

/**
 * A starter mapping from an export's headers (and a sample of its rows): columns named as API
 * fields up to case, spaces and punctuation are mapped; money, date and code columns get the
 * money unit, format and value map their sample suggests; everything else is listed.
 */

/** What a file of several holds: customers and loans, or payments (as `--loans`/`--payments`). */
export type FileRole = 'loans' | 'payments';

export interface SampledFile {
  name: string;
  header: string[];
  /** Up to a few hundred rows. */
  rows: string[][];
  /** Given by the user; otherwise guessed when there are several files. */
  role?: FileRole;
  /** The field delimiter it was read with (a comma when absent). */
  delimiter?: string;
}

type Target = { level: Level; field: string; kind: FieldKind };

const ROLE_LEVELS: Record<FileRole, readonly Level[]> = { loans: ['customer', 'loan'], payments: ['payment'] };
const ROLE_WORDS: Record<FileRole, string> = { loans: 'the loans file', payments: 'the payments file' };

export interface StarterMapping {
  mapping: MappingFile;
  /** Columns no field matched. */
  unmatched: string[];
  /** Fields the batch requires that no column matched. */
  missingRequired: string[];
  /** Codes found in the sample that need a value-map entry, by field. */
  codesToFill: Record<string, string[]>;
  notes: string[];
}

const DATETIME_CANDIDATES = [
  ISO_FORMAT,
  'yyyy-MM-dd HH:mm:ss',
  'yyyy-MM-dd HH:mm',
  'M/d/yyyy h:mm a',
  'M/d/yyyy h:mm:ss a',
  'M/d/yyyy H:mm',
  'M/d/yyyy H:mm:ss',
  'M/d/yyyy',
];
const DATE_CANDIDATES = [ISO_FORMAT, 'M/d/yyyy', 'yyyy/M/d', 'd.M.yyyy'];
const REQUIRED = [
  'customer.customer_id',
  'loan.loan_id',
  'loan.is_lead_loan',
  'loan.loan_amount',
  'loan.applied_at',
  'payment.payment_id',
  'payment.payment_at',
];

export function starterMapping(files: readonly SampledFile[], timeZone?: string): StarterMapping {
  const byKey = new Map<string, Target[]>();
  for (const level of LEVELS) {
    for (const [field, kind] of Object.entries(LEVEL_FIELDS[level])) {
      const key = looseKey(field);
      byKey.set(key, [...(byKey.get(key) ?? []), { level, field, kind }]);
    }
  }
  const mapping: MappingFile = { description: `starter mapping for ${files.map((f) => f.name).join(', ')}` };
  const sections: Record<Level, Record<string, FieldSpec>> = { customer: {}, loan: {}, payment: {} };
  const unmatched: string[] = [];
  const codesToFill: Record<string, string[]> = {};
  const notes: string[] = [];
  // A mapping has one delimiter, and a comma is what it means without one.
  const delimiters = [...new Set(files.map((f) => f.delimiter ?? ','))];
  if (delimiters.length === 1 && delimiters[0] !== ',') mapping.csv = { delimiter: delimiters[0]! };
  if (delimiters.length > 1)
    notes.push(
      `the files are split by different delimiters (${delimiters.map((d) => JSON.stringify(d)).join(', ')}), but a mapping has one ("csv": { "delimiter": … }): save them with the same one`,
    );
  const zone = resolveZone(timeZone ?? 'UTC') ?? resolveZone('UTC')!;
  let dollars = false;
  const datetimeFormats = new Set<string>();
  const dateFormats = new Set<string>();

  // A payments file's own names for the customer and loan ids, kept if they differ from the loans file's.
  const joinColumns: { level: Level; field: string; column: string }[] = [];

  for (const file of files) {
    const role = file.role ?? (files.length > 1 ? guessRole(file.header, byKey) : undefined);
    file.header.forEach((column, index) => {
      const found = byKey.get(looseKey(column));
      if (!found) {
        if (!unmatched.includes(column)) unmatched.push(column);
        return;
      }
      let targets = found;
      if (role !== undefined) {
        targets = found.filter((t) => ROLE_LEVELS[role].includes(t.level));
        if (role === 'payments') {
          const keys = found.filter((t) => isJoinKey(t));
          joinColumns.push(...keys.map((t) => ({ level: t.level, field: t.field, column })));
          if (keys.length) return;
        }
        if (targets.length === 0) {
          // A loan's "Principal" is its amount, not a payment's principal: better unmapped than wrong.
          if (!unmatched.includes(column)) unmatched.push(column);
          const names = found.map((t) => `${t.level}.${t.field}`).join(' or ');
          notes.push(
            `${quoteValue(column)} in ${file.name} looks like ${names}, but ${file.name} is ${ROLE_WORDS[role]}${file.role ? '' : ' (by most of its columns; say otherwise with --loans/--payments)'}: not mapped; map it by hand if it is right`,
          );
          return;
        }
      }
      const samples = file.rows.map((r) => (r[index] ?? '').trim()).filter((v) => v !== '');
      for (const { level, field, kind } of targets) {
        if (sections[level][field] !== undefined) continue;
        let spec: FieldSpec = column;
        if (kind.type === 'cents' && samples.some((s) => /[$.,()]/.test(s))) {
          dollars = true;
        } else if (kind.type === 'datetime' && samples.length) {
          const format = DATETIME_CANDIDATES.find((f) => samples.every((s) => compileDateTimeParser([f], zone)(s).ok));
          if (format) datetimeFormats.add(format);
          else
            notes.push(
              `${level}.${field} (${quoteValue(column)}): no known datetime format fits values like ${quoteValue(samples[0]!)}; set datetime_format`,
            );
        } else if (kind.type === 'date' && samples.length) {
          const format = DATE_CANDIDATES.find((f) => samples.every((s) => compileDateParser([f])(s).ok));
          if (format) dateFormats.add(format);
          else
            notes.push(
              `${level}.${field} (${quoteValue(column)}): no known date format fits values like ${quoteValue(samples[0]!)}; set date_format`,
            );
        } else if (kind.type === 'enum') {
          const match = enumMatcher(kind.values);
          const codes = [...new Set(samples.filter((s) => !match(s).ok))].slice(0, 50);
          if (codes.length) {
            spec = { column, values: Object.fromEntries(codes.map((c) => [c, ''])) };
            codesToFill[`${level}.${field}`] = codes;
          }
        }
        sections[level][field] = spec;
      }
    });
  }
  for (const { level, field, column } of joinColumns) {
    const own = sections[level][field];
    if (own !== column && sections.payment[field] === undefined) sections.payment[field] = column;
  }
  if (dollars) mapping.money = 'dollars';
  if (datetimeFormats.size) mapping.datetime_format = [...datetimeFormats].filter((f) => checkFormat(f) === null);
  if (dateFormats.size) mapping.date_format = [...dateFormats];
  const zoned = [...datetimeFormats].some((f) => f !== ISO_FORMAT);
  if (timeZone) mapping.source_time_zone = timeZone;
  else if (zoned) {
    mapping.source_time_zone = 'UTC';
    notes.push(
      "source_time_zone is UTC: set it to the LMS's time zone (an IANA name such as America/Chicago), or pass --time-zone",
    );
  }
  for (const level of LEVELS) if (Object.keys(sections[level]).length) mapping[level] = sections[level];
  const mapped = (name: string) => {
    const [level, field] = name.split('.') as [Level, string];
    return sections[level][field] !== undefined;
  };
  const missingRequired = REQUIRED.filter((name) => !mapped(name));
  if (!mapped('loan.lead_id') && !mapped('loan.management_system_id'))
    missingRequired.push('loan.lead_id or loan.management_system_id (a {"const": …} will do)');
  // A file without a header has data for names: an SSN must not end up in a mapping file, or on screen.
  const shown = unmatched.map(maskLongNumbers);
  if (shown.length) mapping.unmatched_columns = shown;
  return { mapping, unmatched: shown, missingRequired, codesToFill, notes };
}

function isJoinKey(t: Target): boolean {
  return t.level !== 'payment' && (PAYMENT_JOIN_KEYS as readonly string[]).includes(t.field);
}

/**
 * Whether a file of several holds loans or payments: the level most of its matched columns belong
 * to (the customer and loan ids, found in both, do not count); undefined on a tie.
 */
function guessRole(header: readonly string[], byKey: ReadonlyMap<string, readonly Target[]>): FileRole | undefined {
  let loans = 0;
  let payments = 0;
  for (const column of header) {
    for (const t of byKey.get(looseKey(column)) ?? []) {
      if (isJoinKey(t)) continue;
      if (t.level === 'payment') payments++;
      else loans++;
    }
  }
  return loans > payments ? 'loans' : payments > loans ? 'payments' : undefined;
}
