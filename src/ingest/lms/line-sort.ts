import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { planCsv } from './csv.js';
import { LineCutter } from './first-look.js';
import { compareIds } from './staging.js';
import type { TempFolder } from './temp-folder.js';
import { csvDelimiter, type Mapping } from '../mapping/mapping.js';
import type { InputSource } from '../sources.js';

/**
 * A CSV export that is not sorted by customer, sorted before it is read: its lines, cut into
 * customers by the customer id column alone (the first look's `LineCutter`, no parsing), are
 * grouped by customer in runs of bounded size, each run sorted and written to the run's private
 * folder, and the runs merged as the reader reads. The reader then reads the export as it reads a
 * sorted one (stream.ts), with each row's number mapped back to the file's (`RowMap`), so every
 * message names the file's row.
 *
 * Why not the SQLite staging: it parses and converts every row before it sorts (the converted
 * values go to disk as JSON and are parsed again), where this moves the lines as they are and the
 * reader converts each once; a shuffled export is read at about the cost of a sorted one.
 *
 * Safe by construction: a customer's lines keep the file's order, so the last row of a loan or a
 * payment still wins; a line the cut is not sure of (a quoted line break, a stray quote, a lone CR)
 * gives up the sort (`undefined`), and the caller stages the export instead; and the reader checks
 * the order as for any sorted file, so a customer the cut would have grouped otherwise than the
 * reader ends in NotSortedError, never in a different answer.
 */

/**
 * Characters of lines held before a run is written out: runs are few and large, so that the merge
 * compares few heads and reads each customer in a record or two; held as UTF-8 with numbers in
 * typed arrays, a run costs the garbage collector nothing, whatever its size.
 */
export const RUN_CHARS = 32 << 20;
/** The blocks a run is held in (bytes; a power of two): 32 MiB, see `Held`. */
export const SLAB_BYTES = 1 << 25;
/** Pieces held before a run is written out: 12 bytes each besides their text (very short lines). */
const RUN_PIECES = 1 << 20;
/** An export this small is sorted in memory, without files. */
const IN_MEMORY_CHARS = 4 << 20;
/** More runs than this (an export over 8 GB) is staged instead: each run open at once costs read buffers. */
const MAX_RUNS = 256;
const READ_BYTES = 1 << 16;
const WRITE_BYTES = 1 << 18;
/** Text handed to the reader at a time. */
const OUT_CHARS = 1 << 16;

/** Rows of the sorted text (as the reader numbers them) → the file's rows. */
export class RowMap {
  private starts: number[] = [];
  private origins: number[] = [];
  private head = 0;
  private next = 1;

  /** The next `lines` lines of the sorted text are the file's lines from `row` on. */
  add(row: number, lines: number): void {
    this.starts.push(this.next);
    this.origins.push(row);
    this.next += lines;
  }

  /** The file's row of a row of the sorted text; asked in increasing order, as the reader reads. */
  of(row: number): number {
    const starts = this.starts;
    let head = this.head;
    while (head + 1 < starts.length && starts[head + 1]! <= row) head++;
    if (head > 4096) {
      starts.splice(0, head);
      this.origins.splice(0, head);
      head = 0;
    }
    this.head = head;
    return this.origins[head]! + (row - starts[head]!);
  }
}

export interface SortFile {
  input: InputSource;
  role: 'rows' | 'loans' | 'payments';
}

export interface SortedFile {
  /** The export's lines, the header first, then every customer's lines together, customers in order. */
  input: InputSource;
  rows: RowMap;
  /** Lines cut (the header included). */
  lines: number;
}

export interface LineSortOptions {
  mapping: Mapping;
  folder: TempFolder;
  /** Characters of lines held before a run is written out (tests make it small). */
  runChars?: number;
  /** Bytes of the blocks a run is held in, a power of two of at least 4 (tests make it small). */
  slabBytes?: number;
  /** Characters of sorted text handed to the reader at a time (64K by default). */
  outChars?: number;
  /** Told the lines cut so far as chunks go by; may throw to stop the sort. */
  onLines?: (lines: number) => void;
}

/**
 * The file sorted by customer, or undefined when the cut is not sure of a line (the caller stages
 * the export instead). Customers come in `compareIds` order; lines without a customer id (and blank
 * lines) come first, in the file's order, for the reader to refuse (or skip) with their rows.
 */
export async function sortByCustomer(file: SortFile, options: LineSortOptions): Promise<SortedFile | undefined> {
  const { folder, mapping } = options;
  const budget = options.runChars ?? RUN_CHARS;
  const cutter = new LineCutter(csvDelimiter(mapping), (header) => {
    try {
      return planCsv(file.input.name, file.role, mapping, header).customerIndex;
    } catch {
      // The reader refuses the header with the right message, once the export is staged.
      return undefined;
    }
  });
  let header: string | undefined;
  let nextRow = 1;
  const held = new Held(options.slabBytes ?? SLAB_BYTES);
  const runFiles: string[] = [];
  /** Writes the run held out; false when that would make too many. */
  const spill = (): boolean => {
    if (runFiles.length + 1 >= MAX_RUNS) return false;
    const path = folder.path(`${file.role}-${runFiles.length}.run`);
    folder.guard(() => writeRun(path, held));
    runFiles.push(path);
    held.clear();
    return true;
  };
  /** Takes what the cutter closed; false when it stopped, or numbered a line otherwise than counted. */
  const take = (atEnd: boolean): boolean => {
    if (cutter.stopped) return false;
    for (const item of cutter.items) {
      let customerId: string;
      let row: number;
      let lines: number;
      let text: string;
      if ('group' in item) {
        ({ customerId, row, lines, text } = item.group);
        if (row !== nextRow) return false;
      } else {
        text = item.text;
        lines = countLines(text, atEnd);
        if (nextRow === 1) {
          if (lines !== 1) return false;
          header = text;
          nextRow++;
          continue;
        }
        customerId = '';
        row = nextRow;
      }
      nextRow += lines;
      // Rows are kept in 32 bits on disk: an export of four billion lines is staged instead.
      if (nextRow > 0xffff_ffff) return false;
      // Only the file's last line can lack its line break: the lines that follow it here need one.
      if (atEnd && !text.endsWith('\n')) text += '\n';
      // Characters bound a run, and so do bytes (up to 3 per character), at most a chunk's worth over.
      if (held.pieces > 0 && (held.chars + text.length > budget || held.used >= budget || held.pieces >= RUN_PIECES)) {
        held.encode();
        if (!spill()) return false;
      }
      held.add(customerId, row, lines, text);
    }
    held.encode();
    cutter.items.length = 0;
    return true;
  };
  for await (const chunk of file.input.stream as AsyncIterable<string>) {
    cutter.push(chunk);
    if (!take(false)) return undefined;
    options.onLines?.(nextRow - 1);
  }
  cutter.end();
  if (!take(true) || header === undefined) return undefined;
  options.onLines?.(nextRow - 1);
  const runs: Run[] = [];
  if (runFiles.length === 0 && held.chars <= IN_MEMORY_CHARS) runs.push(new MemoryRun(held));
  else {
    if (held.pieces > 0 && !spill()) return undefined;
    held.clear(true);
    for (const path of runFiles) runs.push(new FileRun(path, folder));
  }
  const rows = new RowMap();
  return {
    input: {
      ...file.input,
      stream: Readable.from(merged(header, runs, rows, options.outChars ?? OUT_CHARS), {
        objectMode: true,
        highWaterMark: 1,
      }),
    },
    rows,
    lines: nextRow - 1,
  };
}

/** Lines in a text of whole lines (the file's last one may lack its line break). */
function countLines(text: string, atEnd: boolean): number {
  let n = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) n++;
  return atEnd && text.length > 0 && !text.endsWith('\n') ? n + 1 : n;
}

/**
 * The lines of the next run, as UTF-8 in slabs, with numbers in chunked typed arrays rather than
 * an object or a string per piece (a shuffled export makes a piece of every line: objects kept
 * that long are what the garbage collector copies and promotes). Piece `p`'s bytes are
 * `[starts(p), starts(p + 1))` of the slabs taken end to end (a piece may span slabs); its rows
 * `[rows(p), rows(p + 1))`; the next piece of its customer `links(p)`. Customer `c` is `ids[c]`,
 * its first piece `heads(c)`, its last `tails(c)`. Pieces are encoded a chunk's worth at a time
 * (`encode`): one call per line cost more than the cut.
 *
 * Why slabs of 32 MiB, kept from run to run and dropped when the sort ends: glibc serves a block
 * over its threshold (128 KB at first) with a mapping of its own, given back when it is freed, and
 * raises the threshold to the size of each such block freed, up to 32 MiB. A block of 32 MiB is
 * always a mapping of its own and never moves the threshold. Smaller blocks came from the heap,
 * which keeps its pages: buffers of 1–32 MB freed run after run lifted the threshold so far that the
 * push's request bodies came from the heap too (20–30 MB more at the push's peak), and slabs of
 * 512 KB, once Node's own start-up had lifted it past them, stayed resident after the sort (30 MB
 * through the rest of a shuffled two-file run). A slab's pages count only once written.
 */
class Held {
  used = 0;
  pieces = 0;
  chars = 0;
  ids: string[] = [];
  readonly bytes: Slabs;
  readonly starts: Words;
  readonly rows: Words;
  readonly links: Words;
  readonly heads: Words;
  readonly tails: Words;
  /** Each customer's pieces and characters. */
  readonly counts: Words;
  readonly lengths: Words;
  /** The buffers runs are written through. */
  readonly textOut: Buffer;
  readonly metaOut: Buffer;
  private index = new Map<string, number>();
  /** Pieces added since the last `encode`, and their text together. */
  private batch: string[] = [];
  private batchText = '';

  constructor(slabBytes: number) {
    slabBytes = Math.max(slabBytes, 4);
    this.bytes = new Slabs(slabBytes);
    // Numbers in chunks of a run's pieces at most (of a slab's bytes at most: tests make slabs
    // small). The seven arrays' first chunks are views of one block of over 32 MiB, for the reason
    // the slabs are that large: 32 MiB of address space a sort, not seven times that.
    const words = Math.min(Math.max(slabBytes >>> 2, 1), RUN_PIECES);
    const block = words === RUN_PIECES ? new ArrayBuffer(8 * 4 * RUN_PIECES + 4096) : undefined;
    let views = 0;
    const numbers = () => new Words(words, block && new Uint32Array(block, 4 * RUN_PIECES * views++, RUN_PIECES));
    this.starts = numbers();
    this.rows = numbers();
    this.links = numbers();
    this.heads = numbers();
    this.tails = numbers();
    this.counts = numbers();
    this.lengths = numbers();
    this.textOut = Buffer.allocUnsafeSlow(Math.min(slabBytes, WRITE_BYTES));
    this.metaOut = Buffer.allocUnsafeSlow(Math.min(slabBytes, WRITE_BYTES));
  }

  add(customerId: string, row: number, lines: number, text: string): void {
    const p = this.pieces++;
    let customer = this.index.get(customerId);
    if (customer === undefined) {
      customer = this.ids.length;
      this.ids.push(customerId);
      this.index.set(customerId, customer);
      this.heads.set(customer, p);
      this.counts.set(customer, 1);
      this.lengths.set(customer, text.length);
    } else {
      this.links.set(this.tails.get(customer), p);
      this.counts.set(customer, this.counts.get(customer) + 1);
      this.lengths.set(customer, this.lengths.get(customer) + text.length);
    }
    this.tails.set(customer, p);
    // Read once past a customer's last piece (by the loops that follow the links): set.
    this.links.set(p, 0);
    // Pieces follow each other in the file: a piece's rows end where the next one's start.
    if (p === 0) this.rows.set(0, row);
    this.rows.set(p + 1, row + lines);
    this.chars += text.length;
    this.batch.push(text);
    this.batchText += text;
  }

  /** The pieces added since the last call, to bytes: encoded together, and told apart by their lengths. */
  encode(): void {
    const text = this.batchText;
    const batch = this.batch;
    if (batch.length === 0) return;
    const bytes = this.bytes.write(text, this.used) - this.used;
    // Lines end in a line break: no character is split between two pieces.
    const ascii = bytes === text.length;
    let at = this.used;
    let p = this.pieces - batch.length;
    for (const piece of batch) {
      this.starts.set(p++, at);
      at += ascii ? piece.length : Buffer.byteLength(piece, 'utf8');
    }
    this.starts.set(p, at);
    this.used = at;
    this.batch = [];
    this.batchText = '';
  }

  /** Nothing held; `release`: the slabs too. */
  clear(release = false): void {
    this.used = 0;
    this.pieces = 0;
    this.chars = 0;
    this.ids = [];
    this.index = new Map();
    if (release) {
      this.bytes.release();
      for (const words of [this.starts, this.rows, this.links, this.heads, this.tails, this.counts, this.lengths])
        words.release();
    }
  }

  /** The customers (places in `ids`) in `compareIds` order. */
  order(): number[] {
    return sortedIds(this.ids).map((id) => this.index.get(id)!);
  }
}

/** A growing array of 32-bit numbers, in chunks of `size`; chunks are kept until `release`. */
class Words {
  private chunks: Uint32Array[] = [];
  private readonly shift: number;
  private readonly mask: number;

  /** `first`: the first chunk, given (`size` numbers). */
  constructor(size: number, first?: Uint32Array) {
    this.shift = 31 - Math.clz32(size);
    this.mask = (1 << this.shift) - 1;
    if (first) this.chunks.push(first);
  }

  get(i: number): number {
    return this.chunks[i >>> this.shift]![i & this.mask]!;
  }

  set(i: number, value: number): void {
    const c = i >>> this.shift;
    while (c >= this.chunks.length) this.chunks.push(new Uint32Array(this.mask + 1));
    this.chunks[c]![i & this.mask] = value;
  }

  release(): void {
    this.chunks = [];
  }
}

/** Bytes at addresses from 0, in slabs of `size` (a power of two) taken end to end; kept until `release`. */
class Slabs {
  private slabs: Buffer[] = [];
  private readonly shift: number;
  private readonly size: number;
  private readonly encoder = new TextEncoder();
  private readonly scratch = new Uint8Array(4);
  private readonly decoder = new StringDecoder('utf8');

  constructor(size: number) {
    this.shift = 31 - Math.clz32(size);
    this.size = 1 << this.shift;
  }

  private slab(k: number): Buffer {
    while (k >= this.slabs.length) this.slabs.push(Buffer.allocUnsafeSlow(this.size));
    return this.slabs[k]!;
  }

  /** Writes `text` as UTF-8 from address `at`; returns the address after it. */
  write(text: string, at: number): number {
    let from = 0;
    while (from < text.length) {
      const slab = this.slab(at >>> this.shift);
      const offset = at & (this.size - 1);
      const rest = from === 0 ? text : text.slice(from);
      if (this.size - offset >= 3 * rest.length) return at + slab.write(rest, offset, 'utf8');
      const { read, written } = this.encoder.encodeInto(rest, slab.subarray(offset));
      at += written;
      from += read;
      if (from < text.length && (at & (this.size - 1)) !== 0) {
        // The next character does not fit in what is left of the slab: its bytes go on in the next.
        const units = text.codePointAt(from)! > 0xffff ? 2 : 1;
        const { written: n } = this.encoder.encodeInto(text.slice(from, from + units), this.scratch);
        for (let i = 0; i < n; i++, at++) this.slab(at >>> this.shift)[at & (this.size - 1)] = this.scratch[i]!;
        from += units;
      }
    }
    return at;
  }

  /** Hands `[start, end)` to `to` a slab's part at a time. */
  parts(start: number, end: number, to: (slab: Buffer, from: number, until: number) => void): void {
    while (start < end) {
      const offset = start & (this.size - 1);
      const length = Math.min(end - start, this.size - offset);
      to(this.slabs[start >>> this.shift]!, offset, offset + length);
      start += length;
    }
  }

  /** `[start, end)` decoded; it holds whole characters. */
  text(start: number, end: number): string {
    const offset = start & (this.size - 1);
    if (offset + (end - start) <= this.size)
      return this.slabs[start >>> this.shift]!.toString('utf8', offset, offset + end - start);
    let text = '';
    this.parts(start, end, (slab, from, until) => {
      text += this.decoder.write(slab.subarray(from, until));
    });
    return text + this.decoder.end();
  }

  release(): void {
    this.slabs = [];
  }
}

/** Ids in code point order (JavaScript's default sort is by UTF-16 units: the same below U+D800). */
function sortedIds(ids: readonly string[]): string[] {
  const sorted = [...ids];
  return sorted.some((id) => /[\ud800-\udfff]/.test(id)) ? sorted.sort(compareIds) : sorted.sort();
}

/** A customer of a run at a time, in `compareIds` order. */
interface Run {
  /** Moves to the run's next customer (`customerId`, `text`); false at the run's end. */
  next(): boolean;
  customerId: string;
  /** The customer's lines in this run. */
  text: string;
  /** Tells `rows` where the customer's lines come from in the file. */
  mapRows(rows: RowMap): void;
  close(): void;
}

/**
 * A run on disk, in two files: `.text`, each customer's id then its lines, as UTF-8 (the lines'
 * bytes as held, moved, not encoded again); `.meta`, 32-bit numbers: for each customer the
 * characters of its id, its pieces and the characters of its lines, then each piece's first row
 * and lines. Numbers in binary: as text, writing and reading them back cost more than the lines.
 * Lengths in characters: the text is decoded in blocks, not a customer at a time.
 */
function writeRun(path: string, held: Held): void {
  const { ids, bytes, starts, rows, links, heads, counts, lengths } = held;
  const text = new RunWriter(`${path}.text`, held.textOut);
  const copy = (slab: Buffer, from: number, until: number): void => {
    text.copy(slab, from, until);
  };
  try {
    const meta = new RunWriter(`${path}.meta`, held.metaOut);
    try {
      for (const c of held.order()) {
        const id = ids[c]!;
        const pieces = counts.get(c);
        text.text(id);
        meta.number(id.length);
        meta.number(pieces);
        meta.number(lengths.get(c));
        for (let n = 0, p = heads.get(c); n < pieces; n++, p = links.get(p)) {
          bytes.parts(starts.get(p), starts.get(p + 1), copy);
          const row = rows.get(p);
          meta.number(row);
          meta.number(rows.get(p + 1) - row);
        }
      }
      meta.flush();
    } finally {
      meta.close();
    }
    text.flush();
  } finally {
    text.close();
  }
}

/** A file written through a buffer of the sort's (kept from run to run). */
class RunWriter {
  private readonly fd: number;
  private used = 0;

  constructor(
    path: string,
    private readonly buffer: Buffer,
  ) {
    this.fd = openSync(path, 'wx', 0o600);
  }

  /** Writes a 32-bit number, little-endian. */
  number(value: number): void {
    if (this.buffer.length - this.used < 4) {
      this.flush();
      if (this.buffer.length < 4) {
        const word = Buffer.allocUnsafe(4);
        word.writeUInt32LE(value, 0);
        writeAll(this.fd, word);
        return;
      }
    }
    this.used = this.buffer.writeUInt32LE(value, this.used);
  }

  /** Writes `value` as UTF-8; returns its bytes. */
  text(value: string): number {
    if (this.buffer.length - this.used < value.length * 3) {
      this.flush();
      if (this.buffer.length < value.length * 3) {
        const bytes = Buffer.from(value, 'utf8');
        writeAll(this.fd, bytes);
        return bytes.length;
      }
    }
    const bytes = this.buffer.write(value, this.used, 'utf8');
    this.used += bytes;
    return bytes;
  }

  /** Writes `source`'s bytes from `start` to `end`; returns how many. */
  copy(source: Buffer, start: number, end: number): number {
    const length = end - start;
    if (this.buffer.length - this.used < length) {
      this.flush();
      if (this.buffer.length < length) {
        writeAll(this.fd, source.subarray(start, end));
        return length;
      }
    }
    source.copy(this.buffer, this.used, start, end);
    this.used += length;
    return length;
  }

  flush(): void {
    writeAll(this.fd, this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  close(): void {
    closeSync(this.fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** The only run of an export that fits in memory. */
class MemoryRun implements Run {
  customerId = '';
  text = '';
  private readonly order: number[];
  private k = -1;

  constructor(private held: Held | undefined) {
    this.order = held!.order();
  }

  next(): boolean {
    const held = this.held;
    if (held === undefined || ++this.k >= this.order.length) return false;
    const c = this.order[this.k]!;
    this.customerId = held.ids[c]!;
    let text = '';
    const { starts, links } = held;
    for (let n = 0, p = held.heads.get(c), pieces = held.counts.get(c); n < pieces; n++, p = links.get(p))
      text += held.bytes.text(starts.get(p), starts.get(p + 1));
    this.text = text;
    return true;
  }

  mapRows(rows: RowMap): void {
    const held = this.held!;
    const c = this.order[this.k]!;
    const { rows: from, links } = held;
    for (let n = 0, p = held.heads.get(c), pieces = held.counts.get(c); n < pieces; n++, p = links.get(p))
      rows.add(from.get(p), from.get(p + 1) - from.get(p));
  }

  close(): void {
    this.held = undefined;
  }
}

/** A run read back customer by customer, a block at a time (reads of a local file: synchronous). */
class FileRun implements Run {
  customerId = '';
  text = '';
  private readonly texts: TextReader;
  private readonly meta: MetaReader;
  private pieces = 0;
  private readonly rows: number[] = [];
  private readonly lines: number[] = [];

  constructor(path: string, folder: TempFolder) {
    this.texts = new TextReader(`${path}.text`, folder);
    this.meta = new MetaReader(`${path}.meta`, folder);
  }

  next(): boolean {
    const meta = this.meta;
    const idChars = meta.number();
    if (idChars === undefined) return false;
    this.pieces = meta.need(meta.number());
    const textChars = meta.need(meta.number());
    for (let n = 0; n < this.pieces; n++) {
      this.rows[n] = meta.need(meta.number());
      this.lines[n] = meta.need(meta.number());
    }
    this.customerId = this.texts.take(idChars);
    this.text = this.texts.take(textChars);
    return true;
  }

  mapRows(rows: RowMap): void {
    for (let n = 0; n < this.pieces; n++) rows.add(this.rows[n]!, this.lines[n]!);
  }

  close(): void {
    this.texts.close();
    this.meta.close();
  }
}

/** A file of the folder read in order, a block at a time; opened at the first read. */
class BlockReader {
  private fd: number | undefined;
  ended = false;

  constructor(
    readonly path: string,
    private readonly folder: TempFolder,
  ) {}

  /** Reads into `bytes` from `at`; 0 at the file's end. */
  read(bytes: Uint8Array, at: number): number {
    if (this.ended) return 0;
    const read = this.folder.guard(() => {
      this.fd ??= openSync(this.path, 'r');
      return readSync(this.fd, bytes, at, bytes.length - at, null);
    });
    if (read === 0) this.ended = true;
    return read;
  }

  corrupt(): Error {
    return new Error(`line sort: ${this.path} ends inside a record`);
  }

  close(): void {
    this.ended = true;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

class MetaReader extends BlockReader {
  private readonly bytes = new Uint8Array(READ_BYTES);
  /** Read as written (little-endian), whatever the machine's own order. */
  private readonly words = new DataView(this.bytes.buffer);
  private at = 0;
  private end = 0;

  /** The next number; undefined at the end of the file. */
  number(): number | undefined {
    if (this.at === this.end && !this.fill()) return undefined;
    return this.words.getUint32(4 * this.at++, true);
  }

  need(value: number | undefined): number {
    if (value === undefined) throw this.corrupt();
    return value;
  }

  private fill(): boolean {
    let got = 0;
    do {
      const read = this.read(this.bytes, got);
      if (read === 0) break;
      got += read;
    } while (got % 4 !== 0);
    if (got % 4 !== 0) throw this.corrupt();
    this.at = 0;
    this.end = got / 4;
    return got > 0;
  }
}

class TextReader extends BlockReader {
  private readonly buffer = Buffer.allocUnsafe(READ_BYTES);
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  private at = 0;

  /** The next `chars` characters. */
  take(chars: number): string {
    if (this.text.length - this.at < chars) {
      let text = this.text.slice(this.at);
      while (text.length < chars) {
        if (this.ended) throw this.corrupt();
        const read = this.read(this.buffer, 0);
        text += read === 0 ? this.decoder.end() : this.decoder.write(this.buffer.subarray(0, read));
      }
      this.text = text;
      this.at = 0;
    }
    const value = this.text.slice(this.at, this.at + chars);
    this.at += chars;
    return value;
  }
}

/** The header, then each customer's lines from every run (runs in file order), customers in order. */
async function* merged(header: string, runs: Run[], rows: RowMap, outChars: number): AsyncGenerator<string> {
  try {
    rows.add(1, 1);
    let out = header.endsWith('\n') ? header : `${header}\n`;
    const live = runs.filter((run) => run.next());
    while (live.length > 0) {
      let customerId = live[0]!.customerId;
      for (let r = 1; r < live.length; r++)
        if (compareIds(live[r]!.customerId, customerId) < 0) customerId = live[r]!.customerId;
      for (let r = 0; r < live.length; ) {
        const run = live[r]!;
        if (run.customerId === customerId) {
          run.mapRows(rows);
          out += run.text;
          if (!run.next()) {
            live.splice(r, 1);
            continue;
          }
        }
        r++;
      }
      if (out.length >= outChars) {
        yield out;
        out = '';
      }
    }
    if (out.length) yield out;
  } finally {
    for (const run of runs) run.close();
  }
}
