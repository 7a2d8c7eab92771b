import { resolve } from 'node:path';
import * as z from 'zod';
import { InputError } from '../../errors.js';
import { readSmallFile } from '../../io/open-file.js';
import { describeChars, notAWorkbook } from '../sources.js';
import { sniffDelimiter } from '../table/reader.js';
import { formatZodIssues } from '../../schema/common.js';
import { routingNumberProblem } from '../../schema/list-items.js';
import { spreadsheetProblem, type CellExpectation } from '../../schema/spreadsheet.js';
import { checkFormat, compileDateParser, compileDateTimeParser, ISO_FORMAT, resolveZone } from './datetime.js';
import {
  describeKind,
  fieldKind,
  LEVEL_FIELDS,
  LEVELS,
  PAYMENT_JOIN_KEYS,
  REQUIRED_EVERYWHERE,
  type FieldKind,
  type Level,
} from './fields.js';
import {
  enumMatcher,
  looseKey,
  parseBoolean,
  parseMoney,
  parseWholeNumber,
  type Converted,
  type MoneyUnit,
} from './values.js';

/**
 * The mapping file: how an export's columns become API fields. JSON, one section per level:
 *
 *   { "source_time_zone": "America/Chicago", "money": "dollars",
 *     "datetime_format": "M/d/yyyy h:mm a", "date_format": "M/d/yyyy",
 *     "customer": { "customer_id": "Cust No" },
 *     "loan": { "loan_id": "Loan No", "management_system_id": { "const": 7 },
 *               "loan_status": { "column": "Status", "values": { "PIF": "Paid In Full" } } },
 *     "payment": { "payment_id": "Trans ID", "payment_amount": { "column": "Amount", "money": "dollars" } } }
 *
 * A field is a column name, `{column, values?, money?, format?, time_zone?, default?}`, or `{const}`.
 * The conversion follows the API field's type, so money, date and yes/no fields need no more.
 */

const Scalar = z.union([z.string(), z.number(), z.boolean()]);
const Formats = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const ColumnSpec = z.strictObject({
  column: z.string().min(1),
  values: z.record(z.string(), Scalar).optional(),
  money: z.enum(['dollars', 'cents']).optional(),
  format: Formats.optional(),
  time_zone: z.string().min(1).optional(),
  default: Scalar.optional(),
});
const ConstSpec = z.strictObject({ const: Scalar });
const FieldSpec = z.union([z.string().min(1), ConstSpec, ColumnSpec]);
export type FieldSpec = z.infer<typeof FieldSpec>;

const Section = z.record(z.string(), FieldSpec);

export const MappingFileSchema = z.strictObject({
  $schema: z.string().optional(),
  description: z.string().optional(),
  source_time_zone: z.string().min(1).optional(),
  money: z.enum(['dollars', 'cents']).optional(),
  date_format: Formats.optional(),
  datetime_format: Formats.optional(),
  csv: z.strictObject({ delimiter: z.string().length(1).optional() }).optional(),
  customer: Section.optional(),
  loan: Section.optional(),
  payment: Section.optional(),
  /** Written by `mapping init` for the reader's benefit; ignored. */
  unmatched_columns: z.array(z.string()).optional(),
});
export type MappingFile = z.infer<typeof MappingFileSchema>;

export interface Mapping {
  /** Where it came from, for messages. */
  file?: string;
  spec: MappingFile;
  /** The built-in "columns are named as the API's fields" (no --mapping). */
  identity?: true;
}

/** With no mapping: columns named as the API's fields, cents, ISO dates, UTC. */
export const IDENTITY_MAPPING: Mapping = { spec: {}, identity: true };

/** A mapping is a few KB of JSON; a larger file is not one (and is not read whole). */
const MAX_MAPPING_BYTES = 1 << 20;

export async function loadMapping(path: string, cwd: string): Promise<Mapping> {
  let text: string;
  try {
    const bytes = await readSmallFile(
      resolve(cwd, path),
      MAX_MAPPING_BYTES,
      (size) =>
        new InputError(
          `is ${size === undefined ? 'larger than 1 MiB' : `${size.toLocaleString('en-US')} bytes`}: a mapping file is at most ${describeChars(MAX_MAPPING_BYTES)}`,
          { file: path },
          { hint: 'check that --mapping names the mapping (JSON) and not the export' },
        ),
    );
    const workbook = notAWorkbook(path, bytes);
    if (workbook) throw workbook;
    text = bytes.toString('utf8');
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? 'no such mapping file' : `could not be read: ${(err as Error).message}`, {
      file: path,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new InputError(`is not valid JSON: ${(err as Error).message}`, { file: path });
  }
  return parseMapping(json, path);
}

export function parseMapping(json: unknown, file?: string): Mapping {
  const parsed = MappingFileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error).map((i) => `${i.path || '(top level)'}: ${i.message}`);
    throw new InputError(`is not a valid mapping: ${issues.join('; ')}`, { file });
  }
  const mapping: Mapping = { file, spec: parsed.data };
  const problems = checkMapping(mapping);
  if (problems.length) throw new InputError(`is not a valid mapping: ${problems.join('; ')}`, { file });
  return mapping;
}

/** Everything that can be known wrong before reading a row: names, zones, formats, constants. */
function checkMapping(mapping: Mapping): string[] {
  const problems: string[] = [];
  const spec = mapping.spec;
  if (spec.source_time_zone !== undefined && !resolveZone(spec.source_time_zone)) {
    problems.push(
      `source_time_zone: "${spec.source_time_zone}" is not a time zone (use an IANA name like America/Chicago)`,
    );
  }
  for (const format of asList(spec.date_format).concat(asList(spec.datetime_format))) {
    const problem = checkFormat(format);
    if (problem) problems.push(problem);
  }
  for (const level of LEVELS) {
    for (const [field, fieldSpec] of Object.entries(spec[level] ?? {})) {
      const where = `${level}.${field}`;
      const kind = fieldKind(level, field);
      if (!kind) {
        problems.push(`${where}: not a field of the ${level} (${suggest(level, field)})`);
        continue;
      }
      if (typeof fieldSpec === 'string') continue;
      if ('const' in fieldSpec) {
        const converted = convertScalar(fieldSpec.const, kind, makeConverter(kind, {}, spec));
        if (!converted.ok) problems.push(`${where}.const: ${converted.reason}`);
        continue;
      }
      if (fieldSpec.money && kind.type !== 'cents')
        problems.push(`${where}.money: only for money fields, and ${field} is ${describeKind(kind)}`);
      if (fieldSpec.format && kind.type !== 'date' && kind.type !== 'datetime')
        problems.push(`${where}.format: only for date and datetime fields`);
      if (fieldSpec.time_zone && kind.type !== 'datetime')
        problems.push(`${where}.time_zone: only for datetime fields`);
      if (fieldSpec.time_zone && !resolveZone(fieldSpec.time_zone))
        problems.push(`${where}.time_zone: "${fieldSpec.time_zone}" is not a time zone`);
      for (const format of asList(fieldSpec.format)) {
        const problem = checkFormat(format);
        if (problem) problems.push(`${where}.format: ${problem}`);
      }
      const convert = makeConverter(kind, fieldSpec, spec);
      for (const [from, to] of Object.entries(fieldSpec.values ?? {})) {
        const converted = convertScalar(to, kind, convert);
        if (!converted.ok) problems.push(`${where}.values["${from}"]: ${converted.reason}`);
      }
      if (fieldSpec.default !== undefined) {
        const converted = convertScalar(fieldSpec.default, kind, convert);
        if (!converted.ok) problems.push(`${where}.default: ${converted.reason}`);
      }
    }
  }
  return problems;
}

function suggest(level: Level, field: string): string {
  const key = looseKey(field);
  for (const other of LEVELS) {
    for (const name of Object.keys(LEVEL_FIELDS[other])) {
      if (looseKey(name) === key) return other === level ? `did you mean "${name}"?` : `it belongs in "${other}"`;
    }
  }
  return `fields: ${Object.keys(LEVEL_FIELDS[level]).join(', ')}`;
}

function asList(formats: string | string[] | undefined): string[] {
  return formats === undefined ? [] : Array.isArray(formats) ? formats : [formats];
}

// ------------------------------------------------------------------ converters

type TextConverter = (text: string) => Converted<unknown>;

interface ColumnOptions {
  money?: MoneyUnit;
  format?: string | string[];
  time_zone?: string;
}

function makeConverter(kind: FieldKind, options: ColumnOptions, spec: MappingFile): TextConverter {
  switch (kind.type) {
    case 'string':
      return (text) => ({ ok: true, value: text });
    case 'id':
      return parseWholeNumber;
    case 'cents': {
      const unit = options.money ?? spec.money ?? 'cents';
      return (text) => parseMoney(text, unit);
    }
    case 'boolean':
      return parseBoolean;
    case 'enum':
      return enumMatcher(kind.values);
    case 'date':
      return compileDateParser(
        asList(options.format ?? spec.date_format).length ? asList(options.format ?? spec.date_format) : [ISO_FORMAT],
      );
    case 'datetime': {
      const formats = asList(options.format ?? spec.datetime_format);
      const zone = resolveZone(options.time_zone ?? spec.source_time_zone ?? 'UTC') ?? resolveZone('UTC')!;
      return compileDateTimeParser(formats.length ? formats : [ISO_FORMAT], zone);
    }
  }
}

/** A constant, a value-map target or a JSON value: typed values must already fit; text is converted. */
function convertScalar(value: string | number | boolean, kind: FieldKind, convert: TextConverter): Converted<unknown> {
  if (typeof value === 'string') return convert(value.trim());
  if (typeof value === 'boolean') {
    return kind.type === 'boolean'
      ? { ok: true, value }
      : { ok: false, reason: `${value} is not ${describeKind(kind)}` };
  }
  if (kind.type === 'cents') {
    return Number.isSafeInteger(value)
      ? { ok: true, value }
      : { ok: false, reason: `${value} is not a whole number of cents` };
  }
  if (kind.type === 'id') {
    return Number.isSafeInteger(value) && value >= 0
      ? { ok: true, value }
      : { ok: false, reason: `${value} is not a whole number` };
  }
  if (kind.type === 'string') return { ok: true, value: String(value) };
  return convert(String(value));
}

// ------------------------------------------------------------------ compiled extraction

export interface FieldError {
  field: string;
  /** The source column, when the value came from one. */
  column?: string;
  reason: string;
}

interface Getter {
  field: string;
  column?: string;
  /** Cell index, or -1 for a constant. */
  index: number;
  constant?: unknown;
  fallback?: Converted<unknown>;
  convert: TextConverter;
  /** The value map, keys lower-cased, each target already converted (conversion is pure). */
  values?: Map<string, Converted<unknown>>;
  /** Cells found in `values`, as they were written: most rows repeat a few codes (see EXACT_CODES). */
  exact?: Map<string, Converted<unknown>>;
  kind: FieldKind;
  /** What the field expects of a cell, for the words about what a spreadsheet did to it. */
  expect: CellExpectation;
}

/**
 * Codes remembered as written per value map, so that a cell seen before is found without lower-casing
 * it. Few: a cell's text may be a slice that keeps its part of the file in memory.
 */
const EXACT_CODES = 64;

/**
 * Kinds whose converters only ever give values of the kind (so do value maps, defaults and
 * constants, converted by them when the mapping is read): any text, integer cents, true or false,
 * a name of the enum, and `YYYY-MM-DDTHH:mm:ssZ` of the years 1000 to 9999 (formatInstant). Not
 * ids (a constant may be 0, which the service refuses) nor dates (formatDate writes any year).
 */
const FITTING_KINDS: ReadonlySet<FieldKind['type']> = new Set(['string', 'cents', 'boolean', 'enum', 'datetime']);

/** Fixed-width numbers among the text fields, whose leading zeros a spreadsheet drops. */
const DIGITS_OF_FIELD: Readonly<Record<string, { digits: number; validPadded: (padded: string) => boolean }>> = {
  bank_routing_number: { digits: 9, validPadded: (padded) => routingNumberProblem(padded) === null },
};

function cellExpectation(field: string, kind: FieldKind): CellExpectation {
  return {
    field,
    empty: REQUIRED_EVERYWHERE.has(field) ? 'required' : 'optional',
    numeric: kind.type === 'id' || kind.type === 'cents',
    ...DIGITS_OF_FIELD[field],
  };
}

/** Reads one level's fields out of a row of cells. Built once per header. */
export interface LevelReader {
  readonly level: Level;
  /** API fields this reader can produce (mapped to a present column or a constant). */
  readonly fields: ReadonlySet<string>;
  /**
   * Every value this reader puts out is of a field of its level and fits the field's kind as the
   * batch quick check sees it (src/schema/quick-check.ts): a record read with no errors needs no
   * second look at its fields' kinds, only at the rules between them (see FITTING_KINDS).
   */
  readonly fitting: boolean;
  /** Cell index of a field's column, or -1 (constant or not mapped). */
  columnIndex(field: string): number;
  /** Puts converted values into `out`; problems into `errors`. Empty cells are left out. */
  read(cells: readonly string[], out: Record<string, unknown>, errors: FieldError[]): void;
}

export interface CompileOptions {
  /** Fields of this level to read (others in the mapping belong to another file). Default: all. */
  only?: readonly string[];
  /** The header's name for messages. */
  file?: string;
  /**
   * CSV headers are fixed, so a mapped column that is not there is an error (exit 2).
   * JSON objects may leave keys out; then a missing key is an empty value.
   */
  strictColumns: boolean;
}

export interface CompiledLevel {
  reader: LevelReader;
  /** Mapped columns the header lacks (only with strictColumns). */
  missingColumns: { field: string; column: string }[];
}

/** Header lookup that tolerates case and surrounding spaces when the exact name is absent. */
function headerIndex(header: readonly string[]): (column: string) => number {
  const exact = new Map<string, number>();
  const loose = new Map<string, number>();
  header.forEach((name, i) => {
    if (!exact.has(name)) exact.set(name, i);
    const key = name.trim().toLowerCase();
    if (!loose.has(key)) loose.set(key, i);
  });
  return (column) => exact.get(column) ?? loose.get(column.trim().toLowerCase()) ?? -1;
}

export function compileLevel(
  mapping: Mapping,
  level: Level,
  header: readonly string[],
  options: CompileOptions,
): CompiledLevel {
  const spec = mapping.spec;
  const find = headerIndex(header);
  const only = options.only ? new Set(options.only) : undefined;
  const section: Record<string, FieldSpec> =
    mapping.identity === true ? identitySection(level, header) : { ...(spec[level] ?? {}) };
  if (mapping.identity !== true && level === 'payment') {
    // A payments file's keys default to the customer and loan sections' columns.
    for (const key of PAYMENT_JOIN_KEYS) {
      const fallback = key === 'customer_id' ? spec.customer?.customer_id : spec.loan?.loan_id;
      if (section[key] === undefined && fallback !== undefined) section[key] = fallback;
    }
  }
  const getters: Getter[] = [];
  const missingColumns: { field: string; column: string }[] = [];
  for (const [field, fieldSpec] of Object.entries(section)) {
    if (only && !only.has(field)) continue;
    const kind = fieldKind(level, field);
    if (!kind) continue;
    if (typeof fieldSpec !== 'string' && 'const' in fieldSpec) {
      const converted = convertScalar(fieldSpec.const, kind, makeConverter(kind, {}, spec));
      if (converted.ok)
        getters.push({
          field,
          index: -1,
          constant: converted.value,
          convert: () => converted,
          kind,
          expect: cellExpectation(field, kind),
        });
      continue;
    }
    const column = typeof fieldSpec === 'string' ? fieldSpec : fieldSpec.column;
    const columnOptions: ColumnOptions = typeof fieldSpec === 'string' ? {} : fieldSpec;
    const hasDefault = typeof fieldSpec !== 'string' && fieldSpec.default !== undefined;
    const index = find(column);
    if (index < 0 && !hasDefault) {
      if (options.strictColumns) missingColumns.push({ field, column });
      continue;
    }
    const convert = makeConverter(kind, columnOptions, spec);
    const getter: Getter = { field, column, index, convert, kind, expect: cellExpectation(field, kind) };
    if (typeof fieldSpec !== 'string') {
      if (fieldSpec.values) {
        const values = new Map<string, Converted<unknown>>();
        for (const [k, v] of Object.entries(fieldSpec.values)) {
          values.set(k.trim().toLowerCase(), convertScalar(v, kind, convert));
        }
        getter.values = values;
        getter.exact = new Map();
      }
      if (fieldSpec.default !== undefined) getter.fallback = convertScalar(fieldSpec.default, kind, convert);
    }
    getters.push(getter);
  }
  const fields = new Set(getters.map((g) => g.field));
  const fitting = getters.every((g) => FITTING_KINDS.has(g.kind.type) && LEVEL_FIELDS[level][g.field] !== undefined);
  const reader: LevelReader = {
    level,
    fields,
    fitting,
    columnIndex: (field) => getters.find((g) => g.field === field)?.index ?? -1,
    read(cells, out, errors) {
      for (let i = 0; i < getters.length; i++) {
        const g = getters[i]!;
        if (g.index < 0) {
          if (g.fallback?.ok) out[g.field] = g.fallback.value;
          else if (g.constant !== undefined) out[g.field] = g.constant;
          continue;
        }
        const raw = cells[g.index];
        const text = raw === undefined ? '' : raw.trim();
        let result: Converted<unknown> | undefined;
        if (text === '') {
          if (g.fallback === undefined) continue;
          result = g.fallback;
        } else if (g.values !== undefined) {
          result = g.exact!.get(text);
          if (result === undefined) {
            result = g.values.get(text.toLowerCase());
            if (result !== undefined && g.exact!.size < EXACT_CODES) g.exact!.set(text, result);
          }
        }
        if (result === undefined) {
          // Text is taken as it is, so a spreadsheet's N/A or 1.23E+05 is caught before it is sent as an id.
          const converted = g.convert(text);
          const problem = converted.ok && g.kind.type !== 'string' ? null : spreadsheetProblem(text, g.expect);
          result = problem === null ? converted : { ok: false, reason: problem };
        }
        if (result.ok) out[g.field] = result.value;
        else errors.push({ field: g.field, column: g.column, reason: result.reason });
      }
    },
  };
  return { reader, missingColumns };
}

/** No mapping: a column whose name is an API field (up to case and surrounding spaces) is that field. */
function identitySection(level: Level, header: readonly string[]): Record<string, string> {
  const section: Record<string, string> = {};
  const names = new Set(Object.keys(LEVEL_FIELDS[level]).concat(level === 'payment' ? [...PAYMENT_JOIN_KEYS] : []));
  for (const column of header) {
    const name = column.trim().toLowerCase();
    if (names.has(name) && section[name] === undefined) section[name] = column;
  }
  return section;
}

/** The CSV delimiter the mapping asks for. */
export function csvDelimiter(mapping: Mapping): string {
  return mapping.spec.csv?.delimiter ?? ',';
}

/**
 * The mapping with the delimiter named by `--delimiter` in place of its own: one typed on the
 * command line wins (it then also keys the journal and the record's digests, as a mapping's does).
 */
export function withDelimiter(mapping: Mapping, delimiter: string | undefined): Mapping {
  if (delimiter === undefined || delimiter === csvDelimiter(mapping)) return mapping;
  return { ...mapping, spec: { ...mapping.spec, csv: { ...mapping.spec.csv, delimiter } } };
}

const DELIMITER_NAMES: Record<string, { word: string; flag: string }> = {
  ',': { word: 'comma', flag: 'comma' },
  ';': { word: 'semicolon', flag: "';'" },
  '\t': { word: 'tab', flag: 'tab' },
  '|': { word: 'pipe', flag: "'|'" },
};

/**
 * What to do when the header came out as one column holding another delimiter (a semicolon
 * from Excel in a European locale, a tab from a database): without this, the error listed every
 * mapped column as missing. Undefined for any other header.
 */
export function delimiterHint(header: readonly string[], mapping: Mapping): string | undefined {
  const named = header.filter((name) => name.trim() !== '');
  if (named.length !== 1) return undefined;
  const used = csvDelimiter(mapping);
  const found = sniffDelimiter(
    named[0]!,
    Object.keys(DELIMITER_NAMES).filter((d) => d !== used),
  );
  if (found.count === 0) return undefined;
  const { word, flag } = DELIMITER_NAMES[found.char]!;
  const describe = (d: string) => DELIMITER_NAMES[d]?.word ?? `"${d}"`;
  return `the header was read as one column holding ${found.count} ${word}${found.count === 1 ? '' : 's'}, split by ${describe(used)}: for a ${word}-separated file add --delimiter ${flag}, or "csv": { "delimiter": ${JSON.stringify(found.char)} } to the mapping`;
}
