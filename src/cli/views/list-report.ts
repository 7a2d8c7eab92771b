/**
 * How suppression lists and list uploads are shown: list metadata in every output format,
 * the upload summary, and the problems of a list file (always on stderr, as a table).
 */
import type { OutputStream } from '../../io/io.js';
import type { ListUploadResult, ListUploadSummary, ProblemReason } from '../../jobs/list-upload.js';
import type { ListFileFormat } from '../../ingest/lists/reader.js';
import type { List } from '../../schema/lists.js';
import { Output, type Column } from '../../output/render.js';

export const LIST_COLUMNS: Column<List>[] = [
  { key: 'id', align: 'right' },
  { key: 'name' },
  { key: 'type' },
  // A boolean in every machine format (CSV writes true/false); words in tables.
  { key: 'archived', value: (l) => isArchived(l), format: (_v, l) => (isArchived(l) ? `yes (${l.deleted_at})` : 'no') },
  { key: 'created_at', header: 'created' },
  { key: 'updated_at', header: 'updated' },
];

function isArchived(list: List): boolean {
  return list.deleted_at !== null && list.deleted_at !== undefined;
}

/** JSON form of a list: the columns plus the service's own `deleted_at`. */
export function listJson(list: List): Record<string, unknown> {
  return {
    id: list.id,
    name: list.name,
    type: list.type,
    archived: isArchived(list),
    deleted_at: list.deleted_at ?? null,
    created_at: list.created_at,
    updated_at: list.updated_at,
  };
}

const count = (v: unknown) => (typeof v === 'number' ? v.toLocaleString('en-US') : String(v ?? ''));

export const SUMMARY_COLUMNS: Column<ListUploadSummary>[] = [
  {
    key: 'list_id',
    header: 'List id',
    format: (v, s) => (v === null ? (s.validate_only ? '(validate only: nothing sent)' : '-') : String(v)),
  },
  { key: 'name', header: 'Name' },
  { key: 'type', header: 'Type' },
  { key: 'file', header: 'File' },
  { key: 'format', header: 'Read as', format: (_v, s) => readAs(s) },
  { key: 'column', header: 'Column', format: (v) => (v === null ? '-' : String(v)) },
  { key: 'header_row', header: 'Header row', format: (v) => (v === null ? 'none' : String(v)) },
  { key: 'rows_read', header: 'Rows read', format: count },
  { key: 'blank', header: 'Blank', format: count },
  { key: 'valid', header: 'Valid', format: count },
  { key: 'normalised', header: 'Normalised', format: count },
  { key: 'duplicates', header: 'Duplicates', format: count },
  { key: 'rejected', header: 'Rejected', format: count },
  { key: 'distinct', header: 'Distinct', format: count },
  { key: 'uploaded', header: 'Uploaded', format: count },
  {
    key: 'validate_only',
    header: 'Validate only',
    value: (s) => s.validate_only,
    format: (_v, s) => (s.validate_only ? 'yes' : 'no'),
  },
  { key: 'rejects_file', header: 'Rejects file', format: (v) => (v === null ? '-' : String(v)) },
  { key: 'elapsed_seconds', header: 'Elapsed', format: (v) => `${Number(v).toFixed(2)} s` },
];

const REASON_COLUMNS: Column<ProblemReason>[] = [
  { key: 'count', header: 'rows', align: 'right', format: (v) => Number(v).toLocaleString('en-US') },
  { key: 'reason' },
  {
    key: 'example',
    header: 'first (row: value)',
    format: (_v, r) =>
      `${r.example.row === undefined ? '-' : r.example.row}: ${r.example.value === '' ? '(empty)' : r.example.value}${r.example.reason !== r.reason ? ` (${r.example.reason.slice(r.reason.length).replace(/^ \(|\)$/g, '')})` : ''}`,
  },
];

/**
 * The problems on stderr grouped by reason, most frequent first: how many rows, the reason, and
 * the first row as an example; then where every problem is (the rejects file) or how to get them.
 */
export async function printProblems(stderr: OutputStream, result: ListUploadResult, title: string): Promise<void> {
  const out = new Output(stderr, { format: 'table', color: false });
  await out.write(`${title}\n`);
  await out.list(result.reasons, REASON_COLUMNS);
  const where = result.summary.rejects_file
    ? `every problem, row by row, is in ${result.summary.rejects_file}`
    : 'use --rejects FILE to write every problem, row by row, to a CSV file';
  await out.write(`${where}\n`);
}

const FORMAT_WORDS: Record<ListFileFormat, string> = { lines: 'one value per line', csv: 'CSV', json: 'a JSON array' };

/** The words the stderr lines and the summary share, e.g. "one value per line, CSV from row 7". */
export function readAs(summary: Pick<ListUploadSummary, 'format' | 'csv_from_row'>): string {
  return summary.csv_from_row === null
    ? FORMAT_WORDS[summary.format]
    : `${FORMAT_WORDS.lines}, ${FORMAT_WORDS.csv} from row ${summary.csv_from_row}`;
}

/** One line for people about what is about to be read, e.g. "Reading x.csv as CSV, column 2 (ssn), header on row 1". */
export function describeRead(summary: Pick<ListUploadSummary, 'file' | 'format' | 'column' | 'header_row'>): string {
  const header = summary.header_row === null ? 'no header row' : `header on row ${summary.header_row}`;
  const column = summary.column === null ? '' : `, column ${summary.column}`;
  return `Reading ${summary.file} as ${readAs({ format: summary.format, csv_from_row: null })}${column}, ${header}`;
}

/** Said when plain lines give way to CSV, so the first line said is not left standing as untrue. */
export function describeCsvFrom(file: string, row: number, delimiter = ','): string {
  return `Row ${row} of ${file} has a quote or ${DELIMITER_WORDS[delimiter] ?? `a "${delimiter}"`}: reading it and every row after it as CSV`;
}

const DELIMITER_WORDS: Record<string, string> = { ',': 'a comma', ';': 'a semicolon', '\t': 'a tab', '|': 'a pipe' };
