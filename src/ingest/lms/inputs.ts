import { createHash } from 'node:crypto';
import { UsageError } from '../../errors.js';
import type { IO } from '../../io/io.js';
import { stageCsv, type CsvRole } from './csv.js';
import { documentGroups, flatGroups, type CustomerGroup } from './groups.js';
import { stageBatchJson } from './json.js';
import { formatFromName, peekText, sniffFormat, type InputFormat, type ProblemSink } from './rows.js';
import type { Mapping } from '../mapping/mapping.js';
import { openInput } from '../sources.js';
import type { Staging } from './staging.js';

/**
 * Every input of a batch push, read into one staging file: positional files (batch-shape JSON or
 * NDJSON, or CSV with a row per payment) and `--loans`/`--payments` CSV files. The inputs' content
 * is hashed on the way, for the journal's key.
 */

export interface BatchInput {
  path: string;
  /** `auto`: a positional file, whose format says how to read it. */
  role: 'auto' | 'loans' | 'payments';
}

export interface StagedExport {
  staging: Staging;
  shape: 'flat' | 'documents';
  rowsRead: number;
  /** Digest of the inputs' content (with roles) and of the mapping. */
  digest: string;
  groups(): Iterable<CustomerGroup>;
}

export interface StageExportOptions {
  inputs: readonly BatchInput[];
  mapping: Mapping;
  /** For stdin and names without a telling extension. */
  format?: InputFormat;
  problems: ProblemSink;
  io: Pick<IO, 'stdin' | 'cwd'>;
  /** Created by the caller (who names sources in messages from `staging.sources`), closed by the caller on failure. */
  staging: Staging;
  onRows?: (file: string, rows: number) => void;
  /** See StageCsvOptions.precheckPayment. */
  precheckPayment?: (fields: Record<string, unknown>) => boolean;
  /** Stops the reading (see OpenInputOptions). */
  signal?: AbortSignal;
}

export async function stageExport(options: StageExportOptions): Promise<StagedExport> {
  const { inputs, mapping } = options;
  if (inputs.some((i) => i.role === 'payments') && !inputs.some((i) => i.role === 'loans')) {
    throw new UsageError('--payments needs --loans: payments are joined to their loans on customer and loan id');
  }
  if (inputs.filter((i) => i.path === '-').length > 1) throw new UsageError('standard input (-) can be read only once');
  const staging = options.staging;
  {
    const digest = createHash('sha256');
    digest.update(`mapping:${JSON.stringify(mapping.spec)}\n`);
    let rowsRead = 0;
    let shape: 'flat' | 'documents' | undefined;
    for (const item of inputs) {
      let input = await openInput(item.path, options.io, { signal: options.signal });
      let format: InputFormat | undefined =
        item.role === 'auto' ? (options.format ?? formatFromName(input.name)) : 'csv';
      if (format === undefined) {
        const peeked = await peekText(input);
        input = peeked.input;
        format = sniffFormat(peeked.head);
      }
      const inputShape = format === 'csv' ? 'flat' : 'documents';
      if (shape !== undefined && shape !== inputShape) {
        input.stream.destroy();
        throw new UsageError('batch-shape JSON/NDJSON and flat CSV cannot be mixed in one push; push them separately');
      }
      shape = inputShape;
      const hash = createHash('sha256');
      const onRows = options.onRows ? (rows: number) => options.onRows!(input.name, rows) : undefined;
      const rows =
        format === 'csv'
          ? await stageCsv(input, (item.role === 'auto' ? 'rows' : item.role) as CsvRole, {
              staging,
              mapping,
              problems: options.problems,
              hash,
              onRows,
              precheckPayment: options.precheckPayment,
            })
          : await stageBatchJson(input, format, { staging, mapping, problems: options.problems, hash, onRows });
      rowsRead += rows;
      digest.update(`${item.role}:${format}:${hash.digest('hex')}\n`);
    }
    staging.finish();
    const finalShape = shape ?? 'flat';
    return {
      staging,
      shape: finalShape,
      rowsRead,
      digest: digest.digest('hex'),
      groups: () => (finalShape === 'flat' ? flatGroups(staging) : documentGroups(staging)),
    };
  }
}
