import { execFileSync } from 'node:child_process';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExitCode } from '../../errors.js';
import { type CheckResult, fail, ok, skip, warn } from './check.js';

/** The PATH cron gives a job (Vixie cron and cronie alike), unless the crontab sets another. */
export const CRON_PATH = '/usr/bin:/bin';

/** The same rule as bin/leadctl.js, which refuses other runtimes before anything loads. */
export function supportedNode(version: string): boolean {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  return (major === 22 && minor >= 13) || major >= 24;
}

const SUPPORTED = 'Node.js 22 (22.13 or later) or 24 and later';

export function checkRuntime(): CheckResult {
  const where = `Node ${process.version} (${process.platform} ${process.arch}) at ${process.execPath}`;
  if (supportedNode(process.version)) return ok('runtime', `${where}: supported`);
  return fail(
    'runtime',
    `${where}: not supported`,
    `install ${SUPPORTED} (https://nodejs.org, or \`nvm install 24\`), or run leadctl through npx in its project folder`,
    ExitCode.USAGE,
  );
}

/** This installation's bin/leadctl.js (from src/ or dist/, both three folders below the package). */
export const LEADCTL_BIN = fileURLToPath(new URL('../../../bin/leadctl.js', import.meta.url));

/** The first executable file of that name in the folders of a PATH. */
export function findOnPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there, or not executable: the shell would go on to the next folder too.
    }
  }
  return undefined;
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** `node --version` of another Node (this process's own is known); undefined when it does not answer. */
function versionOf(node: string, path: string): string | undefined {
  if (real(node) === real(process.execPath)) return process.version;
  try {
    const out = execFileSync(node, ['--version'], {
      encoding: 'utf8',
      timeout: 5000,
      env: { PATH: path },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return /^v\d+\.\d+\.\d+/.exec(out.trim())?.[0];
  } catch {
    return undefined;
  }
}

/**
 * Would a crontab line `leadctl …` work: does cron's PATH find a leadctl, and a Node that runs it
 * (bin/leadctl.js starts with `#!/usr/bin/env node`, so it is the PATH's node that runs it)?
 */
export function checkCronPath(cronPath: string, currentPath: string | undefined): CheckResult {
  if (process.platform === 'win32') return skip('cron-path', 'no cron on Windows');
  const node = findOnPath('node', cronPath);
  const leadctl = findOnPath('leadctl', cronPath);
  const nodeVersion = node ? versionOf(node, cronPath) : undefined;
  const nodeOk = nodeVersion !== undefined && supportedNode(nodeVersion);
  const ours = leadctl !== undefined && real(leadctl) === real(LEADCTL_BIN);

  const parts: string[] = [];
  if (leadctl) parts.push(`leadctl at ${leadctl}${ours ? '' : ' (another installation than this one)'}`);
  else parts.push('no leadctl');
  if (node)
    parts.push(
      `node ${nodeVersion ?? '(no version: it did not answer)'} at ${node}${nodeOk ? '' : nodeVersion ? ' (not supported)' : ''}`,
    );
  else parts.push('no node');
  const value = `cron's PATH ${cronPath} finds ${parts.join(' and ')}`;
  if (leadctl && nodeOk) return ok('cron-path', value);

  // The command that works whatever the PATH: this Node and this leadctl, by their full paths.
  const onPath = currentPath ? findOnPath('leadctl', currentPath) : undefined;
  const command = onPath && real(onPath) === real(LEADCTL_BIN) ? onPath : LEADCTL_BIN;
  const hint =
    `in the crontab call \`${process.execPath} ${command} …\`, or set PATH=${dirname(process.execPath)}:${cronPath} ` +
    'at its top (docs/cron.md; the nightly script sets it from NODE_DIR); check a PATH with `leadctl doctor --cron-path PATH`';
  return warn('cron-path', value, hint);
}
