import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  currentStamp,
  describeStamp,
  isRegularFile,
  sameStamp,
  sha256OfFile,
  stampOf,
} from '../../../src/ingest/stamp.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-stamp-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('input stamps', () => {
  it('tell a file that grew or was touched from one left alone', () => {
    const file = join(work, 'export.csv');
    writeFileSync(file, 'a,b\n');
    utimesSync(file, 1_700_000_000.1237, 1_700_000_000.1237);
    const before = currentStamp(file)!;
    expect(before.size).toBe(4);
    expect(sameStamp(before, currentStamp(file))).toBe(true);
    utimesSync(file, 1_700_000_001, 1_700_000_001);
    expect(sameStamp(before, currentStamp(file))).toBe(false);
    const touched = currentStamp(file)!;
    writeFileSync(file, 'a,b\n1,2\n');
    utimesSync(file, 1_700_000_001, 1_700_000_001);
    expect(sameStamp(touched, currentStamp(file))).toBe(false);
    expect(sameStamp(before, undefined)).toBe(false);
    expect(currentStamp(join(work, 'missing.csv'))).toBeUndefined();
  });

  it('describes a stamp with milliseconds rounded as Stats.mtime has them', () => {
    expect(describeStamp(stampOf({ size: 12, mtimeMs: 1_700_000_000_123.7 }))).toBe(
      '12 bytes, modified 2023-11-14T22:13:20.124Z',
    );
  });

  it('calls a directory not regular, and a missing path regular (so that opening it says what is wrong)', () => {
    const dir = join(work, 'dir');
    mkdirSync(dir, { recursive: true });
    expect(isRegularFile(dir)).toBe(false);
    expect(isRegularFile(join(work, 'missing.csv'))).toBe(true);
  });

  it('hashes files as sha256sum would: small ones here, large ones on a thread, larger than its buffer', async () => {
    for (const size of [0, 5, (1 << 20) * 2 + 17, 9 * 1024 * 1024 + 3]) {
      const file = join(work, `file-${size}.bin`);
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i += 4093) bytes[i] = i % 251;
      writeFileSync(file, bytes);
      expect(await sha256OfFile(file)).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  });

  it('fails for a file it cannot read, on the thread or not', async () => {
    await expect(sha256OfFile(join(work, 'missing.bin'))).rejects.toThrow(/ENOENT/);
    const dir = join(work, 'a-folder');
    mkdirSync(dir, { recursive: true });
    await expect(sha256OfFile(dir)).rejects.toThrow(/EISDIR/);
  });
});
