import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileChunks, READ_CHUNK, readAhead, readSmallFile } from '../../../src/io/open-file.js';

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

describe('readAhead', () => {
  const bytes = randomBytes(5 * 1000 + 17);
  const file = join(dir, 'ahead.bin');
  writeFileSync(file, bytes);

  it('gives the bytes in order, each chunk intact until the next is asked for', async () => {
    const handle = await open(file, 'r');
    let closed = 0;
    const copies: Buffer[] = [];
    for await (const chunk of readAhead(handle, 1000, async () => {
      closed++;
      await handle.close();
    })) {
      // The read of the next chunk runs meanwhile: it must not be landing in this one.
      await new Promise((resolve) => setTimeout(resolve, 5));
      copies.push(Buffer.from(chunk));
    }
    expect(copies.map((c) => c.length)).toEqual([1000, 1000, 1000, 1000, 1000, 17]);
    expect(Buffer.concat(copies).equals(bytes)).toBe(true);
    expect(closed).toBe(1);
  });

  it('closes the file once the read still running is over when the consumer stops early', async () => {
    const handle = await open(file, 'r');
    const events: string[] = [];
    const read = handle.read.bind(handle);
    // Each read says when it ends, to show the file was not closed under it.
    handle.read = ((...args: Parameters<typeof read>) =>
      read(...args).then((r) => {
        events.push('read');
        return r;
      })) as typeof handle.read;
    for await (const chunk of readAhead(handle, 1000, async () => {
      events.push('close');
      await handle.close();
    })) {
      expect(chunk.equals(bytes.subarray(0, 1000))).toBe(true);
      break;
    }
    expect(events).toEqual(['read', 'read', 'close']);
  });

  it('fails with the read that failed, and still closes the file', async () => {
    const handle = await open(file, 'r');
    let calls = 0;
    handle.read = (() => {
      calls++;
      return calls === 2 ? Promise.reject(new Error('EIO: i/o error, read')) : Promise.resolve({ bytesRead: 10 });
    }) as unknown as typeof handle.read;
    let closed = false;
    const chunks: number[] = [];
    await expect(
      (async () => {
        for await (const chunk of readAhead(handle, 10, async () => {
          closed = true;
          await handle.close();
        }))
          chunks.push(chunk.length);
      })(),
    ).rejects.toThrow('EIO');
    expect(chunks).toEqual([10]);
    expect(closed).toBe(true);
  });

  it('is how FileChunks reads a file larger than its chunk', async () => {
    const big = randomBytes(2 * READ_CHUNK + 3);
    const path = join(dir, 'chunks.bin');
    writeFileSync(path, big);
    const copies: Buffer[] = [];
    for await (const chunk of await FileChunks.open(path)) copies.push(Buffer.from(chunk));
    expect(copies.map((c) => c.length)).toEqual([READ_CHUNK, READ_CHUNK, 3]);
    expect(Buffer.concat(copies).equals(big)).toBe(true);
  });
});
