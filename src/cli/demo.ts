import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { defineCommand, rootOf } from './command.js';
import { ExitCode } from '../errors.js';

/** Whether the program has this subcommand path (names or aliases). */
function hasCommand(root: CommandUnknownOpts, path: string[]): boolean {
  let cmd: CommandUnknownOpts | undefined = root;
  for (const name of path) {
    cmd = cmd?.commands.find((c) => c.name() === name || c.aliases().includes(name));
    if (!cmd) return false;
  }
  return true;
}

const demo = defineCommand(
  (parent) =>
    parent
      .command('demo')
      .description(
        'show the whole tool at work against a throwaway local sandbox (a few seconds; your profiles are never touched)',
      )
      .option(
        '--keep',
        'leave the sandbox running afterwards and print how to point other commands at it (Ctrl-C stops it); keep the files the steps wrote',
      )
      .addHelpText(
        'after',
        '\nSteps: log in; upload an SSN suppression list from a messy CSV; push an LMS export with its mapping;\n' +
          'post three legacy leads (accepted, rejected by the list, pending with offers) and accept an offer;\n' +
          'dry runs that pass and fail; lead ids and a CSV export; management systems.\n' +
          'The rejects and export files (made-up personal data) are removed at the end; with --keep they are kept,\n' +
          'in a temporary folder printed at the end.\n' +
          'Exit codes: 0 every step ended as intended (and, with --keep, the sandbox was stopped); 1 a step did not;\n' +
          '130/143 interrupted before the last step.',
      ),
  async (ctx, _args, opts, cmd) => {
    const { runDemo } = await import('../jobs/demo.js');
    const root = rootOf(cmd);
    // With --output json, stdout carries one summary document; the show goes to stderr.
    const json = ctx.globals.outputExplicit && (ctx.globals.output === 'json' || ctx.globals.output === 'ndjson');
    const narrate = json ? ctx.io.stderr : ctx.io.stdout;
    const { report, interrupted } = await runDemo({
      io: ctx.io,
      runCommand: ctx.runCommand,
      hasCommand: (path) => hasCommand(root, path),
      keep: opts.keep === true,
      narrate,
      color: ctx.globals.color && narrate.isTTY === true,
    });
    if (json)
      await ctx.output.write(JSON.stringify(report, null, ctx.globals.output === 'json' ? 2 : undefined) + '\n');
    // With --keep, Ctrl-C after the steps is the intended way to stop: runDemo reports no interruption then.
    if (interrupted) return interrupted === 'SIGINT' ? ExitCode.SIGINT : ExitCode.SIGTERM;
    return report.ok ? ExitCode.OK : ExitCode.UNEXPECTED;
  },
);

export const register = demo;
