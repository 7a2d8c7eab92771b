import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { CustomerGroup } from '../../src/ingest/lms/groups.js';
import { stageExport } from '../../src/ingest/lms/inputs.js';
import type { RowProblem } from '../../src/ingest/lms/rows.js';
import { Staging } from '../../src/ingest/lms/staging.js';
import { IDENTITY_MAPPING } from '../../src/ingest/mapping/mapping.js';
import type { InputSource } from '../../src/ingest/sources.js';

/**
 * What a way of reading an export gives (groups, refusals, rows read, or the error it ends in), for
 * the property tests that hold one way against another (first-look, line-sort).
 */
export interface Outcome {
  groups: CustomerGroup[];
  problems: RowProblem[];
  rows: number;
  error?: unknown;
}

/** Headers of the identity mapping's three CSV shapes (a row per payment, loans, payments). */
export const ROWS_HEADER = [
  'customer_id',
  'loan_id',
  'lead_id',
  'loan_amount',
  'applied_at',
  'is_lead_loan',
  'payment_id',
  'payment_at',
];
export const LOANS_HEADER = ['customer_id', 'loan_id', 'lead_id', 'loan_amount', 'applied_at', 'is_lead_loan'];
export const PAYMENTS_HEADER = ['customer_id', 'loan_id', 'payment_id', 'payment_at', 'payment_amount'];

let files = 0;

/** What the SQLite staging gives (the reference for an unsorted export), in customer order. */
export async function staged(
  work: string,
  contents: { text: string; role: 'auto' | 'loans' | 'payments' }[],
): Promise<Outcome> {
  const problems: RowProblem[] = [];
  const staging = new Staging();
  try {
    const inputs = contents.map(({ text, role }) => {
      const path = join(work, `${process.pid}-${files++}.csv`);
      writeFileSync(path, text);
      return { path, role };
    });
    const result = await stageExport({
      inputs,
      mapping: IDENTITY_MAPPING,
      problems: (p) => problems.push(p),
      io: { stdin: process.stdin, cwd: work },
      staging,
      format: 'csv',
    });
    return { groups: [...result.groups()], problems, rows: result.rowsRead };
  } catch (error) {
    return { groups: [], problems, rows: -1, error };
  } finally {
    staging.close();
  }
}

/** A text handed on in chunks of `chunk` characters, as a file's decoder might cut it. */
export function source(name: string, content: string, chunk: number): InputSource {
  const chunks: string[] = [];
  for (let i = 0; i < content.length; i += chunk) chunks.push(content.slice(i, i + chunk));
  return { name, stream: Readable.from(chunks, { objectMode: true }), gzipped: false };
}

/** Every group a reader yields, and the rows it returns or the error it ends in. */
export async function drain(
  generator: AsyncGenerator<CustomerGroup, number>,
  problems: RowProblem[],
): Promise<Outcome> {
  const groups: CustomerGroup[] = [];
  try {
    while (true) {
      const next = await generator.next();
      if (next.done) return { groups, problems, rows: next.value };
      groups.push(next.value);
    }
  } catch (error) {
    return { groups, problems, rows: -1, error };
  }
}
