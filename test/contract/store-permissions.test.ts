import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandboxInProcess } from '../helpers/sandbox.js';
import { apiClient, getToken } from './support.js';

const root = mkdtempSync(join(tmpdir(), 'leadctl-store-mode-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the sandbox store folder', () => {
  it('is created readable by its owner only (it holds the client secret and SSNs)', async () => {
    const dataDir = join(root, 'nested', 'sandbox');
    const sb = await startSandboxInProcess({ dataDir });
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, 'sandbox.sqlite')).isFile()).toBe(true);
    } finally {
      await sb.stop();
    }
  });

  const mode = (path: string) => statSync(path).mode & 0o777;

  it("keeps the database and SQLite's -wal and -shm files 0600 under a permissive umask", async () => {
    const dataDir = join(root, 'umask', 'sandbox');
    const umask = process.umask(0o022);
    try {
      const sb = await startSandboxInProcess({ dataDir });
      try {
        // A write, so that SQLite has made its write-ahead log and shared-memory files.
        const api = apiClient(sb.baseUrl, await getToken(sb));
        expect(
          (await api.post('/api/v1/lead-management/lists', { name: 'n', type: 'ZIP Codes', list: ['78701'] })).status,
        ).toBe(201);
        for (const name of ['sandbox.sqlite', 'sandbox.sqlite-wal', 'sandbox.sqlite-shm']) {
          expect(existsSync(join(dataDir, name)), name).toBe(true);
          expect(mode(join(dataDir, name)), name).toBe(0o600);
        }
        expect(mode(dataDir)).toBe(0o700);
        expect(mode(join(root, 'umask'))).toBe(0o700);
      } finally {
        await sb.stop();
      }
    } finally {
      process.umask(umask);
    }
  });

  it('tightens a store folder and files an older version left readable by others', async () => {
    const dataDir = join(root, 'older');
    await (await startSandboxInProcess({ dataDir })).stop();
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'sandbox.sqlite'), 0o644);
    const sb = await startSandboxInProcess({ dataDir });
    try {
      expect(mode(dataDir)).toBe(0o700);
      expect(mode(join(dataDir, 'sandbox.sqlite'))).toBe(0o600);
      expect(sb.sandbox.warnings).toEqual([]);
    } finally {
      await sb.stop();
    }
  });

  it('leaves a folder holding other files as it is, keeps the store 0600 and says so', async () => {
    const dataDir = join(root, 'shared');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'notes.txt'), 'not the sandbox');
    const sb = await startSandboxInProcess({ dataDir });
    try {
      expect(mode(dataDir)).toBe(0o755);
      expect(mode(join(dataDir, 'sandbox.sqlite'))).toBe(0o600);
      expect(sb.sandbox.warnings).toEqual([expect.stringContaining(`${dataDir} can be read by other users`)]);
    } finally {
      await sb.stop();
    }
  });
});
