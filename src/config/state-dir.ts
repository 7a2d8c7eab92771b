import { homedir } from 'node:os';
import { join } from 'node:path';
import { ExitCode, LeadctlError } from '../errors.js';

/**
 * leadctl's state folder (journals of pushes, lock files): LEADCTL_STATE_DIR, else
 * $XDG_STATE_HOME/leadctl, else ~/.local/state/leadctl. State is not configuration: deleting it
 * loses only the ability to resume an interrupted push.
 */
export function stateDir(env: Record<string, string | undefined>, home: string = env.HOME || homedir()): string {
  const override = env.LEADCTL_STATE_DIR;
  if (override && override.trim() !== '') return override;
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec says relative values are invalid and must be ignored.
  return join(xdg?.startsWith('/') ? xdg : join(home, '.local', 'state'), 'leadctl');
}

/** Errors of the file system that the operator fixes (permissions, a full or read-only disk), not bugs. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'ENOTDIR', 'EEXIST']);

/**
 * A state folder that cannot be written is a setup problem (exit 2, with the way out), not a bug
 * (exit 1): cron users meet it the first night, when the job runs as another user.
 */
export function stateDirError(err: unknown, dir: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !UNWRITABLE.has(code)) return err;
  return new LeadctlError(
    'state_dir',
    ExitCode.USAGE,
    `cannot write the state folder ${dir}: ${(err as Error).message}`,
    {
      hint: 'make it writable by the user running leadctl, or set LEADCTL_STATE_DIR to a folder it can write (push journals and locks live there)',
      cause: err,
    },
  );
}
