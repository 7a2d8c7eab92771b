import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runBinary, stderrDocument } from '../helpers/binary.js';
import { startSandboxInProcess, startSandboxProcess } from '../helpers/sandbox.js';
import { apiClient, getToken } from './support.js';

describe('the sandbox store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'leadctl-sandbox-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the account, data and tokens across restarts with --data-dir', async () => {
    const first = await startSandboxProcess(['--data-dir', dir]);
    let token: string;
    let listId: number;
    try {
      token = await getToken(first);
      const created = await apiClient(first.baseUrl, token).post('/api/v1/lead-management/lists', {
        name: 'kept',
        type: 'ZIP Codes',
        list: ['78701'],
      });
      listId = created.body.data.id;
    } finally {
      await first.stop();
    }
    const second = await startSandboxProcess(['--data-dir', dir]);
    try {
      expect(second.clientId).toBe(first.clientId);
      expect(second.clientSecret).toBe(first.clientSecret);
      expect(second.campaigns).toEqual(first.campaigns);
      const res = await apiClient(second.baseUrl, token).get(`/api/v1/lead-management/lists/${listId}`);
      expect(res.status).toBe(200);
      expect(res.body.data.name).toBe('kept');
      expect((await second.stats()).list_items).toBe(1);
    } finally {
      await second.stop();
    }
  });

  it('defaults the store to $XDG_DATA_HOME/leadctl/sandbox', async () => {
    const xdg = join(dir, 'xdg');
    const child = spawn(process.execPath, [BIN, 'sandbox', 'start', '--port', '0', '--output', 'json'], {
      env: { ...process.env, XDG_DATA_HOME: xdg },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.once('exit', () => reject(new Error('sandbox exited early')));
    });
    expect(JSON.parse(line).base_url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(existsSync(join(xdg, 'leadctl', 'sandbox', 'sandbox.sqlite'))).toBe(true);
  });

  it('--memory starts empty every time', async () => {
    const a = await startSandboxProcess();
    const b = await startSandboxProcess();
    try {
      expect(a.clientSecret).not.toBe(b.clientSecret);
      expect((await b.stats()).lists).toBe(0);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('refuses --memory with --data-dir, and bad flag values, as usage errors', async () => {
    const both = await runBinary(['sandbox', 'start', '--memory', '--data-dir', dir]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/memory/);
    const rate = await runBinary(['sandbox', 'start', '--memory', '--fail-rate', '1.5']);
    expect(rate.code).toBe(2);
    expect(rate.stderr).toContain('--fail-rate');
    const ttl = await runBinary(['sandbox', 'start', '--memory', '--offer-ttl', '100']);
    expect(ttl.code).toBe(2);
  });

  it('a corrupt store is an environment error (exit 2) naming the file and what to do, never a bug (exit 1)', async () => {
    const good = join(dir, 'good');
    await (await startSandboxInProcess({ dataDir: good })).stop();
    const garbage = join(dir, 'garbage');
    const truncated = join(dir, 'truncated');
    mkdirSync(garbage);
    mkdirSync(truncated);
    writeFileSync(join(garbage, 'sandbox.sqlite'), Buffer.alloc(8192, 0x5a));
    writeFileSync(join(truncated, 'sandbox.sqlite'), readFileSync(join(good, 'sandbox.sqlite')).subarray(0, 6000));
    for (const dataDir of [garbage, truncated]) {
      const res = await runBinary(['sandbox', 'start', '--port', '0', '--data-dir', dataDir]);
      expect(res.code, res.stderr).toBe(2);
      const error = stderrDocument(res.stderr).error;
      expect(error.message).toContain(join(dataDir, 'sandbox.sqlite'));
      expect(error.message).toMatch(/damaged or not a sandbox store/);
      expect(error.code).toBe('environment');
      expect(error.hint).toMatch(/move it aside/);
      expect(error.hint).toContain('--memory');
    }
    const notAFolder = await runBinary([
      'sandbox',
      'start',
      '--port',
      '0',
      '--data-dir',
      join(garbage, 'sandbox.sqlite', 'sub'),
    ]);
    expect(notAFolder.code).toBe(2);
    const inTheWay = stderrDocument(notAFolder.stderr).error;
    expect(inTheWay.code).toBe('environment');
    expect(inTheWay.message).toMatch(/folder .*sandbox\.sqlite\/sub cannot be made: a file is in the way \(ENOTDIR\)/);
  });
});
