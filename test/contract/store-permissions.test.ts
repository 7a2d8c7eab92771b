import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startSandboxInProcess } from '../helpers/sandbox.js';

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
});
