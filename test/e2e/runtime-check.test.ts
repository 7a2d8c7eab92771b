import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/binary.js';

/** Runs the shim on this Node, but with `process.versions.node` reporting `version`. */
function runAs(version: string, args: string[], bin = BIN) {
  const preload = `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`;
  const r = spawnSync(process.execPath, ['--import', preload, bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

describe('the runtime check in bin/leadctl.js', () => {
  it.each(['20.19.0', '18.20.4', '22.12.0', '23.11.1'])(
    'refuses Node %s with one line and exit 2, before loading the CLI',
    (version) => {
      for (const args of [['--version'], ['systems', 'ls']]) {
        const r = runAs(version, args);
        expect(r.code).toBe(2);
        expect(r.stdout).toBe('');
        const lines = r.stderr.trimEnd().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`Node.js ${version} is not supported`);
        expect(lines[0]).toMatch(/22 \(22\.13 or later\) and 24/);
      }
    },
  );

  it.each(['22.13.0', '22.23.3', '24.0.0', '26.1.0'])('runs on Node %s', (version) => {
    const r = runAs(version, ['--version']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('the refusal says what to do for the way leadctl was installed', () => {
  const root = mkdtempSync(join(tmpdir(), 'leadctl-runtime-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  /** bin/leadctl.js and package.json in a folder laid out as `install` leaves them, with `extra` files. */
  function installed(name: string, extra: string[]): string {
    const folder = join(root, name);
    mkdirSync(join(folder, 'bin'), { recursive: true });
    copyFileSync(BIN, join(folder, 'bin', 'leadctl.js'));
    copyFileSync(join(dirname(BIN), '..', 'package.json'), join(folder, 'package.json'));
    for (const file of extra) {
      mkdirSync(dirname(join(folder, file)), { recursive: true });
      writeFileSync(join(folder, file), '');
    }
    return folder;
  }

  it('in a clone: npx in its project folder, which runs the Node.js 24 npm install put there', () => {
    const r = runAs('20.19.0', ['--version']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`In its project folder ${join(dirname(BIN), '..')}, run it as \`npx leadctl …\``);
  });

  it('a global npm install (no devDependencies): a supported Node.js on PATH, or the release; never npx', () => {
    const folder = installed('global', []);
    const r = runAs('20.19.0', ['--version'], join(folder, 'bin', 'leadctl.js'));
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/Make `node` on PATH one of them .*nvm install 24/);
    expect(r.stderr).toContain(`self-contained release, which brings its own Node.js (${folder}/docs/install.md)`);
    expect(r.stderr).not.toContain('npx');
  });

  it('the release, run on another Node.js than its own: its bin/leadctl', () => {
    const folder = installed('release', ['node/bin/node']);
    const r = runAs('18.20.4', ['--version'], join(folder, 'bin', 'leadctl.js'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`Run ${folder}/bin/leadctl, which uses the Node.js bundled with this release.`);
    expect(r.stderr).not.toContain('npx');
  });
});
