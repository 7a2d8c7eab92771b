import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { packageVersion } from '../../src/version.js';
import { memoryIO } from '../helpers/memory-io.js';

describe('main(argv, io)', () => {
  it('prints the version from package.json and returns 0', async () => {
    const io = memoryIO();
    expect(await main(['--version'], io)).toBe(0);
    expect(io.stdoutText().trim()).toBe(packageVersion());
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('prints help on stdout with the global options', async () => {
    const io = memoryIO();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.stdoutText()).toContain('--output <format>');
    expect(io.stdoutText()).toContain('--quiet');
  });

  it('returns 2 for an unknown option and says so on stderr', async () => {
    const io = memoryIO({ tty: true });
    expect(await main(['--no-such-flag'], io)).toBe(2);
    expect(io.stderrText()).toContain("unknown option '--no-such-flag'");
    expect(io.stdoutText()).toBe('');
  });

  it('prints a JSON error document on stdout for usage errors with --output json', async () => {
    const io = memoryIO();
    expect(await main(['--output', 'json', '--no-such-flag'], io)).toBe(2);
    const doc = JSON.parse(io.stdoutText());
    expect(doc.error.exit_code).toBe(2);
    expect(doc.error.code).toBe('usage');
  });

  it('rejects an output format that does not exist', async () => {
    const io = memoryIO();
    expect(await main(['--output', 'xml', '--version'], io)).toBe(2);
  });
});
