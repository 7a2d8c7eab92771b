import { InvalidArgumentError, Option, type Command } from 'commander';
import { addRunFileOptions, type RunFileFlags } from './run-files.js';

/** Flags shared by the push commands (customers batch, customers/loans/payments push). */

export interface PushFlags extends RunFileFlags {
  mapping?: string;
  rejects?: string;
  concurrency: number;
  validateOnly?: boolean;
  format?: 'csv' | 'json' | 'ndjson';
}

export const wholeNumber =
  (name: string, min: number, max: number) =>
  (value: string): number => {
    const text = value.trim();
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
      throw new InvalidArgumentError(`${name} takes a whole number from ${min} to ${max}.`);
    }
    return Number(text);
  };

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
};

/** `8388608`, `8MiB`, `8MB`, `512k`. */
export const byteSize = (value: string): number => {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined)
    throw new InvalidArgumentError('--max-bytes takes a size such as 8388608, 8MiB, 8MB or 512k.');
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 1024) throw new InvalidArgumentError('--max-bytes must be at least 1 KiB.');
  return bytes;
};

export function addPushOptions(cmd: Command, what: string): Command {
  const options = cmd
    .option(
      '--mapping <file>',
      "JSON mapping of the export's columns to API fields (default: columns named as the API fields)",
    )
    .option(
      '--rejects <file>',
      'CSV of every record not accepted, with source file, row and reason (default: leadctl-rejects-<time>.csv, written only when needed)',
    )
    .option('--concurrency <n>', `${what} in flight at once`, wholeNumber('--concurrency', 1, 64), 4)
    .option('--validate-only', 'read, convert and check everything; send nothing')
    .addOption(
      new Option('--format <format>', 'input format when the file name does not say (stdin)').choices([
        'csv',
        'json',
        'ndjson',
      ]),
    );
  return addRunFileOptions(options);
}
