import type { CommanderError, CommandUnknownOpts } from '@commander-js/extra-typings';
import { COMMAND_EXAMPLES } from './examples.js';

/**
 * The `Hint:` of every usage error: what to type instead. Commander says what was wrong; the hint
 * shows the usage line and a real example (from the command's help), the commands of a group, or
 * the options of a command, so that the next attempt does not need `--help`.
 */

export function commandPath(cmd: CommandUnknownOpts | undefined): string {
  const names: string[] = [];
  for (let c: CommandUnknownOpts | null | undefined = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ') || 'leadctl';
}

/** The last resort, and the tail of every hint. */
export function helpHint(cmd: CommandUnknownOpts | undefined): string {
  return `run \`${commandPath(cmd)} --help\` for usage and examples`;
}

/** The first example of the command's help, without its note in parentheses. */
function exampleOf(cmd: CommandUnknownOpts): string | undefined {
  const path = commandPath(cmd).split(' ').slice(1).join(' ');
  return COMMAND_EXAMPLES[path]?.[0]?.replace(/\s{2,}\(.*\)$/, '');
}

function visibleCommands(cmd: CommandUnknownOpts): string[] {
  return cmd.commands.filter((c) => c.name() !== 'help').map((c) => c.name());
}

/** Options listed in a hint only when there are few: more are for `--help`. */
const OPTIONS_LISTED = 8;

/** The hint for an error commander raised while parsing (`err.code` is commander's). */
export function commanderHint(err: CommanderError, cmd: CommandUnknownOpts | undefined): string {
  const help = helpHint(cmd);
  if (!cmd) return help;
  const path = commandPath(cmd);
  switch (err.code) {
    case 'commander.help': {
      // A group named without its command: its help was just shown.
      const example = exampleOf(cmd) ?? `${path} ${visibleCommands(cmd)[0] ?? ''}`.trimEnd();
      return `add one of the commands above, e.g. \`${example}\``;
    }
    case 'commander.unknownCommand': {
      const names = visibleCommands(cmd);
      return names.length ? `the commands of \`${path}\` are ${names.join(', ')}; ${help}` : help;
    }
    case 'commander.unknownOption': {
      // Commander's "did you mean" is in the message already when an option is close.
      if (/did you mean/i.test(err.message)) return help;
      const own = cmd.options.filter((o) => !o.hidden && !o.negate).map((o) => o.long ?? o.short ?? '');
      if (own.length === 0) return `\`${path}\` takes no options of its own (only the global ones); ${help}`;
      if (own.length <= OPTIONS_LISTED)
        return `the options of \`${path}\` are ${own.join(', ')} (and the global ones); ${help}`;
      return help;
    }
    default: {
      // Missing or extra arguments, a missing or refused option value, options that conflict.
      const example = exampleOf(cmd);
      return `usage: ${path} ${cmd.usage()}${example ? `; e.g. ${example}` : ''}; ${help}`;
    }
  }
}
