import type { Hash } from 'node:crypto';
import { Readable } from 'node:stream';
import { planCsv } from './csv.js';
import type { RawCounts, RawCustomer } from './groups.js';
import { compareIds } from './staging.js';
import { csvDelimiter, type Mapping } from '../mapping/mapping.js';
import type { InputSource } from '../sources.js';
import { TableReader } from '../table/reader.js';

/**
 * The first look of a run that keeps the record of what was sent (`--changed-only`) at a CSV export
 * sorted by customer: before the reader parses anything, the text is cut into lines and the lines
 * into customers by the customer id column alone, and a customer whose lines are, byte for byte,
 * those recorded when it was last sent (asked of `unchanged`, with the files' headers as context)
 * is taken out of the text: its lines reach the reader as blank lines, which it counts but skips,
 * so row numbers stay those of the file, and the customer is handed on with the counts recorded
 * for it. Every other line reaches the reader as it was; so does everything once the cut is not
 * sure of a line (see `LineCutter`).
 *
 * Why lines and not cells: parsing, decoding cells and converting them is most of a push's cost, and
 * the first look exists to skip it. Why the file's order and not a canonical one: which row of a
 * loan wins depends on the order of its rows, and only parsing could tell what a reorder changes.
 * So a customer whose rows come in another order, with other line endings or other quoting, takes
 * the reader's path (where its payload is compared, and its lines learnt for next time).
 *
 * Safe by construction: lines are recorded for a customer only when the reader found exactly those
 * lines to be that customer, with nothing refused (see `rawFor`), so equal lines, under equal
 * headers, read the same. Customers must come in order in each file, as the reader requires
 * (NotSortedError, and the export is staged): so a customer whose lines are split anywhere in a
 * file is never skipped in part. The reader checks the order too, skipped customers included, in
 * the place the look decided them (`takeSkipped`).
 */

const QUOTE = 34;
/** A line longer than this ends the look (the reader has its own limits and errors). */
const MAX_LINE_CHARS = 1 << 20;
const IRREGULAR = Symbol('irregular');

/** A customer's lines as cut: contiguous lines with the same customer id. */
export interface CutGroup {
  customerId: string;
  text: string;
  /** The spreadsheet row of its first line. */
  row: number;
  lines: number;
  /** False when a blank line or a line without a customer id sits between its lines: never skipped. */
  clean: boolean;
}

type CutItem = { group: CutGroup } | { text: string };

/** Lines being cut: those of earlier chunks (`pieces`), then [`from`, `to`) of the current one (`from` < 0: none). */
interface Open {
  customerId: string;
  pieces: string[];
  from: number;
  to: number;
  row: number;
  lines: number;
  clean: boolean;
}

function held(part: Open, text: string): string[] {
  return part.from >= 0 ? [...part.pieces, text.slice(part.from, part.to)] : part.pieces;
}

/** The same, as one text (most customers' lines lie in one chunk: no array then). */
function heldText(part: Open, text: string): string {
  if (part.pieces.length === 0) return part.from >= 0 ? text.slice(part.from, part.to) : '';
  return held(part, text).join('');
}

/**
 * A CSV file's text cut into lines and customers, for one coordinator. Conservative: a line the
 * cut cannot be sure of (a lone CR, a quote that is not a whole quoted value, a quoted line break,
 * a line over a megabyte) stops the cut, and from there every character passes through as it is.
 */
export class LineCutter {
  /** Closed items, in file order: customers, and text between them (blank lines, lines without an id). */
  readonly items: CutItem[] = [];
  stopped = false;
  ended = false;
  header: string[] | undefined;
  private carry = '';
  private row = 0;
  private customerIndex = -1;
  /** The customer being cut: its lines from earlier chunks (`pieces`), then those of this one (`from`, `to`). */
  private open: Open | undefined;
  /** Lines without a customer after the open customer's last line, kept the same way. */
  private readonly pending: Open = { customerId: '', pieces: [], from: -1, to: -1, row: 0, lines: 0, clean: true };
  /** The cell found by `plainCell`. */
  private cellStart = 0;
  private cellEnd = 0;
  private readonly delimiterCode: number;

  constructor(
    private readonly delimiter: string,
    /** The header's cells → the customer id column, or undefined when the header cannot be read. */
    private readonly plan: (header: string[]) => number | undefined,
  ) {
    this.delimiterCode = delimiter.charCodeAt(0);
  }

  push(chunk: string): void {
    if (this.stopped) {
      if (chunk) this.items.push({ text: chunk });
      return;
    }
    if (this.carry) {
      // The line the last chunk cut is completed on its own: joined to the whole chunk, the chunk
      // would be copied (a large export's every byte, once more) before it could be searched.
      const lf = chunk.indexOf('\n');
      if (lf < 0 || lf === chunk.length - 1) {
        this.cut(this.carry + chunk);
        return;
      }
      this.cut(this.carry + chunk.slice(0, lf + 1));
      chunk = chunk.slice(lf + 1);
      if (this.stopped) {
        this.items.push({ text: chunk });
        return;
      }
    }
    this.cut(chunk);
  }

  /** Cuts `text`, a chunk with nothing carried before it (`carry` is empty). */
  private cut(text: string): void {
    this.carry = '';
    let pos = 0;
    let quoteAt = -1;
    let crAt = -1;
    while (true) {
      const lf = text.indexOf('\n', pos);
      if (lf < 0) break;
      if (quoteAt < pos) quoteAt = indexOrEnd(text, '"', pos);
      if (crAt < pos) crAt = indexOrEnd(text, '\r', pos);
      const end = crAt === lf - 1 ? lf - 1 : lf;
      if (crAt < end || !this.line(text, pos, lf + 1, end, quoteAt < end)) {
        this.stop(text, pos);
        return;
      }
      pos = lf + 1;
    }
    this.keep(text);
    this.carry = text.slice(pos);
    if (this.carry.length > MAX_LINE_CHARS) this.stop('', 0);
  }

  /** The input ended: its last line (one without a line break) and the open customer are closed. */
  end(): void {
    this.ended = true;
    if (this.stopped) return;
    const last = this.carry;
    this.carry = '';
    if (last) {
      const cr = last.indexOf('\r');
      const end = cr >= 0 ? cr : last.length;
      if ((cr >= 0 && cr !== last.length - 1) || !this.line(last, 0, last.length, end, last.includes('"'))) {
        this.stop(last, 0);
        return;
      }
      this.keep(last);
    }
    this.close();
  }

  /**
   * Nothing more is cut: the open customer, the lines waiting and the rest of `text` from `from`
   * pass through as text. Called with ('', 0) from outside, when another file's cut stopped.
   */
  stop(text: string, from: number): void {
    if (!this.stopped) {
      this.stopped = true;
      const open = this.open;
      this.open = undefined;
      const parts = [...(open ? held(open, text) : []), ...held(this.pending, text), this.carry, text.slice(from)];
      this.carry = '';
      const all = parts.join('');
      if (all) this.items.push({ text: all });
    } else if (from < text.length) this.items.push({ text: text.slice(from) });
  }

  /** One line, [start, next) of `text` (its line break from `end`); false when it cannot be cut for sure. */
  private line(text: string, start: number, next: number, end: number, quoted: boolean): boolean {
    // The carry's check misses a line completed by the chunk that brings its last part; the reader
    // would refuse such a line with its row in the text it reads, which the line sort reorders.
    if (end - start > MAX_LINE_CHARS) return false;
    this.row++;
    if (this.row === 1) {
      const line = text.slice(start, next);
      this.header = headerCells(line, this.delimiter);
      const index = this.header === undefined ? undefined : this.plan(this.header);
      if (index === undefined) return false;
      this.customerIndex = index;
      this.items.push({ text: line });
      return true;
    }
    const open = this.open;
    let id: string | undefined;
    if (quoted) {
      const found = this.quotedId(text, start, end);
      if (found === IRREGULAR) return false;
      id = found;
    } else if (this.plainCell(text, start, end)) {
      const s = this.cellStart;
      const length = this.cellEnd - s;
      // The common case: the same customer as the line before, told without making a string.
      if (open !== undefined && length === open.customerId.length && text.startsWith(open.customerId, s)) {
        this.extend(open, start, next);
        return true;
      }
      id = text.slice(s, this.cellEnd).trim();
    } else id = '';
    if (id === '') {
      // A blank line, or one without a customer id: the reader skips it, or refuses it alone.
      const pending = this.pending;
      if (pending.from < 0) pending.from = start;
      pending.to = next;
      pending.lines++;
      return true;
    }
    if (open !== undefined && open.customerId === id) this.extend(open, start, next);
    else {
      this.close(text);
      this.open = { customerId: id, pieces: [], from: start, to: next, row: this.row, lines: 1, clean: true };
    }
    return true;
  }

  /** A line of the open customer: the lines waiting before it become its own, and it is never skipped. */
  private extend(open: Open, start: number, next: number): void {
    const pending = this.pending;
    if (pending.lines) {
      open.pieces.push(...pending.pieces);
      if (open.from < 0) open.from = pending.from >= 0 ? pending.from : start;
      open.lines += pending.lines;
      open.clean = false;
      pending.pieces = [];
      pending.from = -1;
      pending.lines = 0;
    } else if (open.from < 0) open.from = start;
    open.to = next;
    open.lines++;
  }

  /** Closes the open customer, and hands on the lines waiting after it. */
  private close(text = ''): void {
    const open = this.open;
    if (open !== undefined)
      this.items.push({
        group: {
          customerId: open.customerId,
          text: heldText(open, text),
          row: open.row,
          lines: open.lines,
          clean: open.clean,
        },
      });
    this.open = undefined;
    const pending = this.pending;
    if (pending.lines) this.items.push({ text: heldText(pending, text) });
    pending.pieces = [];
    pending.from = -1;
    pending.lines = 0;
  }

  /** At a chunk's end: what the open customer and the waiting lines hold of it is copied aside. */
  private keep(text: string): void {
    for (const part of [this.open, this.pending])
      if (part !== undefined && part.from >= 0) {
        part.pieces.push(text.slice(part.from, part.to));
        part.from = -1;
      }
  }

  /** The customer id cell of a line without quotes, as `cellStart`/`cellEnd`; false when the line has none. */
  private plainCell(text: string, start: number, end: number): boolean {
    let s = start;
    for (let k = 0; k < this.customerIndex; k++) {
      const d = text.indexOf(this.delimiter, s);
      if (d < 0 || d >= end) return false;
      s = d + 1;
    }
    let e = text.indexOf(this.delimiter, s);
    if (e < 0 || e > end) e = end;
    this.cellStart = s;
    this.cellEnd = e;
    return true;
  }

  /** The same for a line with quotes, which must all be whole quoted values closed on the line. */
  private quotedId(text: string, start: number, end: number): string | typeof IRREGULAR {
    let id = '';
    let field = 0;
    let i = start;
    while (true) {
      let value: string;
      if (i < end && text.charCodeAt(i) === QUOTE) {
        let j = i + 1;
        let escaped = false;
        while (true) {
          const q = text.indexOf('"', j);
          if (q < 0 || q >= end) return IRREGULAR;
          if (q + 1 < end && text.charCodeAt(q + 1) === QUOTE) {
            escaped = true;
            j = q + 2;
            continue;
          }
          value = field === this.customerIndex ? text.slice(i + 1, q) : '';
          if (escaped) value = value.replaceAll('""', '"');
          i = q + 1;
          break;
        }
        if (i < end && text.charCodeAt(i) !== this.delimiterCode) return IRREGULAR;
      } else {
        let e = text.indexOf(this.delimiter, i);
        if (e < 0 || e > end) e = end;
        const q = text.indexOf('"', i);
        if (q >= 0 && q < e) return IRREGULAR;
        value = field === this.customerIndex ? text.slice(i, e) : '';
        i = e;
      }
      if (field === this.customerIndex) id = value.trim();
      if (i >= end) return id;
      i++;
      field++;
    }
  }
}

function indexOrEnd(text: string, search: string, from: number): number {
  const at = text.indexOf(search, from);
  return at < 0 ? text.length : at;
}

/** The header line's cells, read by the one table reader; undefined unless it is one whole record. */
function headerCells(line: string, delimiter: string): string[] | undefined {
  const reader = new TableReader({ delimiter, file: 'header' });
  const records: string[][] = [];
  try {
    reader.write(line, (cells) => records.push(cells));
    reader.end((cells) => records.push(cells));
  } catch {
    return undefined;
  }
  return records.length === 1 ? records[0] : undefined;
}

export interface LookFile {
  input: InputSource;
  src: number;
  role: 'rows' | 'loans' | 'payments';
  hash?: Hash;
}

/** A customer the first look found unchanged, with what it counts. */
export interface SkippedCustomer {
  customerId: string;
  /** Its place among the customers the look decided on. */
  seq: number;
  origin: { src: number; row: number };
  rows: number;
  counts: RawCounts;
}

interface Output {
  file: LookFile;
  cutter: LineCutter;
  iterator: AsyncIterator<unknown>;
  out: string[];
  done: boolean;
  /** The customer of its last group decided on. */
  last: string | undefined;
}

/** A customer of the cut, decided on: what comes before it in each file, its lines, and their counts if skipped. */
interface Decision {
  customerId: string;
  groups: (CutGroup | undefined)[];
  before: string[][];
  raw: RawCustomer | undefined;
  counts?: RawCounts | undefined;
}

/** Customers asked about at once: one lookup of the record for many (a lookup each cost a fifth of a 1%-changed run). */
const LOOKUP_BATCH = 64;

/** A file whose rows of a customer come after another's that sorts after it (the caller stages it instead). */
export class NotSortedError extends Error {
  constructor(
    readonly row: number,
    readonly customerId: string,
    readonly previous: string,
    /** The file, when the run reads more than one. */
    readonly file?: string,
  ) {
    super(`${file ? `${file} ` : ''}row ${row}: customer ${customerId} comes after ${previous}`);
  }
}

/**
 * One CSV file with a row per payment, or a --loans and a --payments file read side by side: the
 * texts the reader gets (`inputs`), the customers taken out of them (`skipped`, in customer order),
 * and the lines of those that were not (`rawFor`).
 */
export class FirstLook {
  readonly inputs: InputSource[];
  private readonly files: Output[];
  private readonly queue: SkippedCustomer[] = [];
  private readonly raws = new Map<string, { text: string; digest?: string; lines: number[] }>();
  /** Customers decided on and handed to the reader, with their place (`seq`). */
  private readonly visible = new Map<string, number>();
  private seq = 0;
  private context: string | undefined;

  constructor(
    files: readonly LookFile[],
    mapping: Mapping,
    private readonly unchanged: (raws: readonly RawCustomer[]) => (RawCounts | undefined)[],
  ) {
    const delimiter = csvDelimiter(mapping);
    this.files = files.map((file) => ({
      file,
      cutter: new LineCutter(delimiter, (header) => {
        try {
          return planCsv(file.input.name, file.role, mapping, header).customerIndex;
        } catch {
          // The reader refuses the header with the right message.
          return undefined;
        }
      }),
      iterator: (file.input.stream as AsyncIterable<unknown>)[Symbol.asyncIterator](),
      out: [],
      done: false,
      last: undefined,
    }));
    this.inputs = this.files.map((f, i) => ({
      ...f.file.input,
      stream: Readable.from(this.text(i), { objectMode: true, highWaterMark: 1 }),
    }));
  }

  /**
   * The skipped customers the look decided on before `customerId`, a customer the reader is about
   * to hand on; all of them for one it did not decide on (read after the look stopped), or at the end.
   */
  takeSkipped(customerId?: string): SkippedCustomer[] {
    const seq = customerId === undefined ? undefined : this.visible.get(customerId);
    if (seq !== undefined)
      for (const [id, s] of this.visible) {
        if (s > seq) break;
        this.visible.delete(id);
      }
    let n = 0;
    while (n < this.queue.length && (seq === undefined || this.queue[n]!.seq < seq)) n++;
    return n ? this.queue.splice(0, n) : [];
  }

  /**
   * The lines of a customer the reader has read, when the cut found exactly as many lines for it
   * in each file as the reader found rows (`rows`, per file): else none, and nothing is learnt.
   */
  rawFor(customerId: string, rows: readonly number[]): RawCustomer | undefined {
    for (const key of this.raws.keys()) {
      if (compareIds(key, customerId) >= 0) break;
      this.raws.delete(key);
    }
    const entry = this.raws.get(customerId);
    if (entry === undefined) return undefined;
    this.raws.delete(customerId);
    if (entry.lines.some((n, i) => n !== rows[i])) return undefined;
    return { customerId, context: this.context!, text: entry.text, digest: entry.digest };
  }

  private async *text(index: number): AsyncGenerator<string> {
    const file = this.files[index]!;
    let ended = false;
    try {
      while (true) {
        while (file.out.length === 0 && !file.done) await this.step(index);
        if (file.out.length === 0) break;
        const text = file.out.join('');
        file.out = [];
        yield text;
      }
      ended = true;
    } finally {
      // The reader stopped early (an error, an unsorted file staged instead): this file is closed
      // now (the other one when its reader stops), without waiting on a read in progress.
      if (!ended) file.iterator.return?.()?.catch(() => {});
    }
  }

  /** Decides what can be decided; else reads a chunk of the file that holds things up. */
  private async step(wanted: number): Promise<void> {
    if (this.files.some((f) => f.cutter.stopped)) {
      for (const f of this.files) {
        f.cutter.stop('', 0);
        this.flush(f, true);
      }
      // Once stopped, each file only passes its own text on.
      const f = this.files[wanted]!;
      if (f.out.length === 0) await this.read(f);
      return;
    }
    if (this.decide()) return;
    const behind = this.files.find((f) => !f.cutter.ended && !f.cutter.items.some((item) => 'group' in item));
    await this.read(behind ?? this.files[wanted]!);
  }

  private async read(f: Output): Promise<void> {
    if (f.cutter.ended) {
      this.flush(f, true);
      f.done = true;
      return;
    }
    const next = await f.iterator.next();
    if (next.done) f.cutter.end();
    else {
      const chunk = next.value as string;
      f.file.hash?.update(chunk);
      f.cutter.push(chunk);
    }
    if (f.cutter.stopped) this.flush(f, true);
  }

  /** Moves a file's leading text (or, `all`, everything it holds) to its output. */
  private flush(f: Output, all: boolean): void {
    const items = f.cutter.items;
    let n = 0;
    for (; n < items.length; n++) {
      const item = items[n]!;
      if ('text' in item) f.out.push(item.text);
      else if (all) f.out.push(item.group.text);
      else break;
    }
    items.splice(0, n);
    if (all && f.cutter.ended) f.done = true;
  }

  /**
   * Decides the customers whose lines are cut in every file, up to LOOKUP_BATCH of them with one
   * question to `unchanged`; true when it decided any (or the files ended).
   */
  private decide(): boolean {
    const decisions: Decision[] = [];
    let after: string[][] = [];
    while (true) {
      const before = this.files.map(() => [] as string[]);
      const heads = this.files.map((f, i) => {
        const items = f.cutter.items;
        while (items.length > 0 && 'text' in items[0]!) before[i]!.push((items.shift() as { text: string }).text);
        const item = items[0];
        return item !== undefined && 'group' in item ? item.group : undefined;
      });
      let customerId: string | undefined;
      for (const head of heads)
        if (head !== undefined && (customerId === undefined || compareIds(head.customerId, customerId) < 0))
          customerId = head.customerId;
      if (customerId === undefined || this.files.some((f, i) => heads[i] === undefined && !f.cutter.ended)) {
        // What came before lines not cut yet comes after the customers decided here.
        after = before;
        if (customerId === undefined && this.files.every((f) => f.cutter.ended))
          for (const f of this.files) f.done = true;
        break;
      }
      const groups = heads.map((head, i) => {
        if (head === undefined || head.customerId !== customerId) return undefined;
        const f = this.files[i]!;
        // Each file's customers must come in order: else it is staged (see above).
        if (f.last !== undefined && compareIds(customerId, f.last) <= 0)
          throw new NotSortedError(head.row, customerId, f.last, this.files.length > 1 ? f.file.input.name : undefined);
        f.last = customerId;
        f.cutter.items.shift();
        return head;
      });
      decisions.push({ customerId, groups, before, raw: this.rawOf(customerId, groups) });
      if (decisions.length >= LOOKUP_BATCH) break;
    }
    const asked = decisions.filter((d) => d.raw !== undefined);
    const answers = asked.length ? this.unchanged(asked.map((d) => d.raw!)) : [];
    asked.forEach((d, i) => {
      d.counts = answers[i];
    });
    for (const d of decisions) this.emit(d);
    after.forEach((texts, i) => {
      this.files[i]!.out.push(...texts);
    });
    return decisions.length > 0 || this.files.every((f) => f.done);
  }

  /** A customer's lines, when every file's lines of it are clean (else it is not asked about). */
  private rawOf(customerId: string, groups: (CutGroup | undefined)[]): RawCustomer | undefined {
    if (!groups.every((g) => g === undefined || g.clean)) return undefined;
    this.context ??= this.contextOf();
    const text =
      groups.length === 1
        ? groups[0]!.text
        : `${groups[0]?.text.length ?? 0}\n${groups[0]?.text ?? ''}${groups[1]?.text ?? ''}`;
    return { customerId, context: this.context, text };
  }

  private emit(d: Decision): void {
    const seq = this.seq++;
    d.before.forEach((texts, i) => {
      this.files[i]!.out.push(...texts);
    });
    if (d.counts !== undefined) {
      let rows = 0;
      let origin: { src: number; row: number } | undefined;
      d.groups.forEach((g, i) => {
        if (g === undefined) return;
        this.files[i]!.out.push('\n'.repeat(g.lines));
        rows += g.lines;
        origin ??= { src: this.files[i]!.file.src, row: g.row };
      });
      this.queue.push({ customerId: d.customerId, seq, origin: origin!, rows, counts: d.counts });
      return;
    }
    if (d.raw !== undefined) {
      // Once its digest is known, the lines are not kept for the reader's turn.
      const { text, digest } = d.raw;
      this.raws.set(d.customerId, {
        text: digest === undefined ? text : '',
        digest,
        lines: d.groups.map((g) => g?.lines ?? 0),
      });
    }
    this.visible.set(d.customerId, seq);
    d.groups.forEach((g, i) => {
      if (g !== undefined) this.files[i]!.out.push(g.text);
    });
  }

  /** What gives the lines their meaning: the files' roles and headers, as the reader reads them. */
  private contextOf(): string {
    const headers = this.files.map((f) => JSON.stringify(f.cutter.header ?? null));
    return `${this.files.map((f) => f.file.role).join('+')}\n${headers.join('\n')}`;
  }
}
