import { register as auth } from './auth.js';
import type { Register } from './command.js';
import { register as completion } from './completion.js';
import { register as demo } from './demo.js';
import { register as doctor } from './doctor.js';
import { register as customers } from './customers.js';
import { register as dryRun } from './dry-run.js';
import { register as leads } from './leads.js';
import { register as legacy } from './legacy.js';
import { register as lists } from './lists.js';
import { register as loans } from './loans.js';
import { register as mapping } from './mapping.js';
import { register as payments } from './payments.js';
import { register as sandbox } from './sandbox.js';
import { register as state } from './state.js';
import { register as systems } from './systems.js';

/**
 * Every command group, in help order. Group modules must stay light at import time
 * (commander only): they load their implementation inside the action, so that
 * `leadctl --version` and `--help` pay for commander alone.
 */
export const commandGroups: Register[] = [
  auth,
  systems,
  lists,
  customers,
  loans,
  payments,
  mapping,
  leads,
  dryRun,
  legacy,
  state,
  doctor,
  sandbox,
  demo,
  completion,
];
