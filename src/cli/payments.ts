import type { Register } from './command.js';
import { addPushOptions, type PushFlags } from './push-options.js';

export const register: Register = (program, bind) => {
  const payments = program
    .command('payments')
    .description('report payments to the loan performance service in real time');
  const push = payments
    .command('push')
    .description('upsert payments of existing loans, one request each (bank routing and account numbers allowed here)')
    .argument(
      '<file>',
      'CSV, JSON or NDJSON of payments with customer_id and loan_id; - reads one JSON record from stdin',
    );
  addPushOptions(push, 'requests').action(
    bind<PushFlags>(async (ctx, args, opts) => {
      const { runSinglePushCommand } = await import('./push-run.js');
      return runSinglePushCommand(ctx, 'payment', args[0] as string, opts);
    }),
  );
};
