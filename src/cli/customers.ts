import { Option } from '@commander-js/extra-typings';
import { UsageError } from '../errors.js';
import { defineCommand, defineGroup } from './command.js';
import { byteSize, collect, wholeNumber } from './parse.js';
import { addPushOptions } from './push-options.js';

const batch = defineCommand(
  (customers) =>
    addPushOptions(
      customers
        .command('batch')
        .description(
          'push the LMS export: customers with all their loans and payments, in chunks of at most 1000 customers, with retries, a rejects file and --resume',
        )
        .argument(
          '[files...]',
          'batch-shape JSON/NDJSON, or CSV with one row per payment (loan columns repeated); .gz is fine; - for stdin',
        )
        .option('--loans <file>', 'CSV with one row per loan (repeatable)', collect)
        .option(
          '--payments <file>',
          'CSV with one row per payment, joined to --loans on customer and loan id (repeatable)',
          collect,
        )
        .option('--chunk-size <n>', 'customers per request', wholeNumber('--chunk-size', 1, 1000), 1000)
        .option(
          '--max-bytes <size>',
          'largest request body (a single larger customer is sent alone)',
          byteSize,
          8 * 1024 * 1024,
        )
        .option(
          '--resume',
          'continue an interrupted push of the same inputs: send only what the service has not acknowledged',
        )
        .addOption(
          new Option(
            '--changed-only',
            'send only customers that changed since the service last acknowledged them (by the local record of what was sent), or were last sent over --max-age ago',
          ).conflicts('full'),
        )
        .option(
          '--full',
          'send every customer and refresh the record of what was sent (the weekly run beside nightly --changed-only)',
        )
        .option(
          '--max-age <days>',
          'with --changed-only: resend customers last sent more than this many days ago',
          wholeNumber('--max-age', 0, 3650),
          30,
        ),
      'requests',
    ),
  async (ctx, [files], opts, cmd) => {
    if (cmd.getOptionValueSource('maxAge') === 'cli' && !opts.changedOnly)
      throw new UsageError('--max-age applies to --changed-only only', {
        hint: 'add --changed-only (e.g. `leadctl customers batch export.csv --changed-only --max-age 7`), or leave out --max-age',
      });
    const { runBatchPushCommand } = await import('./push-run.js');
    return runBatchPushCommand(
      ctx,
      {
        inputs: [
          ...files.map((path) => ({ path, role: 'auto' as const })),
          ...(opts.loans ?? []).map((path) => ({ path, role: 'loans' as const })),
          ...(opts.payments ?? []).map((path) => ({ path, role: 'payments' as const })),
        ],
        mappingPath: opts.mapping,
        format: opts.format,
        rejectsPath: opts.rejects,
        chunkSize: opts.chunkSize,
        maxBytes: opts.maxBytes,
        concurrency: opts.concurrency,
        validateOnly: opts.validateOnly === true,
        resume: opts.resume === true,
        delta: opts.changedOnly ? 'changed-only' : opts.full ? 'full' : undefined,
        maxAgeDays: opts.maxAge,
      },
      opts,
    );
  },
);

const push = defineCommand(
  (customers) =>
    addPushOptions(
      customers
        .command('push')
        .description(
          'upsert customers one request each, with their lead loan (real-time reporting of a loan from a lead post)',
        )
        .argument(
          '<file>',
          'CSV, JSON or NDJSON of customers with their lead loan; - reads one JSON record from stdin',
        ),
      'requests',
    ),
  async (ctx, [file], opts) => (await import('./push-run.js')).runSinglePushCommand(ctx, 'customer', file, opts),
);

export const register = defineGroup(
  'customers',
  'report customers, with their loans and payments, to the loan performance service',
  [batch, push],
);
