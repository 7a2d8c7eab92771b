/**
 * The npm tarball (`npm pack`) installed globally, as someone with Node 24 and npm would:
 * no warning, nothing built at install, the docs the README links to shipped with it, and on an
 * old Node a refusal that fits a global install (no npx: outside the clone, `npx leadctl` would
 * fetch whatever the public registry has under that name).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const work = mkdtempSync(join(tmpdir(), 'leadctl-npm-pack-test-'));
const prefix = join(work, 'prefix');
const installedDir = join(prefix, 'lib', 'node_modules', 'leadctl');
/** npm, and every script it would start, on this Node (24), as for a user who has it. */
const env = { ...process.env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
let install: { code: number | null; output: string };

function run(command: string, args: string[], cwd = work) {
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 600_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  // dist/ is built (pretest:release); packing again would only rebuild it (prepack).
  const pack = run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], ROOT);
  if (pack.code !== 0) throw new Error(`npm pack: ${pack.stderr}`);
  const r = run('npm', [
    'install',
    '--global',
    '--prefix',
    prefix,
    '--no-audit',
    '--no-fund',
    '--prefer-offline',
    join(work, `leadctl-${version}.tgz`),
  ]);
  install = { code: r.code, output: r.stdout + r.stderr };
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm install --global of the npm tarball', () => {
  it('installs without a warning and without running any script', () => {
    expect(install.code, install.output).toBe(0);
    expect(install.output).not.toMatch(/warn/i);
    expect(install.output).not.toMatch(/allow-scripts|> leadctl@/);
    // Nothing to build with: no devDependency came along.
    expect(existsSync(join(installedDir, 'node_modules', 'typescript'))).toBe(false);
    expect(existsSync(join(installedDir, 'node_modules', 'node'))).toBe(false);
    const pkg = JSON.parse(readFileSync(join(installedDir, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const lifecycle of ['preinstall', 'install', 'postinstall', 'prepare'])
      expect(pkg.scripts[lifecycle], lifecycle).toBeUndefined();
  });

  it('runs: leadctl --version and a command that loads the CLI', () => {
    const bin = join(prefix, 'bin', 'leadctl');
    const v = run(bin, ['--version']);
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toBe(`${version}\n`);
    const help = run(bin, ['lists', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/create/);
  });

  it('ships every file of docs/ the README links to', () => {
    const readme = readFileSync(join(installedDir, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(10);
    for (const link of links) expect(existsSync(join(installedDir, link)), link).toBe(true);
    expect(readdirSync(join(installedDir, 'docs', 'commands')).length).toBeGreaterThan(5);
  });

  it('on Node 20 refuses with advice for a global install: a supported Node or the release, never npx', () => {
    // This Node, reporting itself as 20 (as test/e2e/runtime-check.test.ts does).
    const as20 = `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.19.0'})`;
    const r = spawnSync(process.execPath, ['--import', as20, join(installedDir, 'bin', 'leadctl.js'), '--version'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/is not supported; .*Make `node` on PATH one of them/);
    expect(r.stderr).toContain(`${installedDir}/docs/install.md`);
    expect(r.stderr).not.toContain('npx');
  });
});
