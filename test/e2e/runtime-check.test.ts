import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/binary.js';

/** Runs the shim on this Node, but with `process.versions.node` reporting `version`. */
function runAs(version: string, args: string[]) {
  const preload = `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`;
  const r = spawnSync(process.execPath, ['--import', preload, BIN, ...args], {
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
