import { defineCommand, defineGroup } from './command.js';

const ls = defineCommand(
  (systems) => systems.command('ls').alias('list').description('list the management systems'),
  async (ctx) => {
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
  },
);

export const register = defineGroup(
  'systems',
  'management systems available to the account (their ids go in management_system_id)',
  [ls],
);
