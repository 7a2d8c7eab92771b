import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/binary.js';
import { startSandboxWithEnv } from '../helpers/sandbox.js';
import { ROOT } from './command-pages.js';

const SCRIPT = join(ROOT, 'docs', 'cron', 'leadctl-nightly.sh');
const DAY = '2026-11-24';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Setup {
  root: string;
  home: string;
  logDir: string;
  conf: string;
  alerts: string;
}

/** A HOME with a `nightly` profile saved by a sandbox (started with `extra` flags), the export, and a settings file. */
async function setup(extra: string[] = [], settings: Record<string, string> = {}): Promise<Setup> {
  const root = mkdtempSync(join(tmpdir(), 'leadctl-cron-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  mkdirSync(join(root, 'lms'), { recursive: true });
  copyFileSync(join(ROOT, 'fixtures', 'lms', 'export.csv'), join(root, 'lms', `export-${DAY}.csv`));
  await startSandbox(['--save-profile', 'nightly', ...extra], home);
  const alerts = join(root, 'alerts.txt');
  const alertCmd = join(root, 'alert.sh');
  writeFileSync(alertCmd, `#!/bin/sh\n{ echo "SUBJECT: $1"; cat; } >> '${alerts}'\n`);
  chmodSync(alertCmd, 0o755);
  const values: Record<string, string> = {
    LEADCTL: BIN,
    NODE_DIR: dirname(process.execPath),
    PROFILE: 'nightly',
    EXPORT_DIR: join(root, 'lms'),
    EXPORT_NAME: 'export-%DAY%.csv',
    MAPPING: join(ROOT, 'fixtures', 'lms', 'mapping.json'),
    LOG_DIR: join(root, 'log'),
    RETRY_WAIT: '0',
    ALERT: alertCmd,
    ...settings,
  };
  const conf = join(root, 'nightly.conf');
  writeFileSync(
    conf,
    Object.entries(values)
      .map(([k, v]) => `${k}='${v}'`)
      .join('\n') + '\n',
  );
  return { root, home, logDir: join(root, 'log'), conf, alerts };
}

async function startSandbox(args: string[], home: string): Promise<void> {
  // Config under HOME, as a cron user has it (no LEADCTL_CONFIG_DIR).
  const sandbox = await startSandboxWithEnv(args, { PATH: '/usr/bin:/bin', HOME: home }, { bare: true });
  cleanups.push(sandbox.stop);
}

/** The script as cron runs it: `env -i PATH=/usr/bin:/bin HOME=…`, plus the settings file's path. */
function runAsCron(s: Setup, args: string[] = [DAY]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/usr/bin/env',
      ['-i', 'PATH=/usr/bin:/bin', `HOME=${s.home}`, `LEADCTL_NIGHTLY_CONF=${s.conf}`, SCRIPT, ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout.resume();
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : '');

describe("docs/cron/leadctl-nightly.sh under cron's bare environment", () => {
  it('pushes with the saved profile, logs, keeps the summary and rejects, and alerts on exit 4', async () => {
    const s = await setup();
    const run = await runAsCron(s);
    const log = read(join(s.logDir, `nightly-${DAY}.log`));
    expect(run.code, log).toBe(4);
    expect(JSON.parse(read(join(s.logDir, `summary-${DAY}.json`)))).toMatchObject({
      status: 'completed_with_rejects',
      exit_code: 4,
      customers: { accepted: 9 },
    });
    expect(read(join(s.logDir, `rejects-${DAY}.csv`))).toMatch(/^source_file,row,/);
    expect(log).toMatch(/try 1 of 4: .*customers batch/);
    expect(log).toMatch(/request 1 accepted/);
    expect(log).toMatch(/leadctl exited 4/);
    expect(read(s.alerts)).toMatch(/SUBJECT: leadctl nightly 2026-11-24: records rejected/);
    expect(run.stderr).toBe('');
  });

  it('retries a service that stays unavailable a bounded number of times with --resume, then alerts (exit 5)', async () => {
    const s = await setup(['--fail-rate', '1'], { MAX_TRIES: '2' });
    // leadctl's own retries, made quick for the test.
    writeFileSync(
      s.conf,
      read(s.conf) + 'export LEADCTL_RETRY_ATTEMPTS=1 LEADCTL_RETRY_BASE_MS=1 LEADCTL_RETRY_MAX_DELAY_MS=1\n',
    );
    const run = await runAsCron(s);
    const log = read(join(s.logDir, `nightly-${DAY}.log`));
    expect(run.code, log).toBe(5);
    expect(log.match(/leadctl exited 5/g)).toHaveLength(2);
    expect(log).toMatch(/try 2 of 2/);
    expect(read(s.alerts)).toMatch(/service unavailable/);
    expect(read(s.alerts)).toMatch(/after 2 tries/);
  });

  it('does nothing and exits 7 while another run holds the lock; no alert', async () => {
    const s = await setup();
    mkdirSync(s.logDir, { recursive: true });
    // Its own process group, so that flock and the sleep it runs are both stopped.
    const holder = spawn('/usr/bin/flock', [join(s.logDir, 'nightly.lock'), '/bin/sleep', '60'], {
      stdio: 'ignore',
      detached: true,
    });
    const gone = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
    cleanups.push(async () => {
      process.kill(-holder.pid!, 'SIGTERM');
      await gone;
    });
    await new Promise((r) => setTimeout(r, 300));
    const run = await runAsCron(s);
    const log = read(join(s.logDir, `nightly-${DAY}.log`));
    expect(run.code, log).toBe(7);
    expect(log).toMatch(/another nightly run holds/);
    expect(log).not.toMatch(/customers batch/);
    expect(read(s.alerts)).toBe('');
  });

  it('says what to set when leadctl is not where the settings say (exit 2, alert)', async () => {
    const s = await setup([], { LEADCTL: '/nonexistent/leadctl' });
    const run = await runAsCron(s);
    expect(run.code).toBe(2);
    expect(read(s.alerts)).toMatch(/leadctl not found[\s\S]*command -v leadctl/);
  });

  it('refuses a day that is not YYYY-MM-DD', async () => {
    const s = await setup();
    const run = await runAsCron(s, ['24/11/2026']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/YYYY-MM-DD/);
  });
});
