import { type Command, Option, type OptionValues } from '@commander-js/extra-typings';
import { wholeNumber } from './parse.js';
import { addRunFileOptions } from './run-files.js';

const PUSH_INPUT_FORMATS = ['csv', 'json', 'ndjson'] as const;

/** Flags shared by the push commands (customers batch, customers/loans/payments push). */
export function addPushOptions<A extends unknown[], O extends OptionValues>(cmd: Command<A, O>, what: string) {
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
      new Option('--format <format>', 'input format when the file name does not say (stdin)').choices(
        PUSH_INPUT_FORMATS,
      ),
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 every record accepted; 4 some rejected (see the rejects file); 2 bad flags, or a file that\n' +
        'cannot be read or lacks a column (named); 3 authentication failed; 5 the service stayed unavailable\n' +
        '(rerun with --resume); 7 another push of this profile is running (customers batch); 130/143 stopped by\n' +
        'Ctrl-C or SIGTERM (rerun with --resume).',
    );
  return addRunFileOptions(options);
}

/** The push options as commander parses them, typed from their declaration above. */
export type PushFlags = ReturnType<ReturnType<typeof addPushOptions<[], Record<never, never>>>['opts']>;
