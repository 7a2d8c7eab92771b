import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';

const home = mkdtempSync(join(tmpdir(), 'leadctl-delta-flags-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { LEADCTL_CONFIG_DIR: join(home, 'config'), LEADCTL_STATE_DIR: join(home, 'state'), HOME: home };

describe('customers batch delta flags', () => {
  it('refuses --changed-only with --full', async () => {
    const io = memoryIO({ env, tty: true });
    expect(await main(['customers', 'batch', 'x.csv', '--changed-only', '--full'], io)).toBe(2);
    expect(io.stderrText()).toMatch(/--changed-only.*cannot be used with.*--full/);
  });

  it('refuses --max-age without --changed-only, and a --max-age that is not a number of days', async () => {
    const io = memoryIO({ env, tty: true });
    expect(await main(['customers', 'batch', 'x.csv', '--max-age', '7'], io)).toBe(2);
    expect(io.stderrText()).toContain('--max-age applies to --changed-only only');
    const bad = memoryIO({ env, tty: true });
    expect(await main(['customers', 'batch', 'x.csv', '--changed-only', '--max-age', 'week'], bad)).toBe(2);
    expect(bad.stderrText()).toContain('--max-age takes a whole number from 0 to 3650');
  });

  it('state forget without a record says there is nothing to forget', async () => {
    const io = memoryIO({ env });
    expect(await main(['state', 'forget', '--yes', '-o', 'json'], io)).toBe(0);
    expect(JSON.parse(io.stdoutText())).toEqual({ profile: 'default', records_removed: [], key_removed: false });
  });

  it('state forget asks first, and refuses without a terminal unless --yes', async () => {
    const io = memoryIO({ env });
    expect(await main(['state', 'forget'], io)).toBe(2);
    expect(io.stderrText()).toMatch(/there is no terminal to ask on/);
  });
});
