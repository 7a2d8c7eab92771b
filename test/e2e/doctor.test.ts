import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/version.js';
import { BIN, runBinary } from '../helpers/binary.js';
import {
  type Certificate,
  closedPort,
  makeCertificate,
  SERVICE_CLIENT_ID,
  SERVICE_CLIENT_SECRET,
  SERVICE_TOKEN,
  startConnectProxy,
  startTinyService,
  type TinyService,
} from '../helpers/doctor-servers.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { reportSkipped } from '../helpers/tiny-fs.js';

/** `leadctl doctor` through the built binary, as an operator runs it at 3 a.m. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-doctor-e2e-'));
const cronDir = join(work, 'cron-bin');
let certs: { valid: Certificate; expired: Certificate };
let n = 0;

beforeAll(() => {
  mkdirSync(cronDir);
  symlinkSync(process.execPath, join(cronDir, 'node'));
  symlinkSync(BIN, join(cronDir, 'leadctl'));
  const dir = join(work, 'certs');
  mkdirSync(dir);
  certs = {
    valid: makeCertificate(dir, 'service.doctor-test.invalid'),
    expired: makeCertificate(dir, 'service.doctor-test.invalid', true),
  };
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

/** An environment of its own: fresh folders, no proxy and no extra CA unless the test gives them. */
function env(extra: Record<string, string>): Record<string, string> {
  const root = join(work, `case-${++n}`);
  return {
    LEADCTL_CONFIG_DIR: join(root, 'config'),
    LEADCTL_STATE_DIR: join(root, 'state'),
    HTTPS_PROXY: '',
    https_proxy: '',
    HTTP_PROXY: '',
    http_proxy: '',
    NO_PROXY: '',
    no_proxy: '',
    NODE_EXTRA_CA_CERTS: '',
    LANG: 'C.UTF-8',
    ...extra,
  };
}

function credentials(baseUrl: string): Record<string, string> {
  return {
    LEADCTL_BASE_URL: baseUrl,
    LEADCTL_CLIENT_ID: SERVICE_CLIENT_ID,
    LEADCTL_CLIENT_SECRET: SERVICE_CLIENT_SECRET,
  };
}

function checks(stdout: string): Record<string, { status: string; value: string; hint: string | null }> {
  return Object.fromEntries((JSON.parse(stdout) as Array<{ name: string }>).map((c) => [c.name, c])) as never;
}

describe('leadctl doctor (built binary)', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandboxProcess();
  });
  afterAll(async () => {
    await sandbox.stop();
  });

  it('passes against a healthy sandbox: exit 0, every check ✓ but TLS, skipped for plain http to loopback', async () => {
    const e = env({
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    });
    const r = await runBinary(['doctor', '--cron-path', cronDir, '-o', 'table'], { env: e });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`leadctl ${packageVersion()} doctor: profile "default", ${sandbox.baseUrl}`);
    const marks = lines.slice(1, 16).map((l) => l.slice(0, 1));
    expect(marks.join('')).toBe('✓✓✓✓✓✓✓✓✓✓✓–✓✓✓');
    expect(lines[12]).toBe('– TLS            plain http to a loopback address (a local sandbox): no TLS');
    expect(lines.at(-1)).toBe('15 checks: 14 ok, 0 warnings, 0 failed, 1 skipped; all checks pass');
    expect(r.stdout).not.toContain(sandbox.clientSecret);
    expect(existsSync(e.LEADCTL_CONFIG_DIR!)).toBe(false);
    expect(existsSync(e.LEADCTL_STATE_DIR!)).toBe(false);
  });

  it('--offline sends nothing: the sandbox counts no request (and does count an online run)', async () => {
    const total = async () => (await sandbox.stats()).requests.total as number;
    const e = {
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    };
    // What looking at the counts costs by itself (the stats request may count itself).
    const a = await total();
    const look = (await total()) - a;
    const offline = await runBinary(['doctor', '--offline', '--cron-path', cronDir, '-o', 'json'], { env: env(e) });
    const b = await total();
    expect(offline.code).toBe(0);
    expect(b - a - look).toBe(look);
    expect(Object.values(checks(offline.stdout)).filter((c) => c.status === 'skip')).toHaveLength(5);
    const online = await runBinary(['doctor', '--cron-path', cronDir, '-o', 'json'], { env: env(e) });
    expect(online.code).toBe(0);
    expect((await total()) - b - look).toBe(4);
  });
});

describe('leadctl doctor against hostile ground (built binary)', () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  async function service(options: Parameters<typeof startTinyService>[0]): Promise<TinyService> {
    const s = await startTinyService(options);
    servers.push(s);
    return s;
  }

  it('through a proxy, with the CA given in NODE_EXTRA_CA_CERTS: every check passes', async () => {
    const s = await service({ tls: certs.valid, host: 'service.doctor-test.invalid' });
    const proxy = await startConnectProxy(s.port);
    servers.push(proxy);
    const r = await runBinary(['doctor', '--cron-path', cronDir, '-o', 'json'], {
      env: env({ ...credentials(s.baseUrl), HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: certs.valid.certFile }),
    });
    const c = checks(r.stdout);
    expect(r.code, r.stdout).toBe(0);
    expect(c.proxy).toMatchObject({ status: 'ok', value: expect.stringContaining('from HTTPS_PROXY, used for') });
    expect(c.tls).toMatchObject({
      status: 'ok',
      value: expect.stringMatching(
        new RegExp(
          `^certificate valid 29 more days, until \\d{4}-\\d\\d-\\d\\d \\(issued by service\\.doctor-test\\.invalid, TLSv1\\.3; trusting also NODE_EXTRA_CA_CERTS=${certs.valid.certFile.replace(/[.]/g, '\\.')}\\)$`,
        ),
      ),
    });
    for (const name of ['clock', 'token', 'lists-path']) expect(c[name]!.status).toBe('ok');
    // Every connection went through the proxy: the handshake of the TLS check, then the client's.
    expect(proxy.tunnels.length).toBeGreaterThanOrEqual(2);
    expect(new Set(proxy.tunnels)).toEqual(new Set([`service.doctor-test.invalid:${s.port}`]));
    expect(r.stdout).not.toContain(SERVICE_TOKEN);
  });

  it('an expired certificate, even a trusted one, fails TLS with its date and a hint (exit 5)', async () => {
    const s = await service({ tls: certs.expired, host: 'service.doctor-test.invalid' });
    const proxy = await startConnectProxy(s.port);
    servers.push(proxy);
    const r = await runBinary(['doctor', '--cron-path', cronDir, '-o', 'table'], {
      env: env({ ...credentials(s.baseUrl), HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: certs.expired.certFile }),
    });
    expect(r.code).toBe(5);
    const lines = r.stdout.split('\n');
    const tls = lines.findIndex((l) => l.startsWith('✗ TLS'));
    expect(lines[tls]).toMatch(
      /^✗ TLS {12}certificate of service\.doctor-test\.invalid:\d+ expired \d+ days ago, on 2020-02-01 \(/,
    );
    expect(lines[tls + 1]).toMatch(/^ {17}hint: whoever runs service\.doctor-test\.invalid:\d+ must renew it/);
    expect(r.stdout).toMatch(/; exit 5\n$/);
    expect(s.requests).toEqual([]);
  });

  it('a skewed Date header fails the clock, readable without colour (exit 2)', async () => {
    const s = await service({ dateOffsetMs: 3 * 3600_000 + 20 * 60_000 });
    const r = await runBinary(['doctor', '--cron-path', cronDir], {
      env: env({ ...credentials(s.baseUrl), NO_COLOR: '1' }),
    });
    expect(r.code).toBe(2);
    const c = checks(r.stdout);
    expect(c.clock).toMatchObject({
      status: 'fail',
      value: expect.stringMatching(/^clock 3 h 20 min behind the service \(Date: /),
      hint: expect.stringContaining('timedatectl set-ntp true'),
    });
  });

  it('a dead proxy fails with the variable named and a hint (exit 5)', async () => {
    const port = await closedPort();
    const r = await runBinary(['doctor', '--cron-path', cronDir, '-o', 'json'], {
      env: env({ ...credentials('https://service.doctor-test.invalid'), https_proxy: `http://127.0.0.1:${port}` }),
    });
    expect(r.code).toBe(5);
    expect(checks(r.stdout).proxy).toMatchObject({
      status: 'fail',
      value: `http://127.0.0.1:${port} from https_proxy, used for service.doctor-test.invalid: it does not answer (ECONNREFUSED)`,
      hint: 'start or fix the proxy, correct https_proxy, or, if service.doctor-test.invalid is reachable without it, add its host to NO_PROXY',
    });
  });
});

describe('leadctl doctor against a service that echoes what it is sent (built binary)', () => {
  /** Every character URL, form, JSON and HTML encodings treat specially. */
  const SECRET = `Dr+/= &"q'w\\e<r>%t€-2026`;
  const TOKEN = 'Tk+/=ZG9jdG9yIGVjaG8gdG9rZW4';
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const send = (status: number, doc: unknown) =>
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
        if (req.url === '/oauth/token') {
          if (new URLSearchParams(body).get('client_secret') !== SECRET)
            return send(401, { error: 'invalid_client', error_description: `bad secret in ${body}` });
          return send(200, { token_type: 'Bearer', expires_in: 3600, access_token: TOKEN });
        }
        const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
        send(500, {
          message: `Server Error: session ${token} (${encodeURIComponent(token)}, ${Buffer.from(token).toString('base64')})`,
          trace: `headers=${JSON.stringify(req.headers)}`,
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  function forms(value: string): string[] {
    return [
      value,
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
      JSON.stringify(value).slice(1, -1),
      Buffer.from(value).toString('base64'),
    ];
  }

  it.each([
    ['the lists path answered 500 with the token echoed', SECRET, 5],
    ['the token endpoint echoing the form of a refused secret', `${SECRET}+"wrong"`, 3],
  ])('%s: no secret or token on stdout or stderr (--verbose, table and JSON)', async (_name, secret, exit) => {
    for (const args of [
      ['-o', 'json'],
      ['--verbose', '-o', 'table'],
    ]) {
      const r = await runBinary(['doctor', '--cron-path', cronDir, ...args], {
        env: env({ LEADCTL_BASE_URL: baseUrl, LEADCTL_CLIENT_ID: 'echo-client', LEADCTL_CLIENT_SECRET: secret }),
      });
      expect(r.code).toBe(exit);
      expect(r.stdout).toContain('[REDACTED]');
      for (const value of [secret, TOKEN])
        for (const form of forms(value)) expect(r.stdout + r.stderr, form).not.toContain(form);
    }
  });
});

describe('leadctl doctor run by the cron job’s user (built binary)', () => {
  it('fails the state folder when a folder inside it belongs to another user (a run as root, once), as the push would', async () => {
    const nobody = 65534;
    const root = mkdtempSync(join(tmpdir(), 'leadctl-doctor-owner-'));
    try {
      const state = join(root, 'state');
      mkdirSync(join(state, 'journals'), { recursive: true, mode: 0o700 });
      mkdirSync(join(state, 'locks'), { mode: 0o755 });
      const config = join(root, 'config');
      mkdirSync(config, { mode: 0o700 });
      const asNobody = (args: string[]) =>
        spawnSync(
          'setpriv',
          ['--reuid', String(nobody), '--regid', String(nobody), '--clear-groups', process.execPath, BIN, ...args],
          {
            encoding: 'utf8',
            env: {
              ...process.env,
              ...env(credentials('https://service.doctor-test.invalid')),
              LEADCTL_STATE_DIR: state,
              LEADCTL_CONFIG_DIR: config,
              HOME: root,
            },
          },
        );
      const probe =
        process.getuid?.() === 0
          ? asNobody(['--version'])
          : { status: null, stderr: 'not root: cannot act as another user' };
      if (probe.status !== 0) {
        reportSkipped('doctor as the cron job’s user', `cannot run the binary as uid ${nobody}: ${probe.stderr}`);
        return;
      }
      // The folders belong to the cron job's user, but for locks/, made by root.
      chmodSync(root, 0o755);
      for (const p of [state, join(state, 'journals'), config]) chownSync(p, nobody, nobody);
      const run = asNobody(['doctor', '--offline', '-o', 'json']);
      expect(run.status, run.stderr).toBe(2);
      const check = (JSON.parse(run.stdout) as { name: string; status: string; value: string; hint: string }[]).find(
        (c) => c.status === 'fail',
      );
      expect(check?.value).toBe(`${state} (from LEADCTL_STATE_DIR): locks inside it is not writable`);
      expect(check?.hint).toContain('chown -R');
      // The folder given back, but a journal inside it root's (0600): the push could not read it.
      chownSync(join(state, 'locks'), nobody, nobody);
      writeFileSync(join(state, 'journals', 'k.ndjson'), '{}\n', { mode: 0o600 });
      const file = asNobody(['doctor', '--offline', '-o', 'json']);
      expect(file.status, file.stderr).toBe(2);
      const failed = (JSON.parse(file.stdout) as { status: string; value: string }[]).find((c) => c.status === 'fail');
      expect(failed?.value).toBe(`${state} (from LEADCTL_STATE_DIR): journals/k.ndjson inside it is not writable`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
