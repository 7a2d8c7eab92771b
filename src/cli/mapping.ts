import { defineCommand, defineGroup } from './command.js';

const init = defineCommand(
  (mapping) =>
    mapping
      .command('init')
      .description(
        'write a starter mapping from CSV headers (and a sample of rows), listing the columns it could not match',
      )
      .argument('[files...]', 'CSV exports (e.g. loans.csv payments.csv); .gz is fine')
      .option(
        '--loans <file>',
        'a CSV export of customers and loans (its columns map to customer and loan fields only)',
      )
      .option('--payments <file>', 'a CSV export of payments (its columns map to payment fields only)')
      .option('--out <file>', 'write the mapping to this file instead of stdout')
      .option('--force', 'overwrite --out if it exists')
      .option('--time-zone <zone>', "the LMS's time zone for local datetimes (IANA name, e.g. America/Chicago)")
      .option(
        '--sample-rows <n>',
        'rows read per file to guess money units, date formats and codes',
        (v) => Number(v),
        200,
      ),
  async (ctx, [files], opts) => (await import('./mapping-run.js')).runMappingInit(ctx, files, opts),
);

export const register = defineGroup('mapping', "mapping files: how an LMS export's columns become API fields", [init]);
