import { type Command, Option } from '@commander-js/extra-typings';
import { UsageError } from '../errors.js';
import { INPUT_ENCODINGS } from '../io/io.js';
import { OUTPUT_FORMATS } from '../io/output-format.js';

/** leadctl's global options, on the program: they can go before or after the command. */
export function addGlobalOptions(program: Command) {
  return program
    .addOption(
      new Option('-o, --output <format>', 'output format (default: table on a terminal, json otherwise)').choices(
        OUTPUT_FORMATS,
      ),
    )
    .option('-v, --verbose', 'log each request and decision to stderr (secrets redacted)')
    .option('-q, --quiet', 'print only data and errors')
    .option('--no-color', 'disable colours (NO_COLOR is honoured too)')
    .option('--utc', 'show times in UTC (default: the local time zone, TZ, with its offset)')
    .option('-p, --profile <name>', 'credentials profile to use (env LEADCTL_PROFILE)')
    .option('--base-url <url>', 'service base URL (env LEADCTL_BASE_URL)')
    .option(
      '--timeout <seconds>',
      'deadline of each request and its whole answer, in seconds (default 60)',
      parsePositiveNumber,
    )
    .option(
      '--lists-path <path>',
      'where this deployment serves lists, e.g. /api/v1/list-manager/lists (default: the documented path, else the other one, remembered per profile)',
      parseListsPath,
    )
    .addOption(
      new Option(
        '--encoding <name>',
        'text encoding of input files (default: UTF-8; UTF-16 with a BOM is recognised)',
      ).choices(INPUT_ENCODINGS),
    )
    .option(
      '--delimiter <char>',
      "field delimiter of input files: a character, or comma, semicolon, tab, pipe (default: detected from the header line; for exports, the mapping's)",
      parseDelimiter,
    )
    .option(
      '--csv-raw',
      "write CSV values exactly, without the leading ' that keeps spreadsheets from running cells starting with = + - @ as formulas",
    )
    .option(
      '--allow-changing-input',
      'read an input file even if it changes while it is read (refused by default: an export still being written)',
    );
}

/** The global options as commander parsed them, typed from their declaration above. */
export type GlobalFlags = ReturnType<ReturnType<typeof addGlobalOptions>['opts']>;

function parseListsPath(value: string): string {
  const path = value.trim().replace(/\/+$/, '');
  if (!/^\/[\w.~\-/]+$/.test(path) || path.includes('//'))
    throw new UsageError(
      `--lists-path must be a path on the service starting with /, like /api/v1/list-manager/lists; got "${value}"`,
      { hint: 'e.g. --lists-path /api/v1/list-manager/lists, or leave it out to let leadctl find the path' },
    );
  return path;
}

const DELIMITER_NAMES: Record<string, string> = { comma: ',', semicolon: ';', tab: '\t', pipe: '|', '\\t': '\t' };

function parseDelimiter(value: string): string {
  const d = DELIMITER_NAMES[value.toLowerCase()] ?? value;
  if (d.length !== 1 || d === '"' || d === '\r' || d === '\n')
    throw new UsageError(
      `--delimiter must be one character (or comma, semicolon, tab, pipe), not a quote or a line break; got "${value}"`,
      { hint: "e.g. --delimiter ';' or --delimiter tab, or leave it out to detect it from the header line" },
    );
  return d;
}

function parsePositiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`--timeout must be a positive number of seconds, got "${value}"`, {
      hint: 'e.g. --timeout 30 (the default is 60)',
    });
  return n;
}
