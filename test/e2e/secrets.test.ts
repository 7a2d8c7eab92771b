/**
 * What is never leaked and never reported as a bug, through the built binary: a service that echoes
 * the request (its headers, its form) in every answer never gets the client secret or the token
 * onto stdout, stderr, --verbose, the rejects file or the journal, in any encoding; broken proxy
 * settings, absurd token lifetimes and read-only config folders are environment problems (exit 2
 * or 5) naming what to fix, never exit 1.
 *
 * The echo server is written here: test/helpers/hostile-server.ts (another helper's) did not exist
 * yet; its echo mode can replace it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, errorLines, runBinary, type RunResult } from '../helpers/binary.js';
import { FIXTURES, MAPPING } from './push-helpers.js';

/** Every character URL, form, JSON and HTML encodings treat specially. */
const SECRET = `Cs+/= &"q'w\\e<r>%t€-2024`;
const TOKEN = 'Tk+/=ZWNobyB0b2tlbiBmb3IgdGVzdHM';
const CLIENT_ID = 'echo-client';

const root = mkdtempSync(join(tmpdir(), 'leadctl-e2e-secrets-'));
let n = 0;
const fresh = (name: string) => {
  const dir = join(root, `${name}-${++n}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};

let echo: Server;
let echoUrl: string;
let expiresIn = '3600';

beforeAll(async () => {
  echo = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const send = (status: number, doc: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      if (req.url === '/oauth/token') {
        const form = new URLSearchParams(body);
        if (form.get('client_secret') !== SECRET)
          return send(401, { error: 'invalid_client', error_description: `bad secret in ${body}` });
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(`{"token_type":"Bearer","expires_in":${expiresIn},"access_token":${JSON.stringify(TOKEN)}}`);
      }
      if (req.url!.startsWith('/api/v1/loan-performance/batches/')) {
        // Refused as a whole (422), echoing the headers and the token every way it can.
        const auth = req.headers.authorization ?? '';
        const token = auth.replace(/^Bearer /, '');
        return send(422, {
          message: `The given data was invalid (${auth}, token=${encodeURIComponent(token)})`,
          errors: {
            'customers.0.customer_id': [`echo ${token}`, `form ${new URLSearchParams({ a: token })}`],
            'customers.1.customer_id': [`b64 ${Buffer.from(token).toString('base64')}`],
          },
          request_headers: req.headers,
        });
      }
      const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      send(500, {
        message: `Server Error: session ${token} (${encodeURIComponent(token)})`,
        trace: `headers=${JSON.stringify(req.headers)}`,
      });
    });
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => echo.close(r));
  rmSync(root, { recursive: true, force: true });
});

/** The ways the secret and the token may be written back. */
function encodings(value: string): string[] {
  return [
    value,
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
    JSON.stringify(value).slice(1, -1).replace(/\//g, '\\/'),
    Buffer.from(value).toString('base64'),
    Buffer.from(`${CLIENT_ID}:${value}`).toString('base64'),
  ];
}

function expectNoSecret(where: string, text: string) {
  for (const value of [SECRET, TOKEN])
    for (const form of encodings(value))
      expect(text.includes(form), `${where} holds ${JSON.stringify(form)}`).toBe(false);
}

/** Every file under `dir`, with its content. */
function filesUnder(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push([path, readFileSync(path, 'latin1') + readFileSync(path, 'utf8')]);
  }
  return out;
}

function echoEnv(home: string): Record<string, string> {
  return {
    HOME: home,
    LEADCTL_CONFIG_DIR: join(home, 'config'),
    LEADCTL_STATE_DIR: join(home, 'state'),
    LEADCTL_BASE_URL: echoUrl,
    LEADCTL_CLIENT_ID: CLIENT_ID,
    LEADCTL_CLIENT_SECRET: SECRET,
    LEADCTL_RETRY_ATTEMPTS: '2',
    LEADCTL_RETRY_BASE_MS: '5',
  };
}

describe('a service echoing the request never gets a secret into output or files', () => {
  it('a push refused with the headers echoed: stdout, stderr (--verbose), rejects file and journal are clean', async () => {
    const home = fresh('push');
    const rejects = join(home, 'rejects.csv');
    const r = await runBinary(
      [
        '--verbose',
        'customers',
        'batch',
        join(FIXTURES, 'export.csv'),
        '--mapping',
        MAPPING,
        '--rejects',
        rejects,
        '-o',
        'json',
      ],
      { env: echoEnv(home) },
    );
    expect(r.code, r.stderr).not.toBe(1);
    expect(r.stderr).toContain('[http] POST /api/v1/loan-performance/batches/customers → 422');
    // The echo reached the run: the rejects file quotes the service's reasons, scrubbed.
    const rejected = readFileSync(rejects, 'utf8');
    expect(rejected).toContain('[REDACTED]');
    expectNoSecret('stdout', r.stdout);
    expectNoSecret('stderr', r.stderr);
    const files = filesUnder(home);
    expect(files.some(([p]) => p.includes('state'))).toBe(true);
    for (const [path, content] of files) expectNoSecret(path, content);
  });

  it('a 500 echoing the headers: the error (message and JSON details) on stderr and stdout is clean', async () => {
    const home = fresh('systems');
    for (const args of [
      ['-o', 'json', 'systems', 'ls'],
      ['--verbose', '-o', 'table', 'systems', 'ls'],
      ['systems', 'ls'],
    ]) {
      const r = await runBinary(args, { env: echoEnv(home) });
      expect(r.code).toBe(5);
      expect(r.stderr + r.stdout).toContain('[REDACTED]');
      expectNoSecret('stdout', r.stdout);
      expectNoSecret('stderr', r.stderr);
    }
  });

  it('a token endpoint echoing the form of a refused secret: the secret sent is not quoted', async () => {
    const wrong = `${SECRET}+"wrong"`;
    for (const args of [
      ['-o', 'json'],
      ['--verbose', '-o', 'table'],
    ]) {
      const r = await runBinary([...args, '--base-url', echoUrl, 'auth', 'login', '--client-id', CLIENT_ID], {
        env: { LEADCTL_CONFIG_DIR: fresh('refused'), LEADCTL_CLIENT_SECRET: wrong },
      });
      expect(r.code).toBe(3);
      expect(r.stderr + r.stdout).toContain(
        'bad secret in grant_type=client_credentials&client_id=echo-client&client_secret=[REDACTED]',
      );
      for (const form of encodings(wrong)) expect(r.stderr + r.stdout).not.toContain(form);
      expectNoSecret('output', r.stderr + r.stdout);
    }
  });

  it('a secret mistyped as a flag is not quoted back', async () => {
    const r = await runBinary(['auth', 'login', `--client-secret=${SECRET}`], {
      env: { LEADCTL_CONFIG_DIR: fresh('flag') },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--client-secret=[REDACTED]');
    expect(r.stderr).not.toContain('Cs+/=');
  });
});

describe('environment problems are named, never exit 1', () => {
  const login = (env: Record<string, string>, base = 'https://api.example.com') =>
    runBinary(['--base-url', base, 'auth', 'login', '--client-id', CLIENT_ID, '--client-secret-stdin'], {
      env: { LEADCTL_RETRY_ATTEMPTS: '2', LEADCTL_RETRY_BASE_MS: '5', ...env },
      input: `${SECRET}\n`,
    });

  it('a malformed HTTPS_PROXY: exit 2 naming the proxy and the variable, before anything is sent', async () => {
    const r = await login({ LEADCTL_CONFIG_DIR: fresh('proxy'), HTTPS_PROXY: 'http://user:pr0xy-pw@[::1' });
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toMatch(
      /^Error: the proxy "http:\/\/\*\*\*@\[::1" \(from HTTPS_PROXY\) is not a valid proxy URL/m,
    );
    expect(errorLines(r.stderr)).toMatch(/^Hint: set HTTPS_PROXY to the proxy's address/m);
    expect(errorLines(r.stderr)).not.toContain('pr0xy-pw');
  });

  it('a dead proxy: exit 5 naming the proxy and its variable, not the base URL', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const { port } = dead.address() as AddressInfo;
    await new Promise((r) => dead.close(r));
    const r = await login({ LEADCTL_CONFIG_DIR: fresh('dead'), https_proxy: `http://127.0.0.1:${port}` });
    expect(r.code).toBe(5);
    expect(errorLines(r.stderr)).toContain(`could not reach the proxy http://127.0.0.1:${port} (from https_proxy)`);
    expect(errorLines(r.stderr)).toContain('ECONNREFUSED');
    expect(errorLines(r.stderr)).toMatch(/^Hint: check https_proxy/m);
    expect(errorLines(r.stderr)).not.toContain('--base-url');
  });

  it('a token lifetime past year 275760 is clamped: login works and says until when', async () => {
    expiresIn = '8640000000000000';
    try {
      const r = await login({ LEADCTL_CONFIG_DIR: fresh('ttl') }, echoUrl);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout);
      const expires = Date.parse(doc.token_expires_at);
      expect(expires).toBeGreaterThan(Date.now() + 300 * 86_400_000);
      expect(expires).toBeLessThan(Date.now() + 400 * 86_400_000);
    } finally {
      expiresIn = '3600';
    }
  });
});

/**
 * Runs the binary with `dir` read-only: a read-only bind mount in a private mount namespace (as
 * root, or as a user where user namespaces are allowed, as in CI), else mode 0500 (not root).
 * Returns undefined where neither can make a folder read-only for this user.
 */
function readOnlyRunner():
  | ((dir: string, args: string[], env: Record<string, string>) => Promise<RunResult>)
  | undefined {
  const probe = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o ro tmpfs "$0"', root], { stdio: 'ignore' });
  if (probe.status === 0) {
    return (dir, args, env) =>
      new Promise((resolve, reject) => {
        const base: Record<string, string> = {};
        for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) base[k] = v;
        const child = spawn(
          'unshare',
          [
            '-rm',
            'sh',
            '-c',
            'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"',
            dir,
            process.execPath,
            BIN,
            ...args,
          ],
          { env: { ...base, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
      });
  }
  if (process.getuid?.() !== 0) {
    return async (dir, args, env) => {
      chmodSync(dir, 0o500);
      try {
        return await runBinary(args, { env });
      } finally {
        chmodSync(dir, 0o700);
      }
    };
  }
  return undefined;
}

describe('a config folder that cannot be written', () => {
  const loginArgs = () => ['--base-url', echoUrl, 'auth', 'login', '--client-id', CLIENT_ID];

  it('under a file (ENOTDIR): auth login exits 2 naming the folder and what to do', async () => {
    const home = fresh('notdir');
    writeFileSync(join(home, 'file'), 'x');
    const dir = join(home, 'file', 'config');
    const r = await runBinary(loginArgs(), { env: { LEADCTL_CONFIG_DIR: dir, LEADCTL_CLIENT_SECRET: SECRET } });
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toContain(
      `Error: cannot save the profile "default" in ${dir}: a part of the path is a file, not a folder (ENOTDIR`,
    );
    expect(errorLines(r.stderr)).toMatch(
      /^Hint: make .* writable for this user, or point LEADCTL_CONFIG_DIR at a writable folder/m,
    );
  });

  const runReadOnly = readOnlyRunner();
  it(`read-only (${runReadOnly ? 'a read-only mount, or mode 0500' : 'impossible for this user: ENOTDIR covers it'}): login exits 2; a command whose new token cannot be kept warns and goes on`, async () => {
    const home = fresh('ro');
    const dir = join(home, 'config');
    mkdirSync(dir, { mode: 0o700 });
    if (!runReadOnly) {
      // Only root without the right to mount gets here: nothing can make a folder read-only for it.
      expect(process.getuid?.()).toBe(0);
      return;
    }
    const env = { LEADCTL_CONFIG_DIR: dir, LEADCTL_CLIENT_SECRET: SECRET };
    const r = await runReadOnly(dir, loginArgs(), env);
    expect(r.code, r.stderr).toBe(2);
    expect(errorLines(r.stderr)).toContain(`Error: cannot save the profile "default" in ${dir}: `);
    expect(errorLines(r.stderr)).toMatch(/: (it is on a read-only file system \(EROFS|permission denied \(EACCES)/);
    expect(errorLines(r.stderr)).toContain('LEADCTL_CONFIG_DIR');

    // A saved profile whose token has expired: the new token cannot be kept; the command still runs.
    const saved = await runBinary(loginArgs(), { env });
    expect(saved.code, saved.stderr).toBe(0);
    const file = join(dir, 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8'));
    config.profiles.default.token.expires_at = '2000-01-01T00:00:00.000Z';
    writeFileSync(file, JSON.stringify(config));
    const before = readFileSync(file, 'utf8');
    const systems = await runReadOnly(dir, ['-o', 'json', 'systems', 'ls'], {
      LEADCTL_CONFIG_DIR: dir,
      LEADCTL_RETRY_ATTEMPTS: '1',
    });
    // The echo server answers systems with a 500: what matters is the warning, and that it is not exit 1.
    expect(systems.code, systems.stderr).toBe(5);
    expect(errorLines(systems.stderr)).toMatch(
      /^Warning: the access token could not be saved for the next run: cannot save the access token of profile "default" in /m,
    );
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
