import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { currentStamp, describeStamp, hashFile, isRegularFile, sameStamp, stampOf } from '../../../src/ingest/stamp.js';

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

  it('hashes a file larger than its buffers as sha256sum would', async () => {
    const file = join(work, 'big.bin');
    // Random, so that a chunk hashed from the wrong one of the two buffers changes the digest.
    const bytes = randomBytes((1 << 20) * 2 + 17);
    writeFileSync(file, bytes);
    const hash = createHash('sha256');
    await hashFile(file, hash);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));
  });
});
