import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openProfileStore } from '../../src/config/profiles.js';
import { BIN, errorLines, runBinary } from '../helpers/binary.js';
import { startSandboxWithEnv } from '../helpers/sandbox.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDirs() {
  const root = mkdtempSync(join(tmpdir(), 'leadctl-sblogin-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  return { LEADCTL_CONFIG_DIR: join(root, 'config'), LEADCTL_STATE_DIR: join(root, 'state'), HOME: root };
}

async function startWithEnv(args: string[], env: Record<string, string>): Promise<{ stdout: string }> {
  const sandbox = await startSandboxWithEnv(args, env);
  cleanups.push(sandbox.stop);
  return sandbox;
}

function exportsOf(stdout: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const m of stdout.matchAll(/^export (\w+)=(\S+)/gm)) vars[m[1]!] = m[2]!.replace(/^'|'$/g, '');
  return vars;
}

describe('sandbox start --save-profile / --env (one-step login)', () => {
  it('saves a profile that works at once, and --env names it with the price-reject api key', async () => {
    const env = tempDirs();
    const { stdout } = await startWithEnv(['--save-profile', 'sb'], env);
    const vars = exportsOf(stdout);
    expect(vars).toMatchObject({ LEADCTL_PROFILE: 'sb' });
    expect(vars.LEADCTL_API_KEY).toMatch(/^\w{20,}$/);
    expect(stdout).not.toMatch(/CLIENT_SECRET/);

    const status = await runBinary(['--profile', 'sb', 'auth', 'status', '-o', 'json'], { env });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ profile: 'sb' });
    // The first profile saved becomes the active one: no --profile needed.
    const systems = await runBinary(['systems', 'ls', '-o', 'json'], { env });
    expect(systems.code).toBe(0);
  });

  it('without --save-profile, --env prints the base URL and credentials, which work as environment variables', async () => {
    const env = tempDirs();
    const { stdout } = await startWithEnv([], env);
    const vars = exportsOf(stdout);
    expect(vars.LEADCTL_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(vars.LEADCTL_CLIENT_ID).toBeTruthy();
    const status = await runBinary(['auth', 'status', '-o', 'json'], { env: { ...env, ...vars } });
    expect(status.code).toBe(0);
  });

  it('refuses to overwrite a profile that points at a real service, and leaves it as it was', async () => {
    const env = tempDirs();
    const store = await openProfileStore(env.LEADCTL_CONFIG_DIR);
    store.saveProfile('prod', { base_url: 'https://api.example.com', client_id: 'real', client_secret: 'kept' });
    const result = await runBinary(['sandbox', 'start', '--memory', '--port', '0', '--save-profile', 'prod'], {
      env,
      timeoutMs: 20_000,
    });
    expect(result.code).toBe(2);
    expect(errorLines(result.stderr)).toMatch(/profile "prod" points at https:\/\/api\.example\.com/);
    expect(store.profile('prod')).toMatchObject({ base_url: 'https://api.example.com', client_secret: 'kept' });
  });

  it('--env FILE writes the lines to FILE (mode 600) once the sandbox listens, nothing on stdout', async () => {
    const env = tempDirs();
    const file = join(env.HOME, 'sandbox.env');
    const child = spawn(
      process.execPath,
      [BIN, 'sandbox', 'start', '--memory', '--port', '0', '--save-profile', 'sb', '--env', file],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    await expect.poll(() => existsSync(file), { timeout: 30_000, interval: 50 }).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const vars = exportsOf(readFileSync(file, 'utf8'));
    expect(vars).toMatchObject({ LEADCTL_PROFILE: 'sb' });
    expect(vars.LEADCTL_API_KEY).toMatch(/^\w{20,}$/);
    const systems = await runBinary(['systems', 'ls', '-o', 'json'], { env: { ...env, ...vars } });
    expect(systems.code).toBe(0);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toBe('');
  });

  it('--env FILE writes nothing when the sandbox cannot start, and says why on stderr', async () => {
    const env = tempDirs();
    const store = await openProfileStore(env.LEADCTL_CONFIG_DIR);
    store.saveProfile('prod', { base_url: 'https://api.example.com', client_id: 'real', client_secret: 'kept' });
    const file = join(env.HOME, 'sandbox.env');
    const refused = await runBinary(
      ['sandbox', 'start', '--memory', '--port', '0', '--save-profile', 'prod', '--env', file],
      { env, timeoutMs: 20_000 },
    );
    expect(refused.code).toBe(2);
    expect(errorLines(refused.stderr)).toMatch(/profile "prod" points at https:\/\/api\.example\.com/);
    expect(refused.stdout).toBe('');
    expect(existsSync(file)).toBe(false);

    // A file that cannot be written: the sandbox stops rather than serve with no one told where.
    const nowhere = join(env.HOME, 'missing-folder', 'sandbox.env');
    const unwritable = await runBinary(['sandbox', 'start', '--memory', '--port', '0', '--env', nowhere], {
      env,
      timeoutMs: 20_000,
    });
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toMatch(
      /cannot write the --env file .*missing-folder\/sandbox\.env \(ENOENT\); the sandbox stopped/,
    );
    expect(existsSync(nowhere)).toBe(false);
  });
});
