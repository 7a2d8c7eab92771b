import type { Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isAscii } from 'node:buffer';
import { Readable } from 'node:stream';
import { TextDecoder } from 'node:util';
import { createGunzip } from 'node:zlib';
import { InputError, LeadctlError } from '../errors.js';
import type { IO, InputEncoding } from '../io/io.js';
import { FileChunks, openByteStream, READ_CHUNK } from '../io/open-file.js';
import { type InputStamp, sameStamp, stampOf } from './stamp.js';

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

export interface OpenInputOptions {
  /**
   * Stops the reading of standard input, a pipe, a FIFO or a device: the stream ends in the
   * signal's reason (an InterruptedError, say), even while it waits for a writer that sends
   * nothing. A regular file is always read to its end, within the readers' limits, so that a run
   * stopped by a signal can still account for what the file holds.
   */
  signal?: AbortSignal;
  /** Bytes decoded into one chunk of text at most (32 KB by default, see DECODE_SLICE). */
  sliceBytes?: number;
}

/**
 * Opens a file path, or `-` for standard input. Compression and encoding are detected from the
 * content rather than the name, so `zcat`-less pipes and mis-named files work too. Fails early
 * (before any reading) when the file is missing or is a directory.
 */
export async function openInput(
  pathOrDash: string,
  io: Pick<IO, 'stdin' | 'cwd' | 'input'>,
  options: OpenInputOptions = {},
): Promise<InputSource> {
  /** A regular file's chunks share one buffer (see FileChunks); other inputs are streams. */
  let raw: Readable | FileChunks;
  let name: string;
  let size: number | undefined;
  let watch: { full: string; stamp: InputStamp } | undefined;
  if (pathOrDash === '-') {
    name = 'stdin';
    raw = io.stdin;
  } else {
    name = pathOrDash;
    const full = resolve(io.cwd, pathOrDash);
    let info: Stats;
    try {
      info = await stat(full);
      if (info.isDirectory()) throw new InputError('is a directory, not a file', { file: name });
      if (info.isFile()) {
        size = info.size;
        if (io.input?.allowChanging !== true) watch = { full, stamp: stampOf(info) };
      }
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError(describeFsError(err), { file: name }, { cause: err });
    }
    try {
      raw = info.isFile() ? await FileChunks.open(full) : await openByteStream(full, info);
    } catch (err) {
      throw new InputError(describeFsError(err), { file: name }, { cause: err });
    }
  }
  const signal = raw instanceof Readable ? options.signal : undefined;
  if (signal && raw instanceof Readable) {
    const stop = () => raw.destroy(signal.reason);
    if (signal.aborted) stop();
    else {
      signal.addEventListener('abort', stop, { once: true });
      raw.once('close', () => signal.removeEventListener('abort', stop));
    }
  }
  let bytes: Awaited<ReturnType<typeof peekable>>;
  try {
    bytes = await peekable(raw);
  } catch (err) {
    throw unreadable(name, err, signal);
  }
  const workbook = notAWorkbook(name, bytes.head);
  if (workbook) {
    if (raw instanceof FileChunks) await raw.close();
    else raw.destroy();
    throw workbook;
  }
  const gzipped = bytes.head.length >= 2 && bytes.head[0] === GZIP_MAGIC[0] && bytes.head[1] === GZIP_MAGIC[1];
  const raw0 = watch ? unchangedWhileRead(bytes.all(), watch, name) : bytes.all();
  // The inflater holds on to what it is given: a shared buffer is copied for it.
  const byteStream = gzipped ? gunzip(raw instanceof FileChunks ? copies(raw0) : raw0) : raw0;
  const stream = Readable.from(decodeText(byteStream, name, io.input?.encoding, signal, options.sliceBytes, gzipped));
  // A stream destroyed before it was read to the end (a caller that gave up) closes the file: a
  // generator never started does not run its finally, so the descriptor would wait for the collector.
  // Standard input is not ours to close.
  if (raw !== io.stdin)
    stream.once('close', () => {
      if (raw instanceof FileChunks) void raw.close().catch(() => {});
      else raw.destroy();
    });
  return {
    name,
    gzipped,
    stream,
    ...(size !== undefined && !gzipped ? { bytes: size } : {}),
  };
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
const OLE2_MAGIC = [0xd0, 0xcf, 0x11, 0xe0];
const ODS_MIME = 'application/vnd.oasis.opendocument.spreadsheet';
const EXCEL =
  'is an Excel workbook, not a CSV file: in Excel use File > Save As > CSV UTF-8 (comma delimited) and give leadctl that file';
const ODS =
  'is an OpenDocument spreadsheet, not a CSV file: in LibreOffice use File > Save As > Text CSV (.csv) with the character set Unicode (UTF-8), and give leadctl that file';

function startsWith(head: Uint8Array, magic: readonly number[]): boolean {
  return head.length >= magic.length && magic.every((byte, i) => head[i] === byte);
}

/**
 * An error when the first bytes are a spreadsheet workbook (xlsx and ods are zip archives, xls an
 * OLE2 compound file) rather than text: checked before any decoding, which would otherwise call it
 * "not UTF-8" and suggest an encoding that turns it into garbage.
 */
export function notAWorkbook(name: string, head: Uint8Array): InputError | undefined {
  let message: string | undefined;
  if (startsWith(head, OLE2_MAGIC)) message = EXCEL;
  else if (startsWith(head, ZIP_MAGIC)) {
    // The first entry's name, right after its local header, says what the archive is.
    const nameLength = head.length >= 30 ? head[26]! | (head[27]! << 8) : 0;
    const first = Buffer.from(head.subarray(30, 30 + nameLength)).toString('latin1');
    const text = Buffer.from(head.subarray(0, 200)).toString('latin1');
    if (first === 'mimetype' && text.includes(ODS_MIME)) message = ODS;
    else if (/^(\[Content_Types\]\.xml|xl\/|docProps\/|_rels\/)/.test(first) || nameLength === 0) message = EXCEL;
    else message = 'is a ZIP archive, not a CSV file: unzip it and give leadctl the CSV file inside';
  }
  if (message === undefined) return undefined;
  return new InputError(
    message,
    { file: name },
    { hint: 'leadctl reads CSV, JSON and NDJSON text files (gzipped or not); it does not open workbooks or archives' },
  );
}

/**
 * The whole text of an input that is read as one document (a lead file), refused once it passes
 * `maxChars` instead of being held whole however large it is.
 */
export async function readWholeText(input: InputSource, maxChars: number, hint?: string): Promise<string> {
  const parts: string[] = [];
  let length = 0;
  for await (const chunk of input.stream) {
    const text = chunk as string;
    length += text.length;
    if (length > maxChars) {
      input.stream.destroy();
      throw new InputError(
        `is larger than ${describeChars(maxChars)} of text; a file read whole is limited to that`,
        { file: input.name },
        hint ? { hint } : undefined,
      );
    }
    parts.push(text);
  }
  return parts.join('');
}

/** `4 MiB`, `64 KiB`, or a count of characters. */
export function describeChars(chars: number): string {
  if (chars % (1 << 20) === 0) return `${chars / (1 << 20)} MiB`;
  if (chars % (1 << 10) === 0) return `${chars / (1 << 10)} KiB`;
  return `${chars.toLocaleString('en-US')} characters`;
}

/** Gunzipped bytes; a truncated or corrupt archive surfaces as an error of the iteration (never an unhandled 'error' event). */
async function* copies(bytes: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const chunk of bytes) yield Buffer.from(chunk);
}

async function* gunzip(bytes: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const source = Readable.from(bytes);
  const inflate = createGunzip({ chunkSize: READ_CHUNK });
  source.on('error', (err) => inflate.destroy(err));
  source.pipe(inflate);
  try {
    for await (const chunk of inflate) yield chunk as Buffer;
  } finally {
    source.destroy();
    inflate.destroy();
  }
}

/**
 * The file's bytes, then a check that it is still the file that was opened: an export job that
 * is still writing (size or modification time moved) would otherwise be sent half-written.
 */
async function* unchangedWhileRead(
  bytes: AsyncIterable<Buffer>,
  opened: { full: string; stamp: InputStamp },
  name: string,
): AsyncGenerator<Buffer> {
  let read = 0;
  for await (const chunk of bytes) {
    read += chunk.length;
    yield chunk;
  }
  const now = await stat(opened.full).then(stampOf, () => undefined);
  const { size } = opened.stamp;
  if (!sameStamp(opened.stamp, now) || read !== size) {
    throw new InputError(
      `changed while it was read (${size.toLocaleString('en-US')} bytes when opened, ${(now?.size ?? read).toLocaleString('en-US')} at the end): it is probably still being written`,
      { file: name },
      {
        hint: 'wait for the export to finish and run the command again, or pass --allow-changing-input to read it as it is',
      },
    );
  }
}

function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, not a file';
  return err instanceof Error ? err.message : String(err);
}

/** Reads the first chunk so the format can be sniffed, then replays it followed by the rest. */
async function peekable(raw: AsyncIterable<Buffer | string>): Promise<{ head: Buffer; all(): AsyncGenerator<Buffer> }> {
  const iterator = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const first = await iterator.next();
  // Kept while the next chunks are read: a copy, the source may reuse its buffer.
  const head = first.done ? Buffer.alloc(0) : Buffer.from(toBuffer(first.value));
  return {
    head,
    async *all() {
      let ended = first.done === true;
      try {
        if (head.length) yield head;
        while (!ended) {
          const next = await iterator.next();
          if (next.done) ended = true;
          else yield toBuffer(next.value);
        }
      } finally {
        // A reader that stops early (an unsorted file handed over to staging) closes the file now,
        // not when the garbage collector gets to its handle.
        if (!ended) await iterator.return?.();
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
async function* decodeText(
  bytes: AsyncIterable<Buffer>,
  name: string,
  chosen?: InputEncoding,
  signal?: AbortSignal,
  slice = DECODE_SLICE,
  /** The bytes were inflated: an offset is into the text, not the file (for the hint). */
  gzipped = false,
): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  let encoding: string = chosen ?? 'utf-8';
  /** The decoder holds the first bytes of a character cut by the last chunk's end. */
  let midCharacter = false;
  let decoded = false;
  const place = new BytePlace();
  const iterator = bytes[Symbol.asyncIterator]();
  let ended = false;
  try {
    while (true) {
      let next: IteratorResult<Buffer>;
      try {
        next = await iterator.next();
      } catch (err) {
        throw unreadable(name, err, signal);
      }
      if (next.done) {
        ended = true;
        break;
      }
      const read = next.value;
      if (!decoder) {
        if (chosen === undefined || chosen === 'utf-8') encoding = detectEncoding(read);
        // latin1 is decoded as windows-1252, its superset, as every browser and spreadsheet does.
        decoder = new TextDecoder(encoding === 'latin1' ? 'windows-1252' : encoding, { fatal: true, ignoreBOM: false });
      }
      for (let at = 0; at < read.length; at += slice) {
        const chunk = read.length <= slice ? read : read.subarray(at, at + slice);
        let text: string;
        if (encoding === 'utf-8' && decoded && !midCharacter && isAscii(chunk)) {
          // Most exports are ASCII: no decoder needed. Not the first chunk: the decoder sees that
          // one, so a BOM is dropped there and only there.
          const nul = chunk.indexOf(0);
          if (nul !== -1) throw nulByte(name, encoding, place.lineAt(chunk, nul), place.offsetOf(nul), chunk);
          text = chunk.toString('latin1');
        } else {
          try {
            text = decoder.decode(chunk, { stream: true });
          } catch (err) {
            // UTF-16 without its mark, with a character beyond ASCII (Zoë): not UTF-8 before any NUL is seen.
            const wide = encoding === 'utf-8' && !decoded ? utf16WithoutBom(chunk) : undefined;
            throw wide ? utf16Refused(name, wide) : notText(name, encoding, place.findBad(chunk, false), err, gzipped);
          }
          midCharacter = encoding === 'utf-8' && endsMidCharacter(chunk);
          decoded = true;
          const nul = text.indexOf('\u0000');
          if (nul !== -1) {
            // The line, from the text (the decoder may hold bytes of a character, so not the offset).
            const before = place.linesBefore();
            const line = before === undefined ? undefined : before + countLines(text, nul);
            throw nulByte(name, encoding, line, undefined, chunk);
          }
        }
        place.advance(chunk);
        if (text.length) yield text;
      }
    }
  } finally {
    // Stopped early: close the source now (see peekable).
    if (!ended) await iterator.return?.();
  }
  if (decoder) {
    let tail: string;
    try {
      tail = decoder.decode();
    } catch (err) {
      throw notText(name, encoding, place.findBad(Buffer.alloc(0), true), err, gzipped);
    }
    if (tail.length) yield tail;
  }
}

/**
 * Bytes decoded at a time. A string over 128 KB is a "large object" to V8, given pages of its own
 * and unmapped when collected: decoding the file's 256 KB reads whole cost 12 times as much as in
 * 32 KB slices (0.71 s against 0.06 s for a 94 MB export, measured), and the readers cut the text
 * into rows anyway. 32 KB decode to at most 64 KB of UTF-16.
 */
const DECODE_SLICE = 32 * 1024;

/** Whether UTF-8 bytes end inside a character (four trailing continuation bytes count as inside: never fast). */
function endsMidCharacter(chunk: Uint8Array): boolean {
  const n = chunk.length;
  for (let back = 1; back <= Math.min(4, n); back++) {
    const byte = chunk[n - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    if (byte < 0x80) return false;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return length > back;
  }
  return n > 0;
}

/** Lines are counted only this far into the input: counting costs a pass over every byte. */
const LINE_COUNT_LIMIT = 1 << 20;

interface BadByte {
  /** Offset from the start of the (decompressed) input, counting from 0; for UTF-16, the chunk's start. */
  offset: number;
  /** The byte there (UTF-8 only). */
  value?: number;
  /** 1-based line of the bad byte, when the lines before it were counted. */
  line?: number;
}

/**
 * Where the decoder is in the input, kept cheaply for every chunk so that, only when decoding
 * fails, the first bad byte can be found: the decoder itself says nothing about where it is.
 */
class BytePlace {
  private offset = 0;
  private newlines = 0;
  /** False once a chunk went uncounted. */
  private linesKnown = true;
  /** The last (at most three) bytes before `offset`: a character may have started there. */
  private tail: Buffer = Buffer.alloc(0);

  /** Lines ended before the current chunk, when counted (else undefined). */
  linesBefore(): number | undefined {
    return this.linesKnown ? this.newlines : undefined;
  }

  /** The 1-based line of byte `index` of the current chunk, when the lines before it were counted. */
  lineAt(chunk: Buffer, index: number): number | undefined {
    return this.linesKnown ? this.newlines + countNewlines(chunk, index) + 1 : undefined;
  }

  /** The offset in the input of byte `index` of the current chunk. */
  offsetOf(index: number): number {
    return this.offset + index;
  }

  advance(chunk: Buffer): void {
    if (this.linesKnown && this.offset < LINE_COUNT_LIMIT) this.newlines += countNewlines(chunk, chunk.length);
    else this.linesKnown = false;
    this.offset += chunk.length;
    // Copied: the chunk's buffer may be reused for the next read.
    this.tail = Buffer.from(
      chunk.length >= 3 ? chunk.subarray(chunk.length - 3) : Buffer.concat([this.tail, chunk]).subarray(-3),
    );
  }

  /** The first bad UTF-8 byte of `chunk` (or of a sequence begun before it); `atEnd` when the input ended. */
  findBad(chunk: Buffer, atEnd: boolean): BadByte {
    // Everything before `offset` decoded, so skipping continuation bytes lands on a character start.
    let skip = 0;
    while (skip < this.tail.length && (this.tail[skip]! & 0xc0) === 0x80) skip++;
    const joined = Buffer.concat([this.tail.subarray(skip), chunk]);
    const start = this.offset - (this.tail.length - skip);
    const found = firstInvalidUtf8(joined, atEnd);
    if (found < 0) return { offset: this.offset };
    const offset = start + found;
    const bad: BadByte = { offset, value: joined[found]! };
    if (this.linesKnown) {
      const before = found - (this.offset - start);
      bad.line = this.newlines + (before > 0 ? countNewlines(chunk, before) : 0) + 1;
    }
    return bad;
  }
}

function countNewlines(bytes: Buffer, end: number): number {
  let n = 0;
  let i = -1;
  while ((i = bytes.indexOf(10, i + 1)) !== -1 && i < end) n++;
  return n;
}

/**
 * Index of the first byte that starts an invalid UTF-8 sequence (the rules of the WHATWG decoder:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or -1. A sequence cut short by the
 * end of the bytes is invalid only when the input ends there.
 */
export function firstInvalidUtf8(bytes: Uint8Array, atEnd: boolean): number {
  let i = 0;
  while (i < bytes.length) {
    const c = bytes[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lower = 0xa0;
      if (c === 0xed) upper = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lower = 0x90;
      if (c === 0xf4) upper = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      if (i + k >= bytes.length) return atEnd ? i : -1;
      const x = bytes[i + k]!;
      if (x < (k === 1 ? lower : 0x80) || x > (k === 1 ? upper : 0xbf)) return i;
    }
    i += need + 1;
  }
  return -1;
}

function detectEncoding(head: Buffer): string {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

function unreadable(name: string, cause: unknown, signal?: AbortSignal): unknown {
  // Stopped on purpose (a signal): the reason itself, not a read error.
  if (signal?.aborted) return signal.reason;
  if (cause instanceof LeadctlError) return cause;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code ?? '';
  const message = cause instanceof Error ? cause.message : String(cause);
  if (code.startsWith('Z_') || /unexpected end of file|incorrect header check/i.test(message)) {
    return new InputError(`is not a complete gzip file (${message})`, { file: name }, { cause });
  }
  return new InputError(`could not be read: ${message}`, { file: name }, { cause });
}

/** The 1-based line of character `index` of `text`, counted from its start. */
function countLines(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * A NUL (a zero byte, U+0000) is in no text a person or a program exports: it is UTF-16 read as
 * UTF-8 (a NUL beside every ASCII character, from `bcp -w` or a Windows tool, without the
 * byte-order mark that would say so), or a damaged file (zeros left by a crash or a bad copy).
 * Either way its values would be sent garbled, so the file is refused.
 */
function nulByte(
  name: string,
  encoding: string,
  line: number | undefined,
  offset: number | undefined,
  chunk: Buffer,
): InputError {
  const where = [line === undefined ? '' : `line ${line}`, offset === undefined ? '' : `offset ${offset}`]
    .filter(Boolean)
    .join(', ');
  const utf16 = encoding === 'utf-8' ? utf16WithoutBom(chunk) : undefined;
  if (utf16) return utf16Refused(name, utf16);
  return new InputError(
    `contains a NUL byte${where ? ` (${where})` : ''}: text never does, so the file is damaged or not text`,
    { file: name },
    {
      hint: `look at the file there (a copy cut short, zeros left by a crash, another format); if it is UTF-16 text, name it: --encoding utf-16le`,
    },
  );
}

function utf16Refused(name: string, utf16: 'utf-16le' | 'utf-16be'): InputError {
  return new InputError(
    `is ${utf16.toUpperCase()} text without a byte-order mark (a NUL byte beside every character), not UTF-8`,
    { file: name },
    {
      hint:
        utf16 === 'utf-16le'
          ? 'name its encoding: --encoding utf-16le'
          : 'save it as UTF-8, or as UTF-16 with its byte-order mark',
    },
  );
}

/** Whether bytes look like ASCII text in UTF-16 (a NUL at every other byte, the same side each time), and which. */
function utf16WithoutBom(bytes: Buffer): 'utf-16le' | 'utf-16be' | undefined {
  const n = Math.min(bytes.length, 4096) & ~1;
  if (n < 4) return undefined;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (bytes[i] === 0) even++;
    if (bytes[i + 1] === 0) odd++;
  }
  const pairs = n / 2;
  if (odd >= pairs * 0.9 && even === 0) return 'utf-16le';
  if (even >= pairs * 0.9 && odd === 0) return 'utf-16be';
  return undefined;
}

function notText(name: string, encoding: string, bad: BadByte, cause: unknown, gzipped = false): InputError {
  const line = bad.line === undefined ? '' : ` (line ${bad.line})`;
  const message =
    encoding === 'utf-8'
      ? bad.value === undefined
        ? `is not UTF-8 text (invalid bytes after offset ${bad.offset})`
        : `is not UTF-8 text: byte 0x${bad.value.toString(16).toUpperCase().padStart(2, '0')} at offset ${bad.offset}${line} is not valid UTF-8`
      : `is not valid ${encoding.toUpperCase()} text (invalid bytes after offset ${bad.offset})`;
  // Lines are counted in the first MiB only (a count over a whole export costs every push).
  const find =
    bad.line === undefined && bad.value !== undefined && name !== 'stdin'
      ? `; its line: echo $(( $(${gzipped ? 'gzip -dc' : 'cat'} '${name.replaceAll("'", "'\\''")}' | head -c ${bad.offset} | wc -l) + 1 ))`
      : '';
  return new InputError(
    message,
    { file: name },
    {
      hint: `save the file as "CSV UTF-8" and try again, or name its encoding: --encoding latin1, windows-1252 or utf-16le${find}`,
      cause,
    },
  );
}

/** The first characters of an input without consuming them: the returned source replays them. */
export async function peekText(input: InputSource): Promise<{ head: string; input: InputSource }> {
  const iterator = input.stream[Symbol.asyncIterator]() as AsyncIterator<string>;
  const first = await iterator.next();
  const head = first.done ? '' : String(first.value);
  async function* replay(): AsyncGenerator<string> {
    if (head !== '') yield head;
    if (first.done) return;
    while (true) {
      const next = await iterator.next();
      if (next.done) return;
      yield String(next.value);
    }
  }
  const stream = Readable.from(replay());
  stream.once('close', () => input.stream.destroy());
  return { head, input: { ...input, stream } };
}
