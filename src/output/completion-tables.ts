import type { CommandSpec, OptionSpec, ValueCompletion } from './completion-spec.js';
import { allCommands } from './completion-spec.js';

/**
 * Lookup functions shared by the bash and zsh scripts (both read POSIX `case`): they answer,
 * for a command path such as "lists create", which words are its subcommands, which options
 * take a value, and what to offer for a value.
 */

/** A word quoted for bash and zsh. */
export function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export const pathKey = (spec: CommandSpec): string => spec.path.join(' ');

/** `w word...` for fixed words, `f` for files, `d` for directories, nothing otherwise. */
export function valueCode(value: ValueCompletion): string | undefined {
  switch (value.kind) {
    case 'words':
      return `w ${value.words.join(' ')}`;
    case 'files':
      return 'f';
    case 'dirs':
      return 'd';
    case 'none':
      return undefined;
  }
}

/** `prefix_child PATH WORD` prints the canonical name of the subcommand WORD (or an alias of it) under PATH. */
export function childFunction(prefix: string, root: CommandSpec): string {
  const arms: string[] = [];
  for (const parent of allCommands(root)) {
    for (const child of parent.commands) {
      const patterns = [child.name, ...child.aliases].map((word) => shQuote(`${pathKey(parent)}/${word}`));
      arms.push(`    ${patterns.join('|')}) echo ${shQuote(child.name)} ;;`);
    }
  }
  return [`${prefix}_child() {`, `  case "$1/$2" in`, ...arms, '  esac', '}'].join('\n');
}

/**
 * Case patterns matching "PATH|NAME" wherever the option applies: at the command that defines
 * it and, unless it is --help or --version, under every subcommand of it.
 */
export function scopePatterns(cmd: CommandSpec, option: OptionSpec): string[] {
  const at = pathKey(cmd);
  return option.names.flatMap((name) => {
    if (!option.inherited) return [shQuote(`${at}|${name}`)];
    if (at === '') return [`*${shQuote(`|${name}`)}`];
    return [shQuote(`${at}|${name}`), `${shQuote(`${at} `)}*${shQuote(`|${name}`)}`];
  });
}

/** Own options of every command, deepest first, so that a subcommand's option shadows an ancestor's of the same name. */
export function optionsByScope(root: CommandSpec): Array<[CommandSpec, OptionSpec]> {
  return allCommands(root)
    .sort((a, b) => b.path.length - a.path.length)
    .flatMap((cmd) => cmd.ownOptions.map((option) => [cmd, option] as [CommandSpec, OptionSpec]));
}

/** `prefix_takes_value PATH OPTION` succeeds when OPTION consumes the next word under PATH. */
export function takesValueFunction(prefix: string, root: CommandSpec): string {
  const scoped = optionsByScope(root);
  const valueNames = new Set(scoped.flatMap(([, option]) => (option.takesValue ? option.names : [])));
  // A flag is listed when it takes a value, or when it is a plain flag that shadows a same-named value option.
  const arms = scoped
    .filter(([, option]) => option.takesValue || option.names.some((n) => valueNames.has(n)))
    .map(([cmd, option]) => `    ${scopePatterns(cmd, option).join('|')}) return ${option.takesValue ? 0 : 1} ;;`);
  return [`${prefix}_takes_value() {`, `  case "$1|$2" in`, ...arms, '  esac', '  return 1', '}'].join('\n');
}

/** `prefix_values PATH OPTION` prints the value code of OPTION under PATH. */
export function valuesFunction(prefix: string, root: CommandSpec): string {
  const scoped = optionsByScope(root).filter(([, option]) => option.takesValue);
  const codedNames = new Set(
    scoped.flatMap(([, option]) => (valueCode(option.value) === undefined ? [] : option.names)),
  );
  // Options without suggestions are listed only to shadow a same-named option that has some.
  const arms = scoped
    .filter(([, option]) => option.names.some((n) => codedNames.has(n)))
    .map(([cmd, option]) => {
      const code = valueCode(option.value);
      return `    ${scopePatterns(cmd, option).join('|')}) ${code === undefined ? ':' : `echo ${shQuote(code)}`} ;;`;
    });
  return [`${prefix}_values() {`, `  case "$1|$2" in`, ...arms, '  esac', '}'].join('\n');
}

/** `prefix_operands PATH` prints the value code of PATH's positional arguments. */
export function operandsFunction(prefix: string, root: CommandSpec): string {
  const arms: string[] = [];
  for (const cmd of allCommands(root)) {
    const code = valueCode(cmd.operands);
    if (code !== undefined) arms.push(`    ${shQuote(pathKey(cmd))}) echo ${shQuote(code)} ;;`);
  }
  return [`${prefix}_operands() {`, `  case "$1" in`, ...arms, '  esac', '}'].join('\n');
}
