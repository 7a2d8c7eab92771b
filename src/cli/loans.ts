import type { Register } from './command.js';
import { addPushOptions, type PushFlags } from './push-options.js';

export const register: Register = (program, bind) => {
  const loans = program.command('loans').description('report loans to the loan performance service in real time');
  const push = loans
    .command('push')
    .description('upsert loans of existing customers, one request each (customer_id goes in the path)')
    .argument('<file>', 'CSV, JSON or NDJSON of loans with their customer_id; - reads one JSON record from stdin');
  addPushOptions(push, 'requests').action(
    bind<PushFlags>(async (ctx, args, opts) => {
      const { runSinglePushCommand } = await import('./push-run.js');
      return runSinglePushCommand(ctx, 'loan', args[0] as string, opts);
    }),
  );
};
