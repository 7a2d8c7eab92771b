import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { ExitCode } from '../../errors.js';
import { packagePath } from '../../version.js';
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

/** This installation's bin/leadctl.js. */
export const LEADCTL_BIN = packagePath('bin/leadctl.js');

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
 * How a `leadctl` file runs: bin/leadctl.js (`#!/usr/bin/env node`) on whatever node the PATH has;
 * the self-contained release's launcher (bin/leadctl, sh) on the Node bundled beside it.
 */
function bundledNode(leadctl: string): string | undefined {
  const file = real(leadctl);
  let head = '';
  try {
    head = readFileSync(file, 'utf8').slice(0, 200);
  } catch {
    return undefined;
  }
  if (!head.startsWith('#!') || /^#![^\n]*\bnode\b/.test(head)) return undefined;
  const candidate = join(dirname(dirname(file)), 'node', 'bin', 'node');
  return existsSync(candidate) ? candidate : undefined;
}

/** This installation's leadctl: bin/leadctl.js itself, or the release's launcher beside it. */
function isThisInstallation(leadctl: string): boolean {
  const file = real(leadctl);
  return file === real(LEADCTL_BIN) || file === real(join(dirname(LEADCTL_BIN), 'leadctl'));
}

/**
 * Would a crontab line `leadctl …` work: does cron's PATH find a leadctl, and a Node that runs it
 * (bin/leadctl.js starts with `#!/usr/bin/env node`, so it is the PATH's node that runs it; the
 * release's launcher runs its own)?
 */
export function checkCronPath(cronPath: string, currentPath: string | undefined): CheckResult {
  if (process.platform === 'win32') return skip('cron-path', 'no cron on Windows');
  const leadctl = findOnPath('leadctl', cronPath);
  const bundled = leadctl ? bundledNode(leadctl) : undefined;
  const node = bundled ?? findOnPath('node', cronPath);
  const nodeVersion = node ? versionOf(node, cronPath) : undefined;
  const nodeOk = nodeVersion !== undefined && supportedNode(nodeVersion);

  const parts: string[] = [];
  if (leadctl)
    parts.push(`leadctl at ${leadctl}${isThisInstallation(leadctl) ? '' : ' (another installation than this one)'}`);
  else parts.push('no leadctl');
  const version = `${nodeVersion ?? '(no version: it did not answer)'}${nodeOk ? '' : nodeVersion ? ' (not supported)' : ''}`;
  if (bundled) parts.push(`its own node ${version} at ${bundled}`);
  else if (node) parts.push(`node ${version} at ${node}`);
  else parts.push('no node');
  const value = `cron's PATH ${cronPath} finds ${parts.join(' and ')}`;
  if (leadctl && nodeOk) return ok('cron-path', value);

  // The command that works whatever the PATH: the release's launcher, or this Node and this leadctl.
  const launcher = join(dirname(LEADCTL_BIN), 'leadctl');
  const onPath = currentPath ? findOnPath('leadctl', currentPath) : undefined;
  let command: string;
  if (existsSync(launcher) && bundledNode(launcher)) command = onPath && isThisInstallation(onPath) ? onPath : launcher;
  else command = `${process.execPath} ${onPath && real(onPath) === real(LEADCTL_BIN) ? onPath : LEADCTL_BIN}`;
  // A PATH that would do: the folders of what it lacks, each once. Without a `leadctl` on any PATH
  // (a checkout run as bin/leadctl.js), no PATH finds one: the command above is the way.
  // In front, so that they win over what cron's PATH finds first (an older node in /usr/bin).
  const add = [
    ...(nodeOk ? [] : [dirname(process.execPath)]),
    ...(leadctl ? [] : onPath ? [dirname(onPath)] : []),
  ].filter((d, i, all) => all.indexOf(d) === i);
  const rest = cronPath.split(':').filter((d) => !add.includes(d));
  const path = (leadctl || onPath) && add.length ? `, or set PATH=${[...add, ...rest].join(':')} at its top` : '';
  const hint =
    `in the crontab call \`${command} …\`${path} ` +
    '(docs/cron.md; the nightly script sets PATH from NODE_DIR); check a PATH with `leadctl doctor --cron-path PATH`';
  return warn('cron-path', value, hint);
}
