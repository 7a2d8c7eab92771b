import { homedir } from 'node:os';
import { join } from 'node:path';

export const APP_NAME = 'leadctl';
export const CONFIG_FILE_NAME = 'config.json';

/**
 * The platform's standard configuration folder for leadctl, computed here rather than by conf
 * so that it follows the IO's environment (tests) and carries no `-nodejs` suffix.
 * LEADCTL_CONFIG_DIR wins; then XDG on Linux and other Unixes, ~/Library/Preferences on macOS,
 * %APPDATA% on Windows (the places conf's env-paths would choose, minus the suffix).
 */
export function configDir(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
  home: string = env.HOME || homedir(),
): string {
  const override = env.LEADCTL_CONFIG_DIR;
  if (override && override.trim() !== '') return override;
  if (platform === 'darwin') return join(home, 'Library', 'Preferences', APP_NAME);
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), APP_NAME, 'Config');
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec says relative values are invalid and must be ignored.
  return join(xdg?.startsWith('/') ? xdg : join(home, '.config'), APP_NAME);
}

export function configFilePath(dir: string): string {
  return join(dir, CONFIG_FILE_NAME);
}
