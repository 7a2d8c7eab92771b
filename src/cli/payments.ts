import { defineCommand, defineGroup } from './command.js';
import { addPushOptions } from './push-options.js';

const push = defineCommand(
  (payments) =>
    addPushOptions(
      payments
        .command('push')
        .description(
          'upsert payments of existing loans, one request each (bank routing and account numbers allowed here)',
        )
        .argument(
          '<file>',
          'CSV, JSON or NDJSON of payments with customer_id and loan_id; - reads one JSON record from stdin',
        ),
      'requests',
    ),
  async (ctx, [file], opts) => (await import('./push-run.js')).runSinglePushCommand(ctx, 'payment', file, opts),
);

export const register = defineGroup('payments', 'report payments to the loan performance service in real time', [push]);
