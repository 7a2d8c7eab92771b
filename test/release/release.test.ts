/**
 * The self-contained release as a server takes it: built by scripts/release.mjs (as `npm run
 * release` does, from the dist/ built before), checked against its SHA256SUMS, unpacked into a
 * temporary folder and run under `env -i PATH=/usr/bin:/bin HOME=…`, as cron runs it. There, a
 * `node` on PATH (this machine's is Node 20, which leadctl refuses) must play no part.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const ARCHES = ['x64', 'arm64'] as const;
const ELF_MACHINE = { x64: 62, arm64: 183 };
const DAY = '2026-11-24';

const work = mkdtempSync(join(tmpdir(), 'leadctl-release-test-'));
const out = join(work, 'out');
const unpacked = join(work, 'opt');
const name = (arch: string) => `leadctl-${version}-linux-${arch}`;
const top = (arch: string) => join(unpacked, name(arch));
/** Where an operator links the launcher: `/usr/local/bin/leadctl -> /opt/leadctl-…/bin/leadctl`. */
const linked = join(work, 'usr-local-bin', 'leadctl');
const children: ChildProcess[] = [];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Run {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 240_000, ...options });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** As cron runs a job: nothing of this test's environment but what is named here. */
function bare(home: string, command: string, args: string[], extra: string[] = [], cwd = home): Run {
  return run('/usr/bin/env', ['-i', 'PATH=/usr/bin:/bin', `HOME=${home}`, ...extra, command, ...args], { cwd });
}

function newHome(label: string): string {
  const home = join(work, `home-${label}`);
  mkdirSync(home, { recursive: true });
  return home;
}

function elfMachine(path: string): number {
  const header = Buffer.alloc(20);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt16LE(18);
}

beforeAll(() => {
  const built = run(process.execPath, [join(ROOT, 'scripts', 'release.mjs'), '--no-build', '--out', out], {
    cwd: ROOT,
  });
  if (built.code !== 0) throw new Error(`scripts/release.mjs exited ${built.code}:\n${built.stderr}`);
  mkdirSync(unpacked);
  for (const arch of ARCHES) {
    const untar = run('tar', ['-xzf', join(out, `${name(arch)}.tar.gz`), '-C', unpacked]);
    if (untar.code !== 0) throw new Error(`tar: ${untar.stderr}`);
  }
  mkdirSync(join(work, 'usr-local-bin'));
  symlinkSync(join(top('x64'), 'bin', 'leadctl'), linked);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await Promise.all(
    children.map((c) => (c.exitCode === null ? new Promise((resolve) => c.once('close', resolve)) : undefined)),
  );
  rmSync(work, { recursive: true, force: true });
});

describe('the release archives', () => {
  it('are named by version and platform, and verify against release/SHA256SUMS', () => {
    expect(readdirSync(out).sort()).toEqual(['SHA256SUMS', ...ARCHES.map((a) => `${name(a)}.tar.gz`).sort()]);
    const check = run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout.trim().split('\n').sort()).toEqual(ARCHES.map((a) => `${name(a)}.tar.gz: OK`).sort());
  });

  it.each(ARCHES)('linux-%s: one folder, its files verify against its own SHA256SUMS', (arch) => {
    const listing = run('tar', ['-tzf', join(out, `${name(arch)}.tar.gz`)])
      .stdout.trim()
      .split('\n');
    expect(listing.every((entry) => entry.startsWith(`${name(arch)}/`))).toBe(true);
    const check = run('sha256sum', ['-c', '--quiet', 'SHA256SUMS'], { cwd: top(arch) });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    const sums = readFileSync(join(top(arch), 'SHA256SUMS'), 'utf8');
    expect(sums.trim().split('\n').length).toBe(listing.filter((e) => !e.endsWith('/')).length - 1);
    for (const file of ['bin/leadctl', 'bin/leadctl.js', 'node/bin/node', 'dist/leadctl.js', 'docs/install.md'])
      expect(sums).toContain(`  ${file}\n`);
  });

  it.each(ARCHES)('linux-%s: Node.js and better-sqlite3 built for it, production dependencies only', (arch) => {
    const dir = top(arch);
    expect(elfMachine(join(dir, 'node', 'bin', 'node'))).toBe(ELF_MACHINE[arch]);
    expect(readdirSync(join(dir, 'node_modules', 'better-sqlite3', 'prebuilds'))).toEqual([`linux-${arch}.node`]);
    expect(elfMachine(join(dir, 'node_modules', 'better-sqlite3', 'prebuilds', `linux-${arch}.node`))).toBe(
      ELF_MACHINE[arch],
    );
    for (const present of ['README.md', 'docs/cron/leadctl-nightly.sh', 'fixtures/lms/export.csv', 'node/LICENSE'])
      expect(existsSync(join(dir, present)), present).toBe(true);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies)) expect(existsSync(join(dir, 'node_modules', dep)), dep).toBe(true);
    for (const dep of Object.keys(pkg.devDependencies))
      expect(existsSync(join(dir, 'node_modules', dep)), dep).toBe(false);
  });
});

describe('the unpacked linux-x64 release, run as cron runs a job', () => {
  it('runs on its own Node.js: not the Node 20 that /usr/bin/node is, nor any `node` on PATH', () => {
    const home = newHome('version');
    const r = bare(home, linked, ['--version']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${version}\n`);
    // That Node 20 would have refused (exit 2): it was not the one that ran.
    const system = run('/usr/bin/node', ['--version']);
    if (system.code === 0 && Number(system.stdout.slice(1).split('.')[0]) < 22) {
      const refused = bare(home, '/usr/bin/node', [join(top('x64'), 'bin', 'leadctl.js'), '--version']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`Run ${top('x64')}/bin/leadctl, which uses the Node.js bundled`);
    }
    // A `node` first on PATH that fails loudly is never run either.
    const fake = join(work, 'fake-node');
    mkdirSync(fake, { recursive: true });
    writeFileSync(join(fake, 'node'), '#!/bin/sh\necho "the node on PATH ran" >&2\nexit 99\n');
    chmodSync(join(fake, 'node'), 0o755);
    const onPath = run('/usr/bin/env', ['-i', `PATH=${fake}:/usr/bin:/bin`, `HOME=${home}`, linked, '--version']);
    expect(onPath.stderr).toBe('');
    expect(onPath.stdout).toBe(`${version}\n`);
    // The runtime it reports is the bundled one.
    const runtime = bare(home, join(top('x64'), 'node', 'bin', 'node'), ['--version']);
    expect(runtime.stdout).toMatch(/^v24\./);
  });

  it('runs the demo, and leaves no temporary folder behind', () => {
    const home = newHome('demo');
    const r = bare(home, linked, ['demo']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Demo finished in/);
    const root = /--rejects (\S+)\/files\/list-rejects\.csv/.exec(r.stdout)?.[1];
    expect(root).toMatch(/leadctl-demo-/);
    expect(existsSync(root!)).toBe(false);
  });

  it("runs docs/cron's nightly script against a sandbox started from the same release", async () => {
    const home = newHome('cron');
    const envFile = join(home, 'sandbox.env');
    // The sandbox, from the release, under the same bare environment, saving the profile the script uses.
    const sandbox = spawn(
      '/usr/bin/env',
      [
        '-i',
        'PATH=/usr/bin:/bin',
        `HOME=${home}`,
        linked,
        'sandbox',
        'start',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--memory',
        '--save-profile',
        'nightly',
        '--env',
        envFile,
      ],
      { cwd: home, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    children.push(sandbox);
    let sandboxErr = '';
    sandbox.stderr!.setEncoding('utf8').on('data', (d: string) => (sandboxErr += d));
    await expect
      .poll(() => existsSync(envFile) || sandbox.exitCode !== null, { timeout: 60_000, interval: 100 })
      .toBe(true);
    expect(existsSync(envFile), sandboxErr).toBe(true);
    expect(readFileSync(join(home, '.config', 'leadctl', 'config.json'), 'utf8')).toMatch(
      /"base_url": ?"http:\/\/127\.0\.0\.1:\d+"/,
    );

    mkdirSync(join(home, 'lms'));
    copyFileSync(join(ROOT, 'fixtures', 'lms', 'export.csv'), join(home, 'lms', `export-${DAY}.csv`));
    const alerts = join(home, 'alerts.txt');
    writeFileSync(join(home, 'alert.sh'), `#!/bin/sh\n{ echo "SUBJECT: $1"; cat; } >> '${alerts}'\n`);
    chmodSync(join(home, 'alert.sh'), 0o755);
    const logDir = join(home, 'log');
    // The settings docs/cron.md and docs/install.md give for the release.
    const settings = {
      LEADCTL: linked,
      NODE_DIR: join(top('x64'), 'node', 'bin'),
      PROFILE: 'nightly',
      EXPORT_DIR: join(home, 'lms'),
      EXPORT_NAME: 'export-%DAY%.csv',
      MAPPING: join(top('x64'), 'fixtures', 'lms', 'mapping.json'),
      LOG_DIR: logDir,
      RETRY_WAIT: '0',
      ALERT: join(home, 'alert.sh'),
    };
    const conf = join(home, 'nightly.conf');
    writeFileSync(
      conf,
      Object.entries(settings)
        .map(([k, v]) => `${k}='${v}'\n`)
        .join(''),
    );
    // The script as shipped in the release.
    const script = join(top('x64'), 'docs', 'cron', 'leadctl-nightly.sh');
    const r = bare(home, script, [DAY], [`LEADCTL_NIGHTLY_CONF=${conf}`]);
    const log = existsSync(join(logDir, `nightly-${DAY}.log`))
      ? readFileSync(join(logDir, `nightly-${DAY}.log`), 'utf8')
      : '';
    expect(r.code, log + r.stderr).toBe(4);
    expect(JSON.parse(readFileSync(join(logDir, `summary-${DAY}.json`), 'utf8'))).toMatchObject({
      status: 'completed_with_rejects',
      exit_code: 4,
      customers: { accepted: 9 },
    });
    expect(log).toMatch(/request 1 accepted/);
    expect(log).toMatch(/leadctl exited 4/);
    expect(readFileSync(alerts, 'utf8')).toMatch(/SUBJECT: leadctl nightly 2026-11-24: records rejected/);
    expect(readFileSync(join(logDir, `rejects-${DAY}.csv`), 'utf8')).toMatch(/^source_file,row,/);

    sandbox.kill('SIGTERM');
    const code = await new Promise((resolve) =>
      sandbox.exitCode !== null ? resolve(sandbox.exitCode) : sandbox.once('close', resolve),
    );
    expect(code).toBe(0);
  });
});
