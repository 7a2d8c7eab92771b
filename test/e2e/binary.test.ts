import { describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';

describe('the leadctl binary', () => {
  it('--version exits 0 and prints a semantic version', async () => {
    const r = await runBinary(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('an unknown command exits 2 with the error on stderr only', async () => {
    const r = await runBinary(['no-such-command']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command|too many arguments/);
    expect(r.stdout).toBe('');
  });
});

describe('a reader that goes away (leadctl … | head)', () => {
  it('ends quietly with exit 0, no EPIPE stack trace', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('../helpers/binary.js');
    const child = spawn(process.execPath, [BIN, 'completion', 'bash'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Close our end before leadctl writes: its first write meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  });
});
