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
/** Pieces held before a run is written out: 12 bytes each besides their text (very short lines). */
const RUN_PIECES = 1 << 20;
/** An export this small is sorted in memory, without files. */
const IN_MEMORY_CHARS = 4 << 20;
/** More runs than this (an export over 8 GB) is staged instead: each run open at once costs read buffers. */
const MAX_RUNS = 256;
const READ_BYTES = 1 << 16;
const WRITE_BYTES = 1 << 20;
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
  const held = new Held(Math.min(budget, (file.input.bytes ?? 0) + 1024));
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
    input: { ...file.input, stream: Readable.from(merged(header, runs, rows), { objectMode: true, highWaterMark: 1 }) },
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
 * The lines of the next run, as UTF-8 in one buffer, with numbers in typed arrays rather than an
 * object or a string per piece (a shuffled export makes a piece of every line: objects kept that
 * long are what the garbage collector copies and promotes): piece `p`'s bytes are
 * `[starts[p], starts[p + 1])`, its customer `ids[customers[p]]`. Pieces come in the file's order,
 * each from the row after the last: their rows follow from `firstRow` and their lines. Pieces are
 * encoded a chunk's worth at a time (`encode`): one call per line cost more than the cut.
 */
class Held {
  bytes: Buffer;
  used = 0;
  pieces = 0;
  chars = 0;
  firstRow = 0;
  ids: string[] = [];
  starts: Uint32Array = new Uint32Array(1 << 12);
  customers: Uint32Array = new Uint32Array(1 << 12);
  lines: Uint32Array = new Uint32Array(1 << 12);
  /** Each piece's characters (its bytes may be more). */
  lengths: Uint32Array = new Uint32Array(1 << 12);
  private index = new Map<string, number>();
  /** Pieces added since the last `encode`, and their text together. */
  private batch: string[] = [];
  private batchText = '';

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(Math.max(capacity, 1 << 16));
  }

  add(customerId: string, row: number, lines: number, text: string): void {
    let customer = this.index.get(customerId);
    if (customer === undefined) {
      customer = this.ids.length;
      this.ids.push(customerId);
      this.index.set(customerId, customer);
    }
    const p = this.pieces++;
    if (p === 0) this.firstRow = row;
    if (p + 1 >= this.starts.length) {
      this.starts = grown(this.starts);
      this.customers = grown(this.customers);
      this.lines = grown(this.lines);
      this.lengths = grown(this.lengths);
    }
    this.customers[p] = customer;
    this.lines[p] = lines;
    this.lengths[p] = text.length;
    this.chars += text.length;
    this.batch.push(text);
    this.batchText += text;
  }

  /** The pieces added since the last call, to bytes: encoded together, and told apart by their lengths. */
  encode(): void {
    const text = this.batchText;
    const batch = this.batch;
    if (batch.length === 0) return;
    if (this.bytes.length - this.used < 3 * text.length) {
      const larger = Buffer.allocUnsafe(Math.max(this.used + 3 * text.length, 2 * this.bytes.length));
      this.bytes.copy(larger, 0, 0, this.used);
      this.bytes = larger;
    }
    const bytes = this.bytes.write(text, this.used, 'utf8');
    // Lines end in a line break: no character is split between two pieces.
    const ascii = bytes === text.length;
    let at = this.used;
    let p = this.pieces - batch.length;
    for (const piece of batch) {
      this.starts[p++] = at;
      at += ascii ? piece.length : Buffer.byteLength(piece, 'utf8');
    }
    this.starts[p] = at;
    this.used = at;
    this.batch = [];
    this.batchText = '';
  }

  /** Nothing held; `release`: the buffers too. */
  clear(release = false): void {
    this.used = 0;
    this.pieces = 0;
    this.chars = 0;
    this.ids = [];
    this.index = new Map();
    if (release) {
      this.bytes = Buffer.alloc(0);
      this.starts = this.customers = this.lines = this.lengths = new Uint32Array(1);
    }
  }

  /** Each piece's first row. */
  rows(): Uint32Array {
    const rows = new Uint32Array(this.pieces);
    let row = this.firstRow;
    for (let p = 0; p < rows.length; p++) {
      rows[p] = row;
      row += this.lines[p]!;
    }
    return rows;
  }

  /**
   * The customers in `compareIds` order (`order`, places in `ids`) and the pieces grouped by
   * customer in that order, each customer's in the file's order: customer `order[k]`'s are
   * `pieces[starts[k]]` to `pieces[starts[k + 1] - 1]` (a counting sort, stable).
   */
  sorted(): { order: number[]; starts: Uint32Array; pieces: Uint32Array } {
    const ids = this.ids;
    const order = sortedIds(ids).map((id) => this.index.get(id)!);
    const rank = new Uint32Array(ids.length);
    for (let k = 0; k < order.length; k++) rank[order[k]!] = k;
    const starts = new Uint32Array(ids.length + 1);
    const customers = this.customers;
    const count = this.pieces;
    for (let p = 0; p < count; p++) {
      const k = rank[customers[p]!]! + 1;
      starts[k] = starts[k]! + 1;
    }
    for (let k = 0; k < ids.length; k++) starts[k + 1] = starts[k + 1]! + starts[k]!;
    const next = starts.slice(0, ids.length);
    const pieces = new Uint32Array(count);
    for (let p = 0; p < count; p++) {
      const k = rank[customers[p]!]!;
      pieces[next[k]!] = p;
      next[k] = next[k]! + 1;
    }
    return { order, starts, pieces };
  }
}

function grown(array: Uint32Array): Uint32Array {
  const larger = new Uint32Array(array.length * 2);
  larger.set(array);
  return larger;
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
  const { order, starts, pieces } = held.sorted();
  const { ids, bytes, starts: at, lines, lengths } = held;
  const rows = held.rows();
  const meta = new Uint32Array(3 * order.length + 2 * pieces.length);
  let m = 0;
  const text = new RunWriter(`${path}.text`);
  try {
    for (let k = 0; k < order.length; k++) {
      const id = ids[order[k]!]!;
      text.text(id);
      meta[m++] = id.length;
      meta[m++] = starts[k + 1]! - starts[k]!;
      const charsAt = m++;
      let chars = 0;
      for (let i = starts[k]!; i < starts[k + 1]!; i++) {
        const p = pieces[i]!;
        text.copy(bytes, at[p]!, at[p + 1]!);
        chars += lengths[p]!;
        meta[m++] = rows[p]!;
        meta[m++] = lines[p]!;
      }
      meta[charsAt] = chars;
    }
    text.flush();
  } finally {
    text.close();
  }
  const fd = openSync(`${path}.meta`, 'wx', 0o600);
  try {
    writeAll(fd, new Uint8Array(meta.buffer));
  } finally {
    closeSync(fd);
  }
}

class RunWriter {
  private readonly fd: number;
  private readonly buffer = Buffer.allocUnsafe(WRITE_BYTES);
  private used = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'wx', 0o600);
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
  private readonly starts: Uint32Array;
  private readonly pieces: Uint32Array;
  private readonly rows: Uint32Array;
  private k = -1;

  constructor(private held: Held | undefined) {
    ({ order: this.order, starts: this.starts, pieces: this.pieces } = held!.sorted());
    this.rows = held!.rows();
  }

  next(): boolean {
    const held = this.held;
    if (held === undefined || ++this.k >= this.order.length) return false;
    this.customerId = held.ids[this.order[this.k]!]!;
    let text = '';
    for (let i = this.starts[this.k]!; i < this.starts[this.k + 1]!; i++) {
      const p = this.pieces[i]!;
      text += held.bytes.toString('utf8', held.starts[p]!, held.starts[p + 1]!);
    }
    this.text = text;
    return true;
  }

  mapRows(rows: RowMap): void {
    const held = this.held!;
    for (let i = this.starts[this.k]!; i < this.starts[this.k + 1]!; i++) {
      const p = this.pieces[i]!;
      rows.add(this.rows[p]!, held.lines[p]!);
    }
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
  private readonly words = new Uint32Array(READ_BYTES / 4);
  private readonly bytes = new Uint8Array(this.words.buffer);
  private at = 0;
  private end = 0;

  /** The next number; undefined at the end of the file. */
  number(): number | undefined {
    if (this.at === this.end && !this.fill()) return undefined;
    return this.words[this.at++];
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
async function* merged(header: string, runs: Run[], rows: RowMap): AsyncGenerator<string> {
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
      if (out.length >= OUT_CHARS) {
        yield out;
        out = '';
      }
    }
    if (out.length) yield out;
  } finally {
    for (const run of runs) run.close();
  }
}
