import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/version.js';
import { main } from '../../src/cli/main.js';
import { DeltaRecord } from '../../src/jobs/delta/record.js';
import { CHECK_NAMES } from '../../src/jobs/doctor/check.js';
import { BIN } from '../helpers/binary.js';
import {
  type Certificate,
  closedPort,
  makeCertificate,
  SERVICE_CLIENT_ID,
  SERVICE_CLIENT_SECRET,
  SERVICE_TOKEN,
  startConnectProxy,
  startCountingPort,
  startTinyService,
  type TinyService,
} from '../helpers/doctor-servers.js';
import { type ContractServer, type SeenRequest, startContractServer } from '../helpers/contract-server.js';
import { memoryIO } from '../helpers/memory-io.js';
import { startSandboxInProcess, type TestSandbox } from '../helpers/sandbox.js';

interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  value: string;
  hint: string | null;
}

const work = mkdtempSync(join(tmpdir(), 'leadctl-doctor-cmd-'));
let sandbox: TestSandbox;
let n = 0;
/** A PATH where cron would find this Node and this leadctl. */
const cronDir = join(work, 'cron-bin');

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
  mkdirSync(cronDir);
  symlinkSync(process.execPath, join(cronDir, 'node'));
  symlinkSync(BIN, join(cronDir, 'leadctl'));
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Fresh config and state folders (not created) for one run. */
function folders(): { config: string; state: string; root: string } {
  const root = join(work, `case-${++n}`);
  mkdirSync(root);
  return { root, config: join(root, 'config'), state: join(root, 'state') };
}

async function doctor(args: string[], env: Record<string, string>, options: { tty?: boolean } = {}) {
  const io = memoryIO({ env: { PATH: process.env.PATH ?? '', ...env }, tty: options.tty });
  const code = await main(['doctor', '--cron-path', cronDir, ...args], io);
  const stdout = io.stdoutText();
  const checks: Check[] = args.includes('json') ? JSON.parse(stdout) : [];
  const byName = Object.fromEntries(checks.map((c) => [c.name, c])) as Record<string, Check>;
  return { code, stdout, stderr: io.stderrText(), checks, byName };
}

/** The credentials of a tiny service, from the environment (no profile, no config file). */
function serviceEnv(s: TinyService, dirs: { config: string; state: string }): Record<string, string> {
  return {
    LEADCTL_CONFIG_DIR: dirs.config,
    LEADCTL_STATE_DIR: dirs.state,
    LEADCTL_BASE_URL: s.baseUrl,
    LEADCTL_CLIENT_ID: SERVICE_CLIENT_ID,
    LEADCTL_CLIENT_SECRET: SERVICE_CLIENT_SECRET,
  };
}

describe('doctor against a healthy sandbox', () => {
  it('passes: every check ok, TLS skipped as plain http to loopback; nothing saved, nothing secret printed', async () => {
    const dirs = folders();
    const login = memoryIO({
      env: { LEADCTL_CONFIG_DIR: dirs.config, LEADCTL_STATE_DIR: dirs.state },
      stdin: sandbox.clientSecret + '\n',
    });
    const loginArgs = ['--base-url', sandbox.baseUrl, '-o', 'json', 'auth', 'login'];
    expect(await main([...loginArgs, '--client-id', sandbox.clientId, '--client-secret-stdin'], login)).toBe(0);
    const configFile = join(dirs.config, 'config.json');
    const before = readFileSync(configFile);

    const r = await doctor(['-o', 'json'], { LEADCTL_CONFIG_DIR: dirs.config, LEADCTL_STATE_DIR: dirs.state });
    expect(r.code).toBe(0);
    expect(r.checks.map((c) => c.name)).toEqual([...CHECK_NAMES]);
    for (const c of r.checks) {
      expect(Object.keys(c)).toEqual(['name', 'status', 'value', 'hint']);
      if (c.name === 'tls') expect(c).toMatchObject({ status: 'skip', value: expect.stringMatching(/plain http/) });
      else expect(c, `${c.name}: ${c.value}`).toMatchObject({ status: 'ok', hint: null });
    }
    expect(r.byName.runtime!.value).toContain(process.version);
    expect(r.byName['cron-path']!.value).toContain(`leadctl at ${join(cronDir, 'leadctl')}`);
    expect(r.byName.credentials!.value).toContain(`client id ${sandbox.clientId} (profile)`);
    // In step, or a few seconds off on a loaded machine (the Date header has whole seconds).
    expect(r.byName.clock!.value).toMatch(/^clock (in step with the service|\d+ s (ahead of|behind) the service)/);
    expect(r.byName.token!.value).toMatch(/^a token came back in .* s, valid 1 h/);
    expect(r.byName['lists-path']!.value).toContain('/api/v1/lead-management/lists');
    // The token doctor obtained was not saved over the one login cached, and no secret was shown.
    expect(readFileSync(configFile).equals(before)).toBe(true);
    expect(r.stdout + r.stderr).not.toContain(sandbox.clientSecret);
    const saved = JSON.parse(before.toString('utf8'));
    expect(r.stdout + r.stderr).not.toContain(saved.profiles.default.token.access_token);
    // Not even the state folder was made (the lists probe remembers nothing).
    expect(existsSync(dirs.state)).toBe(false);
  });

  it('prints one line a check with ✓ ! ✗ –, the hint below, and a summary; ASCII marks in a C locale', async () => {
    const dirs = folders();
    const env = {
      LEADCTL_CONFIG_DIR: dirs.config,
      LEADCTL_STATE_DIR: dirs.state,
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
      NO_COLOR: '1',
    };
    const r = await doctor(['-o', 'table', '--cron-path', join(work, 'nowhere')], env);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`leadctl ${packageVersion()} doctor: profile "default", ${sandbox.baseUrl}`);
    expect(lines.find((l) => l.startsWith('✓ clock'))).toMatch(
      /^✓ clock {10}clock (in step with|\d+ s (ahead of|behind)) the service/,
    );
    expect(lines.find((l) => l.startsWith('– TLS'))).toBe(
      '– TLS            plain http to a loopback address (a local sandbox): no TLS',
    );
    const cron = lines.findIndex((l) => l.startsWith('! cron PATH'));
    expect(lines[cron]).toContain(`cron's PATH ${join(work, 'nowhere')} finds no leadctl and no node`);
    expect(lines[cron + 1]).toMatch(/^ {17}hint: in the crontab call `/);
    expect(r.stdout).toMatch(/\n15 checks: 13 ok, 1 warning, 0 failed, 1 skipped; all checks pass\n$/);
    expect(r.stdout).not.toContain('\u001b[');

    const c = await doctor(['-o', 'table', '--offline'], { ...env, LANG: 'C' });
    expect(c.stdout).toMatch(/^OK {3}runtime /m);
    expect(c.stdout).toMatch(/^SKIP DNS {12}not tried \(--offline\)$/m);
  });
});

describe('doctor changes nothing', () => {
  it('does not create the config or state folder, and --offline sends nothing at all', async () => {
    const s = await startTinyService();
    const proxy = await startCountingPort();
    try {
      const dirs = folders();
      const env = { ...serviceEnv(s, dirs), HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url };
      const offline = await doctor(['-o', 'json', '--offline'], env);
      expect(offline.code).toBe(0);
      expect(s.requests).toEqual([]);
      expect(proxy.connections()).toBe(0);
      for (const name of ['dns', 'tls', 'clock', 'token', 'lists-path'])
        expect(offline.byName[name]).toMatchObject({ status: 'skip', value: 'not tried (--offline)' });
      expect(offline.byName.proxy).toMatchObject({ status: 'skip', value: expect.stringContaining('--offline') });
      expect(offline.byName['config-folder']!.value).toContain('not made yet');

      // The same run online does reach both (so the zeros above are --offline's doing).
      const online = await doctor(['-o', 'json'], env);
      expect(online.code).toBe(0);
      expect(s.requests).toEqual([
        'GET /',
        'POST /oauth/token',
        'GET /api/v1/lead-management/lists',
        'GET /api/v1/list-manager/lists',
      ]);
      expect(proxy.connections()).toBe(1);
      expect(online.byName.proxy).toMatchObject({
        status: 'ok',
        value: `${proxy.url} from HTTPS_PROXY, not used: plain http is never proxied (it only goes to this machine)`,
      });
      expect(existsSync(dirs.config)).toBe(false);
      expect(existsSync(dirs.state)).toBe(false);
      expect(online.stdout).not.toContain(SERVICE_CLIENT_SECRET);
      expect(online.stdout).not.toContain(SERVICE_TOKEN);
    } finally {
      await Promise.all([s.close(), proxy.close()]);
    }
  });
});

describe('doctor against a hostile service', () => {
  it('a Date header hours off fails the clock with a hint (exit 2); minutes off warns', async () => {
    const behind = await startTinyService({ dateOffsetMs: -5 * 3600_000 });
    const ahead = await startTinyService({ dateOffsetMs: 2 * 60_000 + 10_000 });
    try {
      const r = await doctor(['-o', 'json'], serviceEnv(behind, folders()));
      expect(r.code).toBe(2);
      expect(r.byName.clock).toMatchObject({
        status: 'fail',
        value: expect.stringMatching(/^clock 5 h ahead of the service \(Date: /),
        hint: expect.stringContaining('NTP'),
      });
      // The rest still ran: the token and lists do not depend on the clock.
      expect(r.byName.token!.status).toBe('ok');
      const w = await doctor(['-o', 'json'], serviceEnv(ahead, folders()));
      expect(w.code).toBe(0);
      expect(w.byName.clock).toMatchObject({
        status: 'warn',
        value: expect.stringMatching(/^clock 2 min \d+ s behind the service/),
      });
    } finally {
      await Promise.all([behind.close(), ahead.close()]);
    }
  });

  describe('with certificates', () => {
    let expired: Certificate;
    let named: Certificate;
    beforeAll(() => {
      const dir = join(work, 'certs');
      mkdirSync(dir);
      expired = makeCertificate(dir, '127.0.0.1', true);
      named = makeCertificate(dir, 'service.doctor-test.invalid');
    });

    it('an expired certificate fails TLS with how long ago and a hint (exit 5); nothing is sent after', async () => {
      const s = await startTinyService({ tls: expired });
      try {
        const r = await doctor(['-o', 'json'], serviceEnv(s, folders()));
        expect(r.code).toBe(5);
        expect(r.byName.tls).toMatchObject({
          status: 'fail',
          value: expect.stringMatching(/^certificate of 127\.0\.0\.1:\d+ expired \d+ days ago, on 2020-02-01/),
          hint: expect.stringContaining('must renew it'),
        });
        for (const name of ['clock', 'token', 'lists-path'])
          expect(r.byName[name]).toMatchObject({ status: 'skip', value: expect.stringContaining('see tls') });
        expect(s.requests).toEqual([]);
      } finally {
        await s.close();
      }
    });

    it('goes through the proxy the client would use: the CONNECT tunnel, the host resolved by the proxy', async () => {
      const s = await startTinyService({ tls: named, host: 'service.doctor-test.invalid' });
      const proxy = await startConnectProxy(s.port);
      try {
        const env = { ...serviceEnv(s, folders()), https_proxy: proxy.url };
        const r = await doctor(['-o', 'json'], env);
        expect(r.byName.proxy).toMatchObject({
          status: 'ok',
          value: `${proxy.url} from https_proxy, used for service.doctor-test.invalid:${s.port}: it answers`,
        });
        expect(r.byName.dns).toMatchObject({ status: 'skip', value: expect.stringContaining('resolved by the proxy') });
        expect(proxy.tunnels).toEqual([`service.doctor-test.invalid:${s.port}`]);
        // In this process Node's CA store does not hold the test's certificate (the e2e test gives it
        // with NODE_EXTRA_CA_CERTS): untrusted, with the way to trust it.
        expect(r.byName.tls).toMatchObject({
          status: 'fail',
          value: expect.stringContaining('not trusted: DEPTH_ZERO_SELF_SIGNED_CERT'),
          hint: expect.stringContaining('NODE_EXTRA_CA_CERTS'),
        });
        expect(r.code).toBe(5);
      } finally {
        await Promise.all([proxy.close(), s.close()]);
      }
    });
  });

  it('a dead proxy: a failure when the base URL goes through it (exit 5), a warning when it does not', async () => {
    const port = await closedPort();
    const dirs = folders();
    const env = {
      LEADCTL_CONFIG_DIR: dirs.config,
      LEADCTL_STATE_DIR: dirs.state,
      LEADCTL_BASE_URL: 'https://service.doctor-test.invalid',
      LEADCTL_CLIENT_ID: SERVICE_CLIENT_ID,
      LEADCTL_CLIENT_SECRET: SERVICE_CLIENT_SECRET,
      HTTPS_PROXY: `http://user:proxy-password@127.0.0.1:${port}`,
    };
    const r = await doctor(['-o', 'json'], env);
    expect(r.code).toBe(5);
    expect(r.byName.proxy).toMatchObject({
      status: 'fail',
      value: `http://127.0.0.1:${port} (with credentials, not shown) from HTTPS_PROXY, used for service.doctor-test.invalid: it does not answer (ECONNREFUSED)`,
      hint: expect.stringContaining('correct HTTPS_PROXY'),
    });
    for (const name of ['dns', 'tls', 'clock', 'token', 'lists-path'])
      expect(r.byName[name]).toMatchObject({ status: 'skip', value: expect.stringContaining('proxy does not answer') });
    expect(r.stdout).not.toContain('proxy-password');

    const s = await startTinyService();
    try {
      const w = await doctor(['-o', 'json'], { ...serviceEnv(s, folders()), HTTPS_PROXY: `http://127.0.0.1:${port}` });
      expect(w.code).toBe(0);
      expect(w.byName.proxy).toMatchObject({ status: 'warn', hint: expect.stringContaining('unset HTTPS_PROXY') });
    } finally {
      await s.close();
    }
  });

  it('--verbose logs each request on stderr, secrets and tokens redacted', async () => {
    const s = await startTinyService();
    try {
      const r = await doctor(['-o', 'json', '-v'], serviceEnv(s, folders()));
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/^\[http\] GET \/ → 404 in .* \(for its Date header\)$/m);
      expect(r.stderr).toMatch(/^\[http\] POST \/oauth\/token → 200 in /m);
      expect(r.stderr).toMatch(/^\[http\] GET \/api\/v1\/list-manager\/lists\?page=1 → 404 in /m);
      expect(r.stdout + r.stderr).not.toContain(SERVICE_CLIENT_SECRET);
      expect(r.stdout + r.stderr).not.toContain(SERVICE_TOKEN);
    } finally {
      await s.close();
    }
  });

  it('refused credentials fail the token check (exit 3) without showing the secret', async () => {
    const s = await startTinyService();
    try {
      const r = await doctor(['-o', 'json'], {
        ...serviceEnv(s, folders()),
        LEADCTL_CLIENT_SECRET: 'wrong-secret-value-1234',
      });
      expect(r.code).toBe(3);
      expect(r.byName.token!.status).toBe('fail');
      expect(r.byName['lists-path']).toMatchObject({ status: 'skip', value: 'not tried: no token (see token)' });
      expect(r.stdout).not.toContain('wrong-secret-value-1234');
    } finally {
      await s.close();
    }
  });

  it('names the lists prefix that answers, and remembers nothing', async () => {
    const s = await startTinyService({ listsPrefix: 'list-manager' });
    try {
      const dirs = folders();
      const r = await doctor(['-o', 'json'], serviceEnv(s, dirs));
      expect(r.byName['lists-path']).toMatchObject({
        status: 'ok',
        value: 'lists answer at /api/v1/list-manager/lists (/api/v1/lead-management/lists: no such route)',
      });
      const only = await doctor(['-o', 'json', '--lists-path', '/api/v1/lead-management/lists'], serviceEnv(s, dirs));
      expect(only.code).toBe(2);
      expect(only.byName['lists-path']).toMatchObject({
        status: 'fail',
        hint: expect.stringContaining('check --lists-path /api/v1/lead-management/lists'),
      });
      expect(existsSync(dirs.state)).toBe(false);
    } finally {
      await s.close();
    }
  });
});

describe('doctor on this machine (--offline)', () => {
  function loggedIn(): { config: string; state: string; root: string } {
    const dirs = folders();
    mkdirSync(dirs.config, { mode: 0o700 });
    const profile = { base_url: sandbox.baseUrl, client_id: 'id-1', client_secret: 'profile-secret-value' };
    writeFileSync(
      join(dirs.config, 'config.json'),
      JSON.stringify({
        current_profile: 'nightly',
        profiles: { nightly: profile, other: { ...profile, client_id: 'id-2' } },
      }),
      { mode: 0o600 },
    );
    return dirs;
  }

  it('a config folder others can list is a warning; a config file others can read fails (exit 2); modes left as found', async () => {
    const dirs = loggedIn();
    const env = { LEADCTL_CONFIG_DIR: dirs.config, LEADCTL_STATE_DIR: dirs.state };
    chmodSync(dirs.config, 0o755);
    const w = await doctor(['-o', 'json', '--offline'], env);
    expect(w.code).toBe(0);
    expect(w.byName['config-folder']).toMatchObject({
      status: 'warn',
      value: expect.stringContaining('0755 (others can list it)'),
      hint: `chmod 700 ${dirs.config}`,
    });
    chmodSync(join(dirs.config, 'config.json'), 0o644);
    const f = await doctor(['-o', 'json', '--offline'], env);
    expect(f.code).toBe(2);
    expect(f.byName['config-folder']).toMatchObject({
      status: 'fail',
      value: expect.stringContaining('config.json 0644: others can read it'),
      hint: expect.stringContaining(`chmod -R go-rwx ${dirs.config}`),
    });
    expect(statSync(dirs.config).mode & 0o777).toBe(0o755);
    expect(statSync(join(dirs.config, 'config.json')).mode & 0o777).toBe(0o644);
    expect(f.stdout).not.toContain('profile-secret-value');
  });

  it('a config file that is not JSON fails credentials (exit 2) without quoting it', async () => {
    const dirs = folders();
    mkdirSync(dirs.config, { mode: 0o700 });
    writeFileSync(
      join(dirs.config, 'config.json'),
      '{"profiles":{"default":{"base_url":"http://127.0.0.1:1","client_secret":SUPERSECRETVALUE}}}',
      { mode: 0o600 },
    );
    const r = await doctor(['-o', 'json', '--offline'], {
      LEADCTL_CONFIG_DIR: dirs.config,
      LEADCTL_STATE_DIR: dirs.state,
    });
    expect(r.code).toBe(2);
    expect(r.byName.credentials).toMatchObject({
      status: 'fail',
      value: `${join(dirs.config, 'config.json')} cannot be read: not valid JSON`,
    });
    expect(r.byName['base-url']).toMatchObject({ status: 'fail', value: expect.stringContaining('not known') });
    expect(r.stdout + r.stderr).not.toMatch(/SUPERSE/);
  });

  it('a state folder that cannot be made fails (exit 2)', async () => {
    const dirs = folders();
    writeFileSync(join(dirs.root, 'a-file'), '');
    const r = await doctor(['-o', 'json', '--offline'], {
      LEADCTL_CONFIG_DIR: dirs.config,
      LEADCTL_STATE_DIR: join(dirs.root, 'a-file', 'state'),
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: 'id',
      LEADCTL_CLIENT_SECRET: 'secret-1234',
    });
    expect(r.code).toBe(2);
    expect(r.byName['state-folder']).toMatchObject({ status: 'fail', value: expect.stringContaining('ENOTDIR') });
  });

  it('respects --profile and LEADCTL_PROFILE; a profile that does not exist fails (exit 2)', async () => {
    const dirs = loggedIn();
    const env = { LEADCTL_CONFIG_DIR: dirs.config, LEADCTL_STATE_DIR: dirs.state };
    const current = await doctor(['-o', 'json', '--offline'], env);
    expect(current.byName.credentials!.value).toBe(
      'profile "nightly" (profile), client id id-1 (profile), secret set (profile)',
    );
    const flag = await doctor(['-o', 'json', '--offline', '--profile', 'other'], {
      ...env,
      LEADCTL_PROFILE: 'nightly',
    });
    expect(flag.byName.credentials!.value).toContain('profile "other" (flag), client id id-2');
    const envOnly = await doctor(['-o', 'json', '--offline'], { ...env, LEADCTL_PROFILE: 'other' });
    expect(envOnly.byName.credentials!.value).toContain('profile "other" (environment)');
    const missing = await doctor(['-o', 'json', '--offline', '-p', 'nope'], env);
    expect(missing.code).toBe(2);
    expect(missing.byName.credentials).toMatchObject({ status: 'fail', value: 'there is no profile named "nope"' });
    const id = await doctor(['-o', 'json', '--offline'], { ...env, LEADCTL_CLIENT_ID: 'env-id' });
    // Another client id: the profile's secret is not paired with it.
    expect(id.code).toBe(3);
    expect(id.byName.credentials!.value).toContain('client id env-id (environment), no secret');
  });

  it('names a profile of the config file that leadctl cannot read (a hand edit) as a warning', async () => {
    const dirs = loggedIn();
    const file = join(dirs.config, 'config.json');
    const config = JSON.parse(readFileSync(file, 'utf8'));
    config.profiles.broken = { base_url: 12 };
    writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
    const r = await doctor(['-o', 'json', '--offline'], {
      LEADCTL_CONFIG_DIR: dirs.config,
      LEADCTL_STATE_DIR: dirs.state,
    });
    expect(r.code).toBe(0);
    expect(r.byName.credentials).toMatchObject({
      status: 'warn',
      value: `profile "nightly" (profile), client id id-1 (profile), secret set (profile); ${file} also holds profile "broken" in a shape leadctl does not read (ignored)`,
    });
  });

  it('a plain-http base URL off this machine fails base-url (exit 2), and nothing is tried', async () => {
    const dirs = folders();
    const r = await doctor(['-o', 'json', '--base-url', 'http://service.doctor-test.invalid'], {
      LEADCTL_CONFIG_DIR: dirs.config,
      LEADCTL_STATE_DIR: dirs.state,
      LEADCTL_CLIENT_ID: 'id',
      LEADCTL_CLIENT_SECRET: 'secret-1234',
    });
    expect(r.code).toBe(2);
    expect(r.byName['base-url']).toMatchObject({ status: 'fail', value: expect.stringContaining('must use https') });
    expect(r.byName.dns).toMatchObject({ status: 'skip', value: expect.stringContaining('no usable base URL') });
  });

  it('a damaged delta record is a warning saying what the next push does, and is left byte for byte', async () => {
    const dirs = loggedIn();
    const target = { profile: 'nightly', baseUrl: sandbox.baseUrl, clientId: 'id-1' };
    const record = DeltaRecord.open(dirs.state, dirs.config, target, true)!;
    record.settle(
      [{ id: record.digest('customer', 'C1'), payload: record.digest('payload', '{}') }],
      [],
      Date.now(),
      'run-1',
    );
    record.close();
    const env = { LEADCTL_CONFIG_DIR: dirs.config, LEADCTL_STATE_DIR: dirs.state };
    const good = await doctor(['-o', 'json', '--offline'], env);
    expect(good.byName['delta-record']).toMatchObject({
      status: 'ok',
      value: expect.stringMatching(/^1 record file intact .*; this profile's holds 1 customer, last sent/),
    });

    const file = record.path!;
    const bytes = readFileSync(file);
    const damaged = Buffer.from(bytes);
    damaged.fill(0x5a, 4096, Math.min(bytes.length, 4096 * 4));
    writeFileSync(file, damaged);
    const listing = readdirSync(join(dirs.state, 'records'));
    const mtime = statSync(file).mtimeMs;

    const r = await doctor(['-o', 'json', '--offline'], env);
    expect(r.code).toBe(0);
    expect(r.byName['delta-record']).toMatchObject({
      status: 'warn',
      value: expect.stringMatching(/^1 of 1 record files damaged: .*\.sqlite \(database disk image is malformed\)$/),
      hint: 'the next --changed-only push sets it aside (NAME.corrupt-TIME) and sends everything once; or delete it now with `leadctl --profile nightly state forget`',
    });
    expect(readFileSync(file).equals(damaged)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(mtime);
    expect(readdirSync(join(dirs.state, 'records'))).toEqual(listing);

    // What a push set aside earlier is counted, for someone to delete.
    writeFileSync(file, bytes);
    writeFileSync(`${file}.corrupt-20261126T031500Z`, damaged);
    const after = await doctor(['-o', 'json', '--offline'], env);
    expect(after.byName['delta-record']).toMatchObject({
      status: 'ok',
      value: expect.stringContaining('; 1 file set aside as corrupt earlier ('),
    });
  });

  it('journals: a torn last line is normal, a damaged line in the middle is a warning', async () => {
    const dirs = loggedIn();
    const journals = join(dirs.state, 'journals');
    mkdirSync(journals, { recursive: true, mode: 0o700 });
    const header = JSON.stringify({ type: 'header', version: 1, key: 'k', settings: {} });
    const ack = (chunk: number) => JSON.stringify({ type: 'ack', chunk, first: 'a', last: 'b', customers: 1 });
    writeFileSync(join(journals, 'a.ndjson'), `${header}\n${ack(0)}\n{"type":"ac`, { mode: 0o600 });
    writeFileSync(join(journals, 'b.ndjson'), `${header}\n${ack(0)}\n{"type":"complete","at":"x"}\n`, { mode: 0o600 });
    const env = { LEADCTL_CONFIG_DIR: dirs.config, LEADCTL_STATE_DIR: dirs.state };
    const r = await doctor(['-o', 'json', '--offline'], env);
    expect(r.byName.journals).toMatchObject({
      status: 'ok',
      value:
        '2 journals: 1 complete, 1 of an interrupted or failed push (`--resume` continues it), 1 with a last line torn by a crash (ignored, as designed)',
    });
    writeFileSync(join(journals, 'b.ndjson'), `${header}\n{broken\n${ack(1)}\n`, { mode: 0o600 });
    const w = await doctor(['-o', 'json', '--offline'], env);
    expect(w.code).toBe(0);
    expect(w.byName.journals).toMatchObject({
      status: 'warn',
      value: expect.stringContaining('b.ndjson (line 2 unreadable: --resume sends those chunks again)'),
    });
  });
});

describe('the status taxonomy, as doctor reports it (one attempt each, never retried)', () => {
  let status = 200;
  let portal = false;
  let target: (r: SeenRequest) => boolean = () => false;
  let server: ContractServer;
  beforeAll(async () => {
    server = await startContractServer({
      listsPrefix: 'lead-management',
      answer: (req) =>
        target(req) && portal
          ? {
              status: 200,
              body: '<!DOCTYPE html><html><title>Wi-Fi</title></html>',
              headers: { 'content-type': 'text/html' },
            }
          : target(req) && status !== 200
            ? { status, body: { message: 'No.' } }
            : undefined,
    });
  });
  afterAll(() => server.close());

  const token = (r: SeenRequest) => r.method === 'POST' && r.path === '/oauth/token';
  const lists = (r: SeenRequest) => r.method === 'GET' && r.path === '/api/v1/lead-management/lists';
  const CASES = [
    {
      name: 'token',
      check: 'token',
      target: token,
      exit: (s: number) => ([400, 401, 403].includes(s) ? 3 : s >= 429 ? 5 : 2),
    },
    {
      name: 'lists-path',
      check: 'lists-path',
      target: lists,
      exit: (s: number) => (s === 401 ? 3 : s === 403 ? 0 : s >= 429 ? 5 : 2),
    },
  ];

  describe.each(CASES)('$name answered', (c) => {
    it.each([400, 401, 403, 404, 405, 409, 410, 414, 422, 429, 500])('HTTP %i', async (code) => {
      status = code;
      target = c.target;
      const before = server.seen.filter(c.target).length;
      const dirs = folders();
      const r = await doctor(['-o', 'json'], {
        LEADCTL_BASE_URL: server.baseUrl,
        LEADCTL_CLIENT_ID: server.clientId,
        LEADCTL_CLIENT_SECRET: server.clientSecret,
        LEADCTL_CONFIG_DIR: dirs.config,
        LEADCTL_STATE_DIR: dirs.state,
      });
      expect(r.code, JSON.stringify(r.byName[c.check])).toBe(c.exit(code));
      expect(r.byName[c.check]!.status).toBe(code === 403 && c.name === 'lists-path' ? 'warn' : 'fail');
      // Once, or twice for a 401 on lists (a new token, once, as every command does).
      expect(server.seen.filter(c.target).length - before).toBe(code === 401 && c.name === 'lists-path' ? 2 : 1);
      expect(r.stdout).not.toContain(server.clientSecret);
      status = 200;
    });

    it('HTTP 200 with a captive portal page: no answer, exit 5, sent once', async () => {
      portal = true;
      target = c.target;
      try {
        const before = server.seen.filter(c.target).length;
        const dirs = folders();
        const r = await doctor(['-o', 'json'], {
          LEADCTL_BASE_URL: server.baseUrl,
          LEADCTL_CLIENT_ID: server.clientId,
          LEADCTL_CLIENT_SECRET: server.clientSecret,
          LEADCTL_CONFIG_DIR: dirs.config,
          LEADCTL_STATE_DIR: dirs.state,
        });
        expect(r.code).toBe(5);
        expect(r.byName[c.check]).toMatchObject({
          status: 'fail',
          value: expect.stringMatching(/not a well-formed answer of the service \(HTTP 200, content type text\/html/),
        });
        expect(server.seen.filter(c.target).length - before).toBe(1);
      } finally {
        portal = false;
      }
    });
  });
});
