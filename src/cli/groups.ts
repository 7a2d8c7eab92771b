import type { Register } from './command.js';

/**
 * Every command group, in help order. Group modules must stay light at import time
 * (commander only): they load their implementation inside the action, so that
 * `leadctl --version` and `--help` pay for commander alone.
 */
export const commandGroups: Register[] = [];
