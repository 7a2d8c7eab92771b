import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runBinary } from '../helpers/binary.js';

const kept: string[] = [];
const userConfig = mkdtempSync(join(tmpdir(), 'leadctl-e2e-demo-user-'));
afterAll(() => {
  for (const dir of kept) rmSync(dir, { recursive: true, force: true });
  rmSync(userConfig, { recursive: true, force: true });
});

interface Report {
  ok: boolean;
  base_url: string;
  files_dir: string;
  steps: Array<{ id: string; status: string; exit_code: number | null; command: string }>;
  missing: string[];
  store: Record<string, number>;
  files: Array<{ path: string; rows: number }>;
  files_kept: boolean;
}

const csvRows = (path: string) =>
  parse(readFileSync(path), { bom: true, columns: true, relax_column_count: true }) as Record<string, string>[];

const PAUSE_AT = fileURLToPath(new URL('../helpers/pause-at.mjs', import.meta.url));

/**
 * The demo, stopped (SIGSTOP, by test/helpers/pause-at.mjs) right after it prints its second step:
 * the whole story takes half a second, so a test reading it late found it already over.
 */
function pausedDemo(
  env: Record<string, string | undefined>,
  stderr: 'pipe' | 'ignore',
): ChildProcessByStdio<null, Readable, Readable | null> {
  return spawn(process.execPath, ['--import', PAUSE_AT, BIN, 'demo'], {
    env: { ...process.env, NO_COLOR: '1', LEADCTL_TEST_PAUSE_AT: '── 2/', ...env },
    stdio: ['ignore', 'pipe', stderr],
  }) as ChildProcessByStdio<null, Readable, Readable | null>;
}

/** Until the process has stopped itself (state T): it does so just after the write that was read. */
async function stoppedItself(pid: number): Promise<void> {
  const state = () => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
  for (let waited = 0; state() !== 'T'; waited += 5) {
    if (waited > 10_000) throw new Error(`process ${pid} never stopped (state ${state()})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Waits until the demo's story reaches its second step, stopped there; gives what it printed so far, and after. */
async function stepTwo(child: ChildProcessByStdio<null, Readable, Readable | null>): Promise<() => string> {
  let stdout = '';
  let seen = false;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the demo never reached step 2:\n${stdout}`)), 45_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (!seen && /── 2\/\d+ /.test(stdout)) {
        seen = true;
        clearTimeout(timer);
        resolve(stoppedItself(child.pid!));
      }
    });
  });
  return () => stdout;
}

describe('leadctl demo (the built binary)', () => {
  it("runs every step against its own sandbox, ignores the user's settings, and with --keep keeps the output files", async () => {
    // Settings that would point a command at another service and profile: the demo must use none of them.
    const child = spawn(process.execPath, [BIN, '--output', 'json', 'demo', '--keep'], {
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LEADCTL_'))),
        NO_COLOR: '1',
        LEADCTL_CONFIG_DIR: userConfig,
        LEADCTL_BASE_URL: 'http://127.0.0.1:9',
        LEADCTL_CLIENT_ID: 'not-the-demo',
        LEADCTL_CLIENT_SECRET: 'not-the-demo-secret',
        LEADCTL_PROFILE: 'prod',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r = { stdout: '', stderr: '', code: null as number | null };
    child.stdout.setEncoding('utf8').on('data', (d: string) => (r.stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // With --output json the story goes to stderr; the summary comes on stdout once the kept sandbox stops.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`demo --keep never said it was ready:\n${r.stderr}`)), 45_000);
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        r.stderr += d;
        if (r.stderr.includes('Press Ctrl-C to stop it.')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    child.kill('SIGINT');
    r.code = await exited;
    const report = JSON.parse(r.stdout) as Report;
    kept.push(dirname(report.files_dir));
    expect(r.code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.files_kept).toBe(true);
    expect(r.stderr).toContain(`Files kept in ${report.files_dir}:`);
    expect(report.missing).toEqual([]);
    expect(readdirSync(userConfig)).toEqual([]);
    expect(report.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const exitCodes = Object.fromEntries(report.steps.map((s) => [s.id, s.exit_code]));
    expect(exitCodes).toEqual({
      login: 0,
      'lists-create': 4, // uploaded, with rejected rows
      'customers-batch': 4, // pushed, with rejected records
      'legacy-accepted': 0, // A
      'legacy-rejected': 4, // R: on the suppression list
      'legacy-pending': 6, // P: offers
      'legacy-accept-offer': 0,
      'dry-run-pass': 0,
      'dry-run-fail': 4,
      'leads-ids': 0,
      'leads-export': 0,
      'systems-ls': 0,
    });
    expect(report.steps.every((s) => s.status === 'ok')).toBe(true);
    // The secret goes in on stdin; the command shown never holds it, nor the campaign keys.
    expect(report.steps.find((s) => s.id === 'login')!.command).toContain(
      '--client-secret-stdin < (the client secret)',
    );
    expect(report.steps.find((s) => s.id === 'legacy-accepted')!.command).toContain(
      'LEADCTL_API_KEY=<Sandbox Direct campaign key>',
    );

    // The messy list: 13 rows, 4 invalid, 2 duplicates, 1 blank → 6 distinct SSNs stored.
    expect(report.store.lists).toBe(1);
    expect(report.store.list_items).toBe(6);
    // The LMS fixture: what the sandbox holds is exactly what was valid.
    expect(report.store).toMatchObject({ customers: 9, loans: 10, payments: 14 });
    // Three leads posted (A, R, P); the pending one had offers and one was accepted.
    expect(report.store.leads).toBe(3);
    expect(report.store.offers).toBeGreaterThan(0);

    const listRejects = csvRows(join(report.files_dir, 'list-rejects.csv'));
    expect(listRejects.map((row) => row.row)).toEqual(['8', '10', '11', '13']);
    expect(JSON.stringify(listRejects)).not.toMatch(/000-?12-?3456|666-?45-?1234/);

    const batchRejects = csvRows(join(report.files_dir, 'batch-rejects.csv'));
    expect(batchRejects.length).toBeGreaterThan(0);
    expect(
      batchRejects.every(
        (row) => /fixtures\/lms\/(loans|payments)\.csv$/.test(row.source_file!) && Number(row.row) > 1,
      ),
    ).toBe(true);

    const exported = csvRows(join(report.files_dir, 'leads-export.csv'));
    expect(exported).toHaveLength(3);
    expect(report.files.find((f) => f.path.endsWith('leads-export.csv'))?.rows).toBe(3);

    // The show went to stderr (stdout carried the JSON summary): the outcomes in words.
    expect(r.stderr).toMatch(/^PASS$/m);
    expect(r.stderr).toMatch(/^FAIL: previously purchased/m);
    expect(r.stderr).toMatch(/^Accepted/m);
    expect(r.stderr).toMatch(/^Rejected/m);
    // Only the output files are kept: the throwaway config (with the sandbox secret) is gone.
    expect(readdirSync(dirname(report.files_dir))).toEqual(['files']);
  });

  it('tells its story on stdout, and leaves no temporary folder behind', async () => {
    const r = await runBinary(['demo'], { timeoutMs: 60_000 });
    const root = /--rejects (\S+)\/files\/list-rejects\.csv/.exec(r.stdout)?.[1];
    expect(root).toMatch(/leadctl-demo-/);
    if (root && existsSync(root)) kept.push(root);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Demo finished in/);
    expect(r.stdout).toContain('$ leadctl lists create');
    expect(r.stdout).toMatch(/^PASS$/m);
    // The rejects and export files hold made-up personal data: gone, and the summary says how to keep them.
    expect(existsSync(root!)).toBe(false);
    expect(r.stdout).not.toContain('Files kept in');
    expect(r.stdout).toMatch(
      /removed with the rest of the demo \(`leadctl demo --keep` keeps them\):\n {2}batch-rejects\.csv/,
    );
  });

  it('--keep leaves the sandbox running for other commands until Ctrl-C', async () => {
    const child = spawn(process.execPath, [BIN, 'demo', '--keep'], {
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`demo --keep never said it was ready:\n${stdout}`)), 45_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (stdout.includes('Press Ctrl-C to stop it.')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const configDir = /export LEADCTL_CONFIG_DIR=(\S+)/.exec(stdout)![1]!;
    kept.push(dirname(configDir));
    const lists = await runBinary(['--output', 'json', 'lists', 'ls'], { env: { LEADCTL_CONFIG_DIR: configDir } });
    expect(lists.code).toBe(0);
    expect((JSON.parse(lists.stdout) as Array<{ name: string }>).map((l) => l.name)).toEqual(['Demo SSN suppression']);
    // The line it prints for the admin endpoints works as printed.
    const admin = /curl -s -H 'Authorization: Bearer (\S+)' (\S+)\/_sandbox\/stats/.exec(stdout);
    expect(admin).not.toBeNull();
    const stats = await fetch(`${admin![2]}/_sandbox/stats`, { headers: { authorization: `Bearer ${admin![1]}` } });
    expect(stats.status).toBe(200);
    expect(((await stats.json()) as { lists: number }).lists).toBe(1);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(existsSync(configDir)).toBe(false);
  });

  it('Ctrl-C in the middle ends with 130 after cleaning up, not killed by the signal', async () => {
    const child = pausedDemo({}, 'pipe');
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (code, signal) => resolve([code, signal])),
    );
    // By step 2 the login has saved a profile through conf, whose when-exit hook re-raises signals.
    const output = await stepTwo(child);
    child.kill('SIGINT');
    child.kill('SIGCONT');
    const [code, signal] = await exited;
    const stdout = output();
    const root = /--rejects (\S+)\/files\/list-rejects\.csv/.exec(stdout)?.[1];
    expect(root).toBeDefined();
    kept.push(root!);
    expect(signal).toBeNull();
    expect(code).toBe(130);
    expect(stdout).toContain('skipped: interrupted by SIGINT');
    // The throwaway config (with the sandbox's secret), state and files folders are gone.
    expect(existsSync(root!)).toBe(false);
  });

  it('cut short by a reader that went away (`demo | head -2`), still removes its folder and the secret in it', async () => {
    // A temp folder of its own: the demo's folder is the only one made there.
    const tmp = mkdtempSync(join(tmpdir(), 'leadctl-e2e-demo-tmp-'));
    kept.push(tmp);
    const child = pausedDemo({ TMPDIR: tmp }, 'ignore');
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Until the demo has logged in (the config folder then holds the sandbox's secret), then the pipe closes.
    await stepTwo(child);
    expect(readdirSync(tmp).filter((n) => n.startsWith('leadctl-demo-'))).toHaveLength(1);
    child.stdout.destroy();
    child.kill('SIGCONT');
    await exited;
    expect(readdirSync(tmp).filter((n) => n.startsWith('leadctl-demo-'))).toEqual([]);
  });
});
