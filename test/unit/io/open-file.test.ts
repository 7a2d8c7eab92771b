import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSmallFile } from '../../../src/io/open-file.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-open-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const posix = process.platform !== 'win32';
const tooLarge = (size: number | undefined) => new Error(`too large: ${size ?? 'unknown'}`);

describe('readSmallFile', () => {
  it('reads a small file whole, and refuses a larger one by its size before reading', async () => {
    writeFileSync(join(dir, 'small.txt'), 'secret\n');
    writeFileSync(join(dir, 'large.txt'), 'z'.repeat(65));
    expect((await readSmallFile(join(dir, 'small.txt'), 64, tooLarge)).toString()).toBe('secret\n');
    await expect(readSmallFile(join(dir, 'large.txt'), 64, tooLarge)).rejects.toThrow('too large: 65');
    await expect(readSmallFile(join(dir, 'missing.txt'), 64, tooLarge)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readSmallFile(dir, 64, tooLarge)).rejects.toMatchObject({ code: 'EISDIR' });
  });

  it.runIf(posix)('refuses an endless device once past the limit', async () => {
    await expect(readSmallFile('/dev/zero', 1 << 16, tooLarge)).rejects.toThrow('too large: unknown');
  });

  it.runIf(posix)('reads a FIFO (a password manager through <(…)) once its writer has written', async () => {
    const path = join(dir, 'secret.fifo');
    execFileSync('mkfifo', [path]);
    const reading = readSmallFile(path, 64, tooLarge);
    const writer = spawn('sh', ['-c', `sleep 0.2; printf 's3cr3t\\n' > '${path}'`]);
    // Listened for at once: the writer may be done before the reading is.
    const written = once(writer, 'close');
    expect((await reading).toString()).toBe('s3cr3t\n');
    await written;
  });
});
