import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { Readable } from 'node:stream';
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

/** Characters of lines held before a run is written out. */
export const RUN_CHARS = 4 << 20;
/** Pieces held before a run is written out: each costs objects, whatever its length (short lines). */
const RUN_PIECES = 50_000;
/** An export this small is sorted in memory, without files. */
const IN_MEMORY_CHARS = 4 << 20;
/** More runs than this (an export over 2 GB) is staged instead: each run open at once costs read buffers. */
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

/** Contiguous lines of one customer, as cut: the file's row of the first, how many, and their text. */
interface Piece {
  row: number;
  lines: number;
  text: string;
}

interface RunRecord {
  customerId: string;
  pieces: { row: number; lines: number }[];
  /** The pieces' lines, together. */
  text: string;
}

interface Run {
  next(): RunRecord | undefined;
  close(): void;
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
  let held = new Map<string, Piece[]>();
  let heldChars = 0;
  let heldPieces = 0;
  const runFiles: string[] = [];
  const spill = (): void => {
    const path = folder.path(`${file.role}-${runFiles.length}.run`);
    folder.guard(() => writeRun(path, held));
    runFiles.push(path);
    held = new Map();
    heldChars = 0;
    heldPieces = 0;
  };
  /** Takes what the cutter closed; false when it stopped, or numbered a line otherwise than counted. */
  const take = (atEnd: boolean): boolean => {
    if (cutter.stopped) return false;
    for (const item of cutter.items) {
      let customerId: string;
      let piece: Piece;
      if ('group' in item) {
        // The cut's own object is kept as the piece: a shuffled export makes one per line.
        piece = item.group;
        if (piece.row !== nextRow) return false;
        customerId = item.group.customerId;
      } else {
        const lines = countLines(item.text, atEnd);
        if (nextRow === 1) {
          if (lines !== 1) return false;
          header = item.text;
          nextRow++;
          continue;
        }
        customerId = '';
        piece = { row: nextRow, lines, text: item.text };
      }
      nextRow += piece.lines;
      // Rows are kept in 32 bits on disk: an export of four billion lines is staged instead.
      if (nextRow > 0xffff_ffff) return false;
      // Only the file's last line can lack its line break: the lines that follow it here need one.
      if (atEnd && !piece.text.endsWith('\n')) piece.text += '\n';
      const pieces = held.get(customerId);
      if (pieces === undefined) held.set(customerId, [piece]);
      else pieces.push(piece);
      heldChars += piece.text.length;
      heldPieces++;
    }
    cutter.items.length = 0;
    return true;
  };
  for await (const chunk of file.input.stream as AsyncIterable<string>) {
    cutter.push(chunk);
    if (!take(false)) return undefined;
    options.onLines?.(nextRow - 1);
    if (heldChars >= budget || heldPieces >= RUN_PIECES) {
      if (runFiles.length + 1 >= MAX_RUNS) return undefined;
      spill();
    }
  }
  cutter.end();
  if (!take(true) || header === undefined) return undefined;
  options.onLines?.(nextRow - 1);
  const runs: Run[] = [];
  if (runFiles.length === 0 && heldChars <= IN_MEMORY_CHARS) runs.push(memoryRun(held));
  else {
    if (held.size > 0) spill();
    for (const path of runFiles) runs.push(new FileRun(path, folder));
  }
  held = new Map();
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

/** Customers in code point order (JavaScript's default sort is by UTF-16 units: the same below U+D800). */
function sortedIds(held: Map<string, Piece[]>): string[] {
  const ids = [...held.keys()];
  return ids.some((id) => /[\ud800-\udfff]/.test(id)) ? ids.sort(compareIds) : ids.sort();
}

/**
 * A run on disk, in two files: `.text`, each customer's id then its lines, as UTF-8; `.meta`, 32-bit
 * numbers: for each customer the bytes of its id, its pieces and the bytes of its lines, then each
 * piece's first row and lines. Numbers in binary: as text, writing and reading them back cost more
 * than the lines themselves.
 */
function writeRun(path: string, held: Map<string, Piece[]>): void {
  const text = new RunWriter(`${path}.text`, WRITE_BYTES);
  const meta = new RunWriter(`${path}.meta`, WRITE_BYTES / 4);
  try {
    for (const id of sortedIds(held)) {
      const pieces = held.get(id)!;
      const idBytes = text.text(id);
      let textBytes = 0;
      for (const p of pieces) textBytes += text.text(p.text);
      meta.number(idBytes);
      meta.number(pieces.length);
      meta.number(textBytes);
      for (const p of pieces) {
        meta.number(p.row);
        meta.number(p.lines);
      }
    }
    text.flush();
    meta.flush();
  } finally {
    text.close();
    meta.close();
  }
}

class RunWriter {
  private readonly fd: number;
  private readonly buffer: Buffer;
  private used = 0;

  constructor(path: string, bytes: number) {
    this.fd = openSync(path, 'wx', 0o600);
    this.buffer = Buffer.allocUnsafe(bytes);
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

  number(value: number): void {
    if (this.buffer.length - this.used < 4) this.flush();
    this.buffer.writeUInt32LE(value, this.used);
    this.used += 4;
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

function memoryRun(held: Map<string, Piece[]>): Run {
  const ids = sortedIds(held);
  let i = 0;
  return {
    next: () => {
      if (i >= ids.length) return undefined;
      const customerId = ids[i++]!;
      const pieces = held.get(customerId)!;
      held.delete(customerId);
      return {
        customerId,
        pieces: pieces.map((p) => ({ row: p.row, lines: p.lines })),
        text: pieces.map((p) => p.text).join(''),
      };
    },
    close: () => held.clear(),
  };
}

/** A run read back customer by customer, a buffer at a time (reads of a local file: synchronous). */
class FileRun implements Run {
  private readonly text: RunReader;
  private readonly meta: RunReader;

  constructor(path: string, folder: TempFolder) {
    this.text = new RunReader(`${path}.text`, READ_BYTES, folder);
    this.meta = new RunReader(`${path}.meta`, READ_BYTES / 4, folder);
  }

  next(): RunRecord | undefined {
    const idBytes = this.meta.number();
    if (idBytes === undefined) return undefined;
    const count = this.meta.need(this.meta.number());
    const textBytes = this.meta.need(this.meta.number());
    const pieces: { row: number; lines: number }[] = new Array(count);
    for (let n = 0; n < count; n++)
      pieces[n] = { row: this.meta.need(this.meta.number()), lines: this.meta.need(this.meta.number()) };
    const customerId = this.text.text(idBytes);
    return { customerId, pieces, text: this.text.text(textBytes) };
  }

  close(): void {
    this.text.close();
    this.meta.close();
  }
}

class RunReader {
  private fd: number | undefined;
  private buffer: Buffer;
  private start = 0;
  private end = 0;
  private ended = false;

  constructor(
    private readonly path: string,
    bytes: number,
    private readonly folder: TempFolder,
  ) {
    this.buffer = Buffer.allocUnsafe(bytes);
  }

  /** The next number; undefined at the end of the file. */
  number(): number | undefined {
    if (!this.fill(4)) return undefined;
    const value = this.buffer.readUInt32LE(this.start);
    this.start += 4;
    return value;
  }

  need(value: number | undefined): number {
    if (value === undefined) throw new Error(`line sort: ${this.path} ends inside a record`);
    return value;
  }

  text(bytes: number): string {
    if (!this.fill(bytes)) throw new Error(`line sort: ${this.path} ends inside a record`);
    const value = this.buffer.toString('utf8', this.start, this.start + bytes);
    this.start += bytes;
    return value;
  }

  /** At least `bytes` bytes buffered, reading (and growing the buffer) as needed; false at the end. */
  private fill(bytes: number): boolean {
    while (this.end - this.start < bytes) {
      if (this.ended) return false;
      if (this.buffer.length < bytes) {
        const grown = Buffer.allocUnsafe(bytes * 2);
        this.buffer.copy(grown, 0, this.start, this.end);
        this.buffer = grown;
      } else this.buffer.copy(this.buffer, 0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
      this.folder.guard(() => {
        this.fd ??= openSync(this.path, 'r');
        const read = readSync(this.fd, this.buffer, this.end, this.buffer.length - this.end, null);
        if (read === 0) this.ended = true;
        this.end += read;
      });
    }
    return true;
  }

  close(): void {
    this.ended = true;
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The header, then each customer's lines from every run (runs in file order), customers in order. */
async function* merged(header: string, runs: Run[], rows: RowMap): AsyncGenerator<string> {
  try {
    rows.add(1, 1);
    let out: string[] = [header.endsWith('\n') ? header : `${header}\n`];
    let chars = 0;
    const heads = runs.map((run) => run.next());
    while (true) {
      let customerId: string | undefined;
      for (const head of heads)
        if (head !== undefined && (customerId === undefined || compareIds(head.customerId, customerId) < 0))
          customerId = head.customerId;
      if (customerId === undefined) break;
      for (let r = 0; r < runs.length; r++) {
        const head = heads[r];
        if (head === undefined || head.customerId !== customerId) continue;
        for (const piece of head.pieces) rows.add(piece.row, piece.lines);
        out.push(head.text);
        chars += head.text.length;
        heads[r] = runs[r]!.next();
      }
      if (chars >= OUT_CHARS) {
        yield out.join('');
        out = [];
        chars = 0;
      }
    }
    if (out.length) yield out.join('');
  } finally {
    for (const run of runs) run.close();
  }
}
