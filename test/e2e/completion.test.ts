import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-e2e-completion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('leadctl completion (the built binary)', () => {
  it('prints a bash script that bash accepts and that completes the real commands', async () => {
    const r = await runBinary(['completion', 'bash']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('complete -F _leadctl leadctl');
    const check = spawnSync('bash', ['--norc', '--noprofile', '-n'], { input: r.stdout, encoding: 'utf8' });
    expect(check.status).toBe(0);
    const file = join(dir, 'leadctl.bash');
    writeFileSync(file, r.stdout);
    const run = spawnSync(
      'bash',
      [
        '--norc',
        '--noprofile',
        '-c',
        `source '${file}'; COMP_WORDS=(leadctl lists create --type ""); COMP_CWORD=4; _leadctl; echo "\${COMPREPLY[*]}"`,
      ],
      {
        encoding: 'utf8',
      },
    );
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('ssn ssn4 zip phone email routing employer affiliate');
  });

  it('prints zsh and fish scripts', async () => {
    const zsh = await runBinary(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout.startsWith('#compdef leadctl\n')).toBe(true);
    const fish = await runBinary(['completion', 'fish']);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain("complete -c leadctl -n '__leadctl_at \\'lists create\\'' -l 'type'");
  });

  it('refuses an unknown shell with a usage error', async () => {
    const r = await runBinary(['completion', 'powershell']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bash, zsh, fish/);
    expect(r.stdout).toBe('');
  });
});
