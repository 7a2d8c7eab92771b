import type { Command } from 'commander';
import type { Handler, Register } from './command.js';

const ls: Handler = async (ctx) => {
  const client = await ctx.api();
  const systems = await client.managementSystems();
  await ctx.output.list(
    systems,
    [
      { key: 'id', header: 'ID', align: 'right' },
      { key: 'name', header: 'Name' },
    ],
    { empty: 'No management systems are available to this account.' },
  );
};

export const register: Register = (program: Command, bind) => {
  const systems = program
    .command('systems')
    .description('management systems available to the account (their ids go in management_system_id)');
  systems.command('ls').alias('list').description('list the management systems').action(bind(ls));
};
