import { defineCommand, defineGroup } from './command.js';
import { addPushOptions } from './push-options.js';

const push = defineCommand(
  (loans) =>
    addPushOptions(
      loans
        .command('push')
        .description('upsert loans of existing customers, one request each (customer_id goes in the path)')
        .argument('<file>', 'CSV, JSON or NDJSON of loans with their customer_id; - reads one JSON record from stdin'),
      'requests',
    ),
  async (ctx, [file], opts) => (await import('./push-run.js')).runSinglePushCommand(ctx, 'loan', file, opts),
);

export const register = defineGroup('loans', 'report loans to the loan performance service in real time', [push]);
