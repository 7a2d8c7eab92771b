import { homedir } from 'node:os';
import { join } from 'node:path';

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
  return join(xdg && xdg.startsWith('/') ? xdg : join(home, '.local', 'state'), 'leadctl');
}
