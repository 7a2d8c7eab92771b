import { constants, open as openFd, type Stats } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';

/** Bytes read from a file at a time. */
export const READ_CHUNK = 256 * 1024;

/**
 * The bytes of a path. A FIFO (or `<(command)`) is opened without blocking and read as a pipe:
 * a blocking open of a FIFO nobody writes to would hold a thread of the pool for ever, and with
 * it the process's exit, so that not even SIGTERM could end it.
 */
export async function openByteStream(full: string, info: Stats): Promise<Readable> {
  if (info.isFIFO()) {
    // A bare descriptor, owned by the socket from here on (a FileHandle would close it again when collected).
    const fd = await promisify(openFd)(full, constants.O_RDONLY | constants.O_NONBLOCK);
    return new Socket({ fd, readable: true, writable: false });
  }
  const handle = await open(full, 'r');
  return handle.createReadStream({ highWaterMark: READ_CHUNK });
}

/**
 * A regular file's bytes, READ_CHUNK at a time, read into two buffers in turn: the next chunk is
 * read while the consumer works on this one (one read at a time left the reader idle between
 * chunks, waiting on the thread pool). A chunk is valid only until the next one is asked for, so
 * a consumer that keeps one copies it. A fresh buffer per read is memory the kernel maps and
 * unmaps each time: reading a 108 MB export so took twice as long (0.49 s against 0.25 s, most of
 * the difference page faults). The file is closed when the iteration ends or stops, or by close()
 * when it never began.
 */
export class FileChunks implements AsyncIterable<Buffer> {
  private closed = false;

  private constructor(private readonly handle: FileHandle) {}

  static async open(full: string): Promise<FileChunks> {
    return new FileChunks(await open(full, 'r'));
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    yield* readAhead(this.handle, READ_CHUNK, () => this.close());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }
}

/**
 * A file's bytes in chunks of at most `size`, each read while the one before is being used (two
 * buffers in turn: a chunk is overwritten once the one after the next is asked for). Calls `done`
 * at the end, or when the consumer stops, after any read still running has finished.
 */
export async function* readAhead(handle: FileHandle, size: number, done: () => Promise<void>): AsyncGenerator<Buffer> {
  const buffers = [Buffer.allocUnsafe(size), Buffer.allocUnsafe(size)];
  const read = (buffer: Buffer) => handle.read(buffer, 0, size, null).then((r) => r.bytesRead);
  let turn = 0;
  let next: Promise<number> | undefined = read(buffers[0]!);
  try {
    for (;;) {
      const n: number = await next;
      next = undefined;
      if (n === 0) return;
      const buffer = buffers[turn]!;
      turn ^= 1;
      next = read(buffers[turn]!);
      // Not awaited until the consumer asks for the next chunk: a failure then, not unhandled now.
      next.catch(() => {});
      yield buffer.subarray(0, n);
    }
  } finally {
    // A stopped consumer: the read into the other buffer must end before the file is closed.
    if (next) await next.catch(() => 0);
    await done();
  }
}

/**
 * A small file read whole (a mapping, a secret): at most `maxBytes`, refused beyond that before it
 * is read when its size is known, and as soon as it is passed when it is not (a FIFO, a device).
 * Missing files and the like surface as the errno error (the caller words them).
 */
export async function readSmallFile(
  path: string,
  maxBytes: number,
  onTooLarge: (bytes: number | undefined) => Error,
): Promise<Buffer> {
  const info = await stat(path);
  if (info.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  if (info.isFile() && info.size > maxBytes) throw onTooLarge(info.size);
  const stream = await openByteStream(path, info);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      total += bytes.length;
      if (total > maxBytes) throw onTooLarge(info.isFile() ? total : undefined);
      chunks.push(bytes);
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks);
}
