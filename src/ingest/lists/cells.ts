/** A row whose shape is wrong before its value can even be looked at (say, too many fields). */
export interface RowProblem {
  problem: string;
  /** The row's text as found, for the rejects report. */
  raw: string;
}

/** One row's cell of the chosen column: the raw text, or a problem with the row itself. */
export type ListCell = string | RowProblem;

/** Consecutive rows: cells[i] is row firstRow + i, numbered as a spreadsheet shows them (header included). */
export interface RowBatch {
  firstRow: number;
  cells: ListCell[];
}

export function isRowProblem(cell: ListCell): cell is RowProblem {
  return typeof cell !== 'string';
}
