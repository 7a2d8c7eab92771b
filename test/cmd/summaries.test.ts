import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';
import { startSandboxInProcess } from '../helpers/sandbox.js';

// A clock that does not move: every run takes "0 s", the case the summaries used to get wrong.
const NOW = new Date();
let sandbox: Awaited<ReturnType<typeof startSandboxInProcess>>;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
  dir = mkdtempSync(join(tmpdir(), 'leadctl-cmd-summaries-'));
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

function io(stdin?: string) {
  return memoryIO({
    stdin,
    cwd: dir,
    now: () => NOW,
    env: {
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
      LEADCTL_CONFIG_DIR: join(dir, 'config'),
    },
  });
}

describe('summary lines of quick runs', () => {
  it('dry-run --file: one row in the singular, and no "in 0 s"', async () => {
    const run = io('ssn\n345678901\n');
    const code = await main(['-o', 'table', 'dry-run', '--file', '-', '--out', 'results.csv'], run);
    expect(run.stderrText() + run.stdoutText()).toContain('1 row read from stdin in under 0.1 s: ');
    expect(code).toBe(0);
  });

  it('leads export: no "in 0 s"', async () => {
    const run = io();
    const code = await main(
      ['-o', 'table', 'leads', 'export', '--date', NOW.toISOString().slice(0, 10), '--out', 'leads.csv'],
      run,
    );
    expect(code).toBe(0);
    expect(run.stderrText() + run.stdoutText()).toMatch(
      /Wrote 0 of 0 leads \(\d+ columns\) to leads\.csv in under 0\.1 s\./,
    );
  });
});
