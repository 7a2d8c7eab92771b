import type { Command } from 'commander';
import type { CommandContext } from './context.js';

/**
 * A command's body: gets the context, its positional arguments and its own options,
 * and returns an exit code (undefined = 0). It throws LeadctlError for failures.
 */
export type Handler<O = Record<string, any>> = (
  ctx: CommandContext,
  args: any[],
  opts: O,
  cmd: Command,
) => Promise<number | void>;

/** Turns a Handler into a commander action; supplied by `main`. */
export type Bind = <O = Record<string, any>>(handler: Handler<O>) => (...commanderArgs: any[]) => Promise<void>;

/** Each command group module exports one of these. */
export type Register = (program: Command, bind: Bind) => void;
