import { open, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { createGunzip } from 'node:zlib';
import { InputError } from '../errors.js';
import type { IO } from '../cli/io.js';

/** An opened input: decoded text chunks (UTF-8 or UTF-16, BOM removed, gunzipped) and a name for messages. */
export interface InputSource {
  /** What messages call the input: the path as the user typed it, or `stdin`. */
  name: string;
  /** Object-mode stream of string chunks. */
  stream: Readable;
  /** True when the bytes were gzip-compressed. */
  gzipped: boolean;
  /** Size in bytes of an uncompressed regular file (a hint for sizing; absent for stdin and .gz). */
  bytes?: number;
}

const GZIP_MAGIC = [0x1f, 0x8b];
const READ_CHUNK = 256 * 1024;

/**
 * Opens a file path, or `-` for standard input. Compression and encoding are detected from the
 * content rather than the name, so `zcat`-less pipes and mis-named files work too. Fails early
 * (before any reading) when the file is missing or is a directory.
 */
export async function openInput(pathOrDash: string, io: Pick<IO, 'stdin' | 'cwd'>): Promise<InputSource> {
  let raw: Readable;
  let name: string;
  let size: number | undefined;
  if (pathOrDash === '-') {
    name = 'stdin';
    raw = io.stdin;
  } else {
    name = pathOrDash;
    const full = resolve(io.cwd, pathOrDash);
    try {
      const info = await stat(full);
      if (info.isDirectory()) throw new InputError('is a directory, not a file', { file: name });
      if (info.isFile()) size = info.size;
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError(describeFsError(err), { file: name }, { cause: err });
    }
    try {
      const handle = await open(full, 'r');
      raw = handle.createReadStream({ highWaterMark: READ_CHUNK });
    } catch (err) {
      throw new InputError(describeFsError(err), { file: name }, { cause: err });
    }
  }
  const bytes = await peekable(raw);
  const gzipped = bytes.head.length >= 2 && bytes.head[0] === GZIP_MAGIC[0] && bytes.head[1] === GZIP_MAGIC[1];
  const byteStream = gzipped ? Readable.from(bytes.all()).pipe(createGunzip({ chunkSize: READ_CHUNK })) : Readable.from(bytes.all());
  return { name, gzipped, stream: Readable.from(decodeText(byteStream, name)), ...(size !== undefined && !gzipped ? { bytes: size } : {}) };
}

function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return err instanceof Error ? err.message : String(err);
}

/** Reads the first chunk so the format can be sniffed, then replays it followed by the rest. */
async function peekable(raw: Readable): Promise<{ head: Buffer; all(): AsyncGenerator<Buffer> }> {
  const iterator = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const first = await iterator.next();
  const head = first.done ? Buffer.alloc(0) : toBuffer(first.value);
  return {
    head,
    async *all() {
      if (head.length) yield head;
      if (first.done) return;
      while (true) {
        const next = await iterator.next();
        if (next.done) return;
        yield toBuffer(next.value);
      }
    },
  };
}

function toBuffer(chunk: Buffer | string | Uint8Array): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
}

/**
 * Decodes bytes to text. Spreadsheet programs save "Unicode text" as UTF-16 with a BOM, so that
 * is honoured; otherwise UTF-8, where bytes that are not UTF-8 (a Windows-1252 export, say) are
 * refused rather than silently turned into replacement characters.
 */
async function* decodeText(bytes: AsyncIterable<Buffer>, name: string): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  let offset = 0;
  const iterator = bytes[Symbol.asyncIterator]();
  while (true) {
    let next: IteratorResult<Buffer>;
    try {
      next = await iterator.next();
    } catch (err) {
      throw unreadable(name, err);
    }
    if (next.done) break;
    const chunk = next.value;
    if (!decoder) decoder = new TextDecoder(detectEncoding(chunk), { fatal: true });
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch (err) {
      throw notText(name, offset, err);
    }
    offset += chunk.length;
    if (text.length) yield text;
  }
  if (decoder) {
    let tail: string;
    try {
      tail = decoder.decode();
    } catch (err) {
      throw notText(name, offset, err);
    }
    if (tail.length) yield tail;
  }
}

function detectEncoding(head: Buffer): string {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

function unreadable(name: string, cause: unknown): InputError {
  if (cause instanceof InputError) return cause;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? '';
  const message = cause instanceof Error ? cause.message : String(cause);
  if (code.startsWith('Z_') || /unexpected end of file|incorrect header check/i.test(message)) {
    return new InputError(`is not a complete gzip file (${message})`, { file: name }, { cause });
  }
  return new InputError(`could not be read: ${message}`, { file: name }, { cause });
}

function notText(name: string, offset: number, cause: unknown): InputError {
  return new InputError(`is not UTF-8 text (invalid bytes after byte ${offset})`, { file: name }, {
    hint: 'save the file as "CSV UTF-8" (or plain UTF-8 text) and try again',
    cause,
  });
}
