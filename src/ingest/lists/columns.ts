import { quoteValue, UsageError } from '../../errors.js';
import { maskLongNumbers } from '../../io/mask.js';

/** How the caller wants the value column found. */
export interface ColumnRequest {
  /** `--column`: a header name, or a 1-based column number. */
  column?: string;
  /** `--header` / `--no-header`; undefined = decide from the first row. */
  header?: boolean;
  /** Does a header cell name the list's type? Gets the cell lower-cased with only letters and digits kept. */
  headerMatches(label: string): 'exact' | 'loose' | false;
  /** Would this cell be accepted as a value of the list's type (after normalisation)? */
  looksLikeValue(cell: string): boolean;
}

export interface ColumnChoice {
  /** The first non-blank row is a header. */
  header: boolean;
  /** 0-based index of the value column. */
  index: number;
  /** Header name of the value column, when there is a header. */
  name?: string;
  /** Number of fields of the first row: later rows with more non-blank fields are suspect. */
  width: number;
}

export function headerLabel(cell: string): string {
  return cell.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Picks the value column from the first non-blank row (`first`, found on spreadsheet row `row`). */
export function chooseColumn(first: string[], request: ColumnRequest, file: string, row: number): ColumnChoice {
  const width = first.length;
  const names = () =>
    first
      .slice(0, 30)
      .map((c, i) => `${i + 1}: ${c.trim() === '' ? '(blank)' : quoteValue(maskLongNumbers(c.trim()))}`)
      .join(', ') + (width > 30 ? `, … (${width} columns)` : '');
  const looksLikeHeader = (cell: string) => {
    if (request.headerMatches(headerLabel(cell))) return true;
    return /[a-z]/i.test(cell) && !request.looksLikeValue(cell);
  };

  if (request.column !== undefined) {
    const wanted = request.column.trim();
    if (/^\d+$/.test(wanted)) {
      const index = Number(wanted) - 1;
      if (index < 0) throw new UsageError('--column numbers start at 1');
      if (index >= width) {
        throw new UsageError(
          `${file}: --column ${wanted} asked for, but row ${row} has only ${width} column${width === 1 ? '' : 's'} (${names()})`,
        );
      }
      const header = request.header ?? looksLikeHeader(first[index]!);
      return { header, index, ...(header ? { name: maskLongNumbers(first[index]!.trim()) } : {}), width };
    }
    if (request.header === false) {
      throw new UsageError(
        `--column "${wanted}" names a header column, but --no-header says the file has none; give a column number instead`,
      );
    }
    let index = first.findIndex((c) => c.trim().toLowerCase() === wanted.toLowerCase());
    if (index < 0) index = first.findIndex((c) => headerLabel(c) === headerLabel(wanted) && headerLabel(c) !== '');
    if (index < 0)
      throw new UsageError(`${file}: no column named "${wanted}" in the header on row ${row} (columns are ${names()})`);
    return { header: true, index, name: maskLongNumbers(first[index]!.trim()), width };
  }

  if (width === 1) {
    const header = request.header ?? looksLikeHeader(first[0]!);
    return { header, index: 0, ...(header ? { name: maskLongNumbers(first[0]!.trim()) } : {}), width };
  }

  // Several columns and no --column: only a header naming the type can say which one.
  const hint = 'choose one with --column NAME or --column NUMBER';
  if (request.header === false) {
    throw new UsageError(`${file} has ${width} columns and no header; ${hint}`);
  }
  for (const tier of ['exact', 'loose'] as const) {
    const matches = first
      .map((c, i) => (request.headerMatches(headerLabel(c)) === tier ? i : -1))
      .filter((i) => i >= 0);
    if (matches.length === 1)
      return { header: true, index: matches[0]!, name: maskLongNumbers(first[matches[0]!]!.trim()), width };
    if (matches.length > 1) {
      const which = matches.map((i) => `${i + 1}: ${quoteValue(maskLongNumbers(first[i]!.trim()))}`).join(', ');
      throw new UsageError(`${file}: several columns could hold the values (${which}); ${hint}`);
    }
  }
  throw new UsageError(`${file} has ${width} columns (${names()}) and none is named for the list's type; ${hint}`);
}
