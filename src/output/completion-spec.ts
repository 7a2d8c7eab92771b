import type { Argument, CommandUnknownOpts as Command, Option } from '@commander-js/extra-typings';

/** What a shell should offer for a value: fixed words, file names, directory names, or nothing. */
export type ValueCompletion =
  | { kind: 'words'; words: string[] }
  | { kind: 'files' }
  | { kind: 'dirs' }
  | { kind: 'none' };

export interface OptionSpec {
  /** Every spelling, e.g. ['-o', '--output']. */
  names: string[];
  description: string;
  /** The option consumes the next word (or `--opt=value`). */
  takesValue: boolean;
  /** Subcommands accept it too (everything but --help and --version). */
  inherited: boolean;
  value: ValueCompletion;
}

export interface CommandSpec {
  /** Names from the root, e.g. ['lists', 'create']; [] for the program itself. */
  path: string[];
  name: string;
  aliases: string[];
  description: string;
  /** Own options plus those inherited from every ancestor (commander accepts them after the subcommand). */
  options: OptionSpec[];
  /** Options this command defines; those with `inherited` true apply to its subcommands too. */
  ownOptions: OptionSpec[];
  commands: CommandSpec[];
  /** What to offer for positional arguments. */
  operands: ValueCompletion;
}

export interface SpecHints {
  /** Values for options by long name, when commander has no choices for them (e.g. --type: the list-type aliases). */
  optionValues?: Record<string, string[]>;
}

const FILE_PLACEHOLDER = /file|csv|json|path/i;
const DIR_PLACEHOLDER = /dir/i;
// Each command has its own --help; --version belongs to the program alone.
const NOT_INHERITED = new Set(['--help', '--version']);

/**
 * Reads the commander program tree into a plain description every shell generator shares,
 * so completion follows the commands as they are registered rather than a list kept by hand.
 */
export function completionSpec(program: Command, hints: SpecHints = {}): CommandSpec {
  return walk(program, [], [], hints);
}

function walk(cmd: Command, path: string[], inherited: OptionSpec[], hints: SpecHints): CommandSpec {
  const help = cmd.createHelp();
  const own = help.visibleOptions(cmd).map((o) => optionSpec(o, hints));
  const ownNames = new Set(own.flatMap((o) => o.names));
  const options = [...own, ...inherited.filter((o) => !o.names.some((n) => ownNames.has(n)))];
  const passDown = options.filter((o) => o.inherited);
  const commands = help.visibleCommands(cmd).map((sub) => walk(sub, [...path, sub.name()], passDown, hints));
  // `leadctl lists help create`: the implicit help command takes a sibling's name.
  const helpCommand = commands.find((c) => c.name === 'help' && c.commands.length === 0);
  if (helpCommand)
    helpCommand.operands = { kind: 'words', words: commands.filter((c) => c !== helpCommand).map((c) => c.name) };
  return {
    path,
    name: cmd.name(),
    aliases: cmd.aliases(),
    description: firstSentence(cmd.description()),
    options,
    ownOptions: own,
    commands,
    operands: operandCompletion(cmd, commands),
  };
}

function optionSpec(option: Option, hints: SpecHints): OptionSpec {
  const names = [option.short, option.long].filter((n): n is string => typeof n === 'string');
  const takesValue = option.required || option.optional;
  return {
    names,
    description: firstSentence(option.description),
    takesValue,
    inherited: !names.some((n) => NOT_INHERITED.has(n)),
    value: takesValue ? optionValues(option, hints) : { kind: 'none' },
  };
}

function optionValues(option: Option, hints: SpecHints): ValueCompletion {
  if (option.argChoices?.length) return { kind: 'words', words: [...option.argChoices] };
  const hinted = option.long ? hints.optionValues?.[option.long] : undefined;
  if (hinted) return { kind: 'words', words: [...hinted] };
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1] ?? '';
  if (DIR_PLACEHOLDER.test(placeholder)) return { kind: 'dirs' };
  if (FILE_PLACEHOLDER.test(placeholder)) return { kind: 'files' };
  return { kind: 'none' };
}

function operandCompletion(cmd: Command, commands: CommandSpec[]): ValueCompletion {
  if (commands.length > 0) return { kind: 'none' };
  const args: readonly Argument[] = cmd.registeredArguments;
  const choices = args.flatMap((a) => a.argChoices ?? []);
  if (choices.length > 0) return { kind: 'words', words: choices };
  if (args.some((a) => FILE_PLACEHOLDER.test(a.name()))) return { kind: 'files' };
  return { kind: 'none' };
}

/** Help descriptions can run long; a shell menu needs the first clause. */
function firstSentence(text: string): string {
  const line = text
    .split('\n')[0]!
    .replace(/\s*\([^()]*\)/g, '')
    .trim();
  const cut = line.search(/[.;]\s/);
  const short = cut > 0 ? line.slice(0, cut) : line;
  return short.length > 90 ? short.slice(0, 87).trimEnd() + '...' : short;
}

/** Every command in the tree, depth first (the root first). */
export function allCommands(spec: CommandSpec): CommandSpec[] {
  return [spec, ...spec.commands.flatMap(allCommands)];
}
