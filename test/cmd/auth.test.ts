import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';
import { startSandboxInProcess, type TestSandbox } from '../helpers/sandbox.js';

let sandbox: TestSandbox;
const dirs: string[] = [];

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
});
afterAll(async () => {
  await sandbox.stop();
});
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function configDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'leadctl-auth-cmd-'));
  dirs.push(d);
  return join(d, 'config');
}

/** Runs leadctl in-process with only the given environment (never the real config dir). */
async function run(args: string[], options: { dir: string; env?: Record<string, string>; stdin?: string }) {
  const io = memoryIO({
    env: { LEADCTL_CONFIG_DIR: options.dir, LEADCTL_RETRY_BASE_MS: '5', ...options.env },
    stdin: options.stdin,
  });
  const code = await main(args, io);
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

async function login(dir: string, extra: string[] = [], secret = sandbox.clientSecret) {
  return run(
    [
      '--base-url',
      sandbox.baseUrl,
      '-o',
      'json',
      'auth',
      'login',
      '--client-id',
      sandbox.clientId,
      '--client-secret-stdin',
      ...extra,
    ],
    { dir, stdin: secret + '\n' },
  );
}

describe('auth login', () => {
  it('verifies the credentials, saves the profile (0600) and says where it is logged in', async () => {
    const dir = configDir();
    const r = await login(dir);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      logged_in: true,
      profile: 'default',
      base_url: sandbox.baseUrl,
      client_id: sandbox.clientId,
      secret_saved: true,
    });
    expect(r.stdout + r.stderr).not.toContain(sandbox.clientSecret);
    const file = join(dir, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved.current_profile).toBe('default');
    expect(saved.profiles.default).toMatchObject({
      base_url: sandbox.baseUrl,
      client_id: sandbox.clientId,
      client_secret: sandbox.clientSecret,
    });
    expect(typeof saved.profiles.default.token.access_token).toBe('string');
  });

  it('exits 3 with a clear message for a wrong secret, and saves nothing', async () => {
    const dir = configDir();
    const r = await login(dir, [], 'not-the-secret-at-all');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('refused the credentials');
    expect(r.stderr).toContain('auth login');
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'authentication', exit_code: 3 });
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('does not save the secret with --no-save-secret, yet commands work on the token', async () => {
    const dir = configDir();
    expect((await login(dir, ['--no-save-secret'])).code).toBe(0);
    const saved = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(saved.profiles.default.client_secret).toBeUndefined();
    const ls = await run(['-o', 'json', 'systems', 'ls'], { dir });
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout).length).toBeGreaterThan(0);
  });

  it('reads the secret from a file', async () => {
    const dir = configDir();
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    const secretFile = join(dir, '..', 'secret.txt');
    writeFileSync(secretFile, sandbox.clientSecret + '\n', { mode: 0o600 });
    const r = await run(
      [
        '--base-url',
        sandbox.baseUrl,
        '-o',
        'json',
        'auth',
        'login',
        '--client-id',
        sandbox.clientId,
        '--client-secret-file',
        secretFile,
      ],
      { dir },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('can be read by other users');
  });

  it('asks for the client id and, hidden, the secret on a terminal', async () => {
    const dir = configDir();
    const io = memoryIO({ env: { LEADCTL_CONFIG_DIR: dir } });
    const stdin = new PassThrough();
    io.stdin = Object.assign(stdin, { isTTY: true, setRawMode: () => stdin });
    const asked = async (question: string) => {
      while (!io.stderrText().includes(question)) await new Promise((r) => setImmediate(r));
    };
    const running = main(['--base-url', sandbox.baseUrl, '-o', 'json', 'auth', 'login'], io);
    await asked('Client id: ');
    stdin.write(sandbox.clientId + '\r');
    await asked('Client secret (input hidden): ');
    stdin.write(sandbox.clientSecret + '\r');
    expect(await running).toBe(0);
    expect(JSON.parse(io.stdoutText())).toMatchObject({ logged_in: true, client_id: sandbox.clientId });
    expect(io.stderrText()).not.toContain(sandbox.clientSecret);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).profiles.default.client_secret).toBe(
      sandbox.clientSecret,
    );
  });

  it('asks for the secret in the usage error when none is given off a terminal', async () => {
    const dir = configDir();
    const r = await run(['--base-url', sandbox.baseUrl, 'auth', 'login', '--client-id', sandbox.clientId], { dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no client secret given');
    expect(r.stderr).toContain('--client-secret-stdin');
  });

  it('warns that environment credentials still win', async () => {
    const dir = configDir();
    const r = await run(
      ['--base-url', sandbox.baseUrl, '-o', 'json', 'auth', 'login', '--client-id', sandbox.clientId],
      {
        dir,
        env: { LEADCTL_CLIENT_SECRET: sandbox.clientSecret },
      },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/LEADCTL_CLIENT_ID \/ LEADCTL_CLIENT_SECRET are set.*still win/);
  });

  it('refuses plain http to a non-loopback host (exit 2)', async () => {
    const dir = configDir();
    const r = await run(
      ['--base-url', 'http://example.com', 'auth', 'login', '--client-id', 'x', '--client-secret-stdin'],
      { dir, stdin: 's\n' },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--base-url.*must use https/);
  });
});

describe('auth status', () => {
  it('shows each value with where it came from and checks it live', async () => {
    const dir = configDir();
    await login(dir);
    const r = await run(['-o', 'json', 'auth', 'status'], { dir });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      profile: 'default',
      profile_source: 'profile',
      base_url: sandbox.baseUrl,
      base_url_source: 'profile',
      client_id: sandbox.clientId,
      client_id_source: 'profile',
      client_secret: 'set',
      client_secret_source: 'profile',
      live_check: { ok: true },
    });
    expect(doc.cached_token_expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(r.stdout).not.toContain(sandbox.clientSecret);
  });

  it('lists every profile with --all, in a table on request', async () => {
    const dir = configDir();
    await login(dir);
    await run(
      [
        '--profile',
        'second',
        '--base-url',
        sandbox.baseUrl,
        'auth',
        'login',
        '--client-id',
        sandbox.clientId,
        '--client-secret-stdin',
        '--no-save-secret',
      ],
      {
        dir,
        stdin: sandbox.clientSecret,
      },
    );
    const json = await run(['-o', 'json', 'auth', 'status', '--all'], { dir });
    const doc = JSON.parse(json.stdout);
    expect(doc.profile).toBe('second');
    expect(
      doc.profiles.map((p: { name: string; current: boolean; secret_saved: boolean }) => [
        p.name,
        p.current,
        p.secret_saved,
      ]),
    ).toEqual([
      ['default', false, true],
      ['second', true, false],
    ]);
    const table = await run(['-o', 'table', 'auth', 'status', '--all'], { dir });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/Base URL:\s+http:\/\/127\.0\.0\.1:\d+ \(profile\)/);
    expect(table.stdout).toMatch(/\* second/);
  });

  it('reports environment credentials as such, with no config file', async () => {
    const dir = configDir();
    const env = {
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    };
    const r = await run(['-o', 'json', 'auth', 'status'], { dir, env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      base_url_source: 'environment',
      client_id_source: 'environment',
      client_secret_source: 'environment',
      profile_saved: false,
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('exits 3 when not logged in, still printing one JSON document', async () => {
    const dir = configDir();
    const r = await run(['-o', 'json', '--base-url', sandbox.baseUrl, 'auth', 'status'], { dir });
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.stdout);
    expect(doc.live_check.ok).toBe(false);
    expect(r.stderr).toMatch(/not logged in/);
  });
});

describe('auth token and logout', () => {
  it('prints a token the service accepts', async () => {
    const dir = configDir();
    await login(dir);
    const r = await run(['-o', 'table', 'auth', 'token'], { dir });
    expect(r.code).toBe(0);
    const token = r.stdout.trim();
    const res = await fetch(`${sandbox.baseUrl}/api/v1/resources/management-systems`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    });
    expect(res.status).toBe(200);
    const json = await run(['-o', 'json', 'auth', 'token'], { dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ access_token: token, token_type: 'Bearer' });
    // Piped with no -o (as in curl -H "Authorization: Bearer $(leadctl auth token)"): the bare token.
    const piped = await run(['auth', 'token'], { dir });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toMatch(/^[A-Za-z0-9._-]+\n$/);
  });

  it('forgets secret and token on logout; then commands exit 3 and say what to do', async () => {
    const dir = configDir();
    await login(dir);
    const out = await run(['-o', 'json', 'auth', 'logout'], { dir });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ profile: 'default', logged_out: true });
    const saved = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(saved.profiles.default).toEqual({
      base_url: sandbox.baseUrl,
      client_id: sandbox.clientId,
      logged_in_at: expect.any(String),
    });
    const ls = await run(['systems', 'ls'], { dir });
    expect(ls.code).toBe(3);
    expect(ls.stderr).toMatch(/no client secret is available/);
    expect(ls.stderr).toMatch(/auth login/);
  });

  it('removes a profile with logout --remove', async () => {
    const dir = configDir();
    await login(dir);
    const refused = await run(['auth', 'logout', '--remove'], { dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/needs confirmation[\s\S]*--yes/);
    expect((await run(['auth', 'logout', '--remove', '--yes'], { dir })).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).profiles).toEqual({});
  });
});

describe('credentials in use', () => {
  it('runs from the environment alone and creates no config file', async () => {
    const dir = configDir();
    const env = {
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    };
    const r = await run(['-o', 'csv', 'systems', 'ls'], { dir, env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('id,name');
    expect(existsSync(dir)).toBe(false);
  });

  it('exits 2 for a profile that does not exist', async () => {
    const dir = configDir();
    const r = await run(['--profile', 'nope', 'systems', 'ls'], { dir });
    expect(r.code).toBe(2);
    // Piped (JSON implied): the error is the JSON document on stderr.
    expect(r.stderr).toContain('no profile named \\"nope\\"');
    expect(r.stderr).toContain('auth login --profile nope');
  });

  it('exits 2 for a nonsensical retry setting', async () => {
    const dir = configDir();
    await login(dir);
    const r = await run(['systems', 'ls'], { dir, env: { LEADCTL_RETRY_ATTEMPTS: 'many' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('LEADCTL_RETRY_ATTEMPTS');
  });

  it('logs requests with --verbose, without the secret or any token', async () => {
    const dir = configDir();
    await login(dir);
    const token = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).profiles.default.token
      .access_token as string;
    const r = await run(['--verbose', '-o', 'json', 'systems', 'ls'], { dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/\[http\] GET \/api\/v1\/resources\/management-systems → 200 in \d/);
    expect(r.stderr).toContain('[auth] using the cached access token');
    expect(r.stderr).not.toContain(token);
    expect(r.stderr).not.toContain(sandbox.clientSecret);
  });
});

describe('auth status when the service cannot be reached', () => {
  it('answers after one short try from what is saved, says the service was not reached, exit 5', async () => {
    const dir = configDir();
    expect((await login(dir)).code).toBe(0);
    // A server that accepts connections and never answers: the slowest way to be unreachable.
    const { createServer } = await import('node:net');
    const sockets: import('node:net').Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as import('node:net').AddressInfo).port;
    try {
      // The saved profile's token is for the sandbox; the silent server gets the token request.
      const started = Date.now();
      const r = await run(['-o', 'table', '--base-url', `http://127.0.0.1:${port}`, 'auth', 'status'], {
        dir,
        env: { LEADCTL_RETRY_ATTEMPTS: '6', LEADCTL_RETRY_BASE_MS: '500' },
      });
      const elapsed = Date.now() - started;
      expect(r.code).toBe(5);
      // One try of at most 1 s; six tries with these backoffs would take 13 s or more. Generous, for a
      // loaded machine: the message below says it was one try.
      expect(elapsed).toBeLessThan(10_000);
      expect(r.stdout).toMatch(/Profile: +default/);
      expect(r.stdout).toMatch(/Live check: +not done: the service could not be reached \(one try of at most 1 s\)/);
      expect(r.stderr).toMatch(/^Error: the service could not be reached/m);

      const cached = await run(['-o', 'json', 'auth', 'status'], {
        dir: dir,
        env: { LEADCTL_BASE_URL: sandbox.baseUrl },
      });
      expect(cached.code).toBe(0);
      const json = await run(['-o', 'json', '--base-url', `http://127.0.0.1:${port}`, 'auth', 'status'], { dir });
      expect(JSON.parse(json.stdout).live_check).toMatchObject({ ok: false, unreachable: true });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
