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
