import type { Command, CommandUnknownOpts, OptionValues } from '@commander-js/extra-typings';
import type { CommandContext } from './context.js';

/**
 * A command's body: gets the context, its positional arguments and its own options, typed from the
 * command's declaration, and returns an exit code (undefined = 0). It throws LeadctlError for failures.
 */
export type Handler<A extends unknown[], O extends OptionValues> = (
  ctx: CommandContext,
  args: A,
  opts: O,
  cmd: Command<A, O>,
) => Promise<number | void>;

/** Turns a Handler into a commander action; supplied by `main`. */
export type Bind = <A extends unknown[], O extends OptionValues>(
  handler: Handler<A, O>,
) => (this: Command<A, O>, ...commanderArgs: [...A, O, Command<A, O>]) => Promise<void>;

/** Adds a command (or a group of them) under `parent`. Each command group module exports one. */
export type Register = (parent: Command, bind: Bind) => void;

/**
 * The one way to define a command: its declaration (name, arguments, options: commander's
 * builder) and its handler side by side, the handler's `args` and `opts` typed from the declaration.
 *
 * ```ts
 * const get = defineCommand(
 *   (lists) => lists.command('get').argument('<id>', 'list id', listId),
 *   async (ctx, [id]) => { ... }, // id: number
 * );
 * ```
 */
export function defineCommand<A extends unknown[], O extends OptionValues>(
  declare: (parent: Command) => Command<A, O>,
  handler: Handler<A, O>,
): Register {
  return (parent, bind) => {
    declare(parent).action(bind(handler));
  };
}

/** A command group: `name`, its description, and its commands in help order. */
export function defineGroup(name: string, description: string, commands: Register[]): Register {
  return (program, bind) => {
    const group = program.command(name).description(description);
    for (const register of commands) register(group, bind);
  };
}

/** The program a command belongs to (the completion script and the demo look at every command). */
export function rootOf(cmd: CommandUnknownOpts): CommandUnknownOpts {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root;
}
