import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The user's data directory for leadctl: $XDG_DATA_HOME/leadctl (default ~/.local/share/leadctl)
 * on Linux, ~/Library/Application Support/leadctl on macOS, %LOCALAPPDATA%\leadctl on Windows.
 * The sandbox keeps its store in a `sandbox` folder inside it.
 */
export function defaultDataDir(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  let base: string;
  if (platform === 'darwin') base = join(home, 'Library', 'Application Support', 'leadctl');
  else if (platform === 'win32') base = join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'leadctl');
  else base = join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'leadctl');
  return join(base, 'sandbox');
}
