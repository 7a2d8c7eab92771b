import { parse as parseCsvSync } from 'csv-parse/sync';

/**
 * CSV text → records, giving exactly what csv-parse gives with `{delimiter, relax_column_count: true,
 * bom: true}`, about three times faster. csv-parse walks every byte through its option checks and
 * buffers; here each line is cut with `indexOf` and `slice`, which is most of the reading time of a
 * million-row export (shared/design/performance.md). The rules are csv-parse's own (RFC 4180 plus
 * its choices): the record delimiter is the first `\r\n`, `\n` or `\r` met outside quotes, and
 * after that the other line breaks are ordinary characters; `""` inside quotes is a quote; an empty
 * line is a record of one empty cell; a final line break makes no extra record.
 *
 * Malformed quoting is an error in csv-parse (no `relax_quotes`). This reader does not word those
 * errors itself: it hands the offending record to csv-parse, preceded by as many empty lines as
 * csv-parse would have counted before it, so the error (message, `lines`) is csv-parse's exactly.
 * test/unit/ingest/csv-text.test.ts holds the two readers to each other on generated input.
 */

const QUOTE = 34;
const CR = 13;
const LF = 10;

const enum Mode {
  Unknown = 0,
  Lf = 1,
  CrLf = 2,
  Cr = 3,
}

/** The slow path's answers besides a position. */
const NEED_MORE = -1;
const NOT_FAST = -2;

export type RecordSink = (cells: string[]) => void;

/** Delimiters this reader handles (csv-parse handles the odd rest: a quote or a line break). */
export function fastCsvDelimiter(delimiter: string): boolean {
  return delimiter.length === 1 && delimiter !== '"' && delimiter !== '\r' && delimiter !== '\n';
}

export class CsvTextReader {
  private text = '';
  private pos = 0;
  private mode = Mode.Unknown;
  /** csv-parse's line count before `pos`: record delimiters plus line-break characters inside cells. */
  private lines = 0;
  private started = false;
  /** Cached positions of the next quote and the next line-break character that does not end a line. */
  private nextQuote = -1;
  private nextStray = -1;
  private readonly delimiterCode: number;

  constructor(private readonly delimiter: string) {
    if (!fastCsvDelimiter(delimiter)) throw new Error(`unsupported delimiter ${JSON.stringify(delimiter)}`);
    this.delimiterCode = delimiter.charCodeAt(0);
  }

  /** Reads what `chunk` completes; a record cut by the chunk's end waits for the next one. */
  write(chunk: string, onRecord: RecordSink): void {
    if (!this.started) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    this.text = this.pos < this.text.length ? this.text.slice(this.pos) + chunk : chunk;
    this.pos = 0;
    this.nextQuote = -1;
    this.nextStray = -1;
    this.drain(false, onRecord);
  }

  /** The last record (one without a final line break); throws csv-parse's error for an open quote. */
  end(onRecord: RecordSink): void {
    this.drain(true, onRecord);
    this.text = '';
    this.pos = 0;
  }

  private drain(final: boolean, onRecord: RecordSink): void {
    const text = this.text;
    const length = text.length;
    let pos = this.pos;
    while (pos < length) {
      let next = this.mode === Mode.Unknown ? NOT_FAST : this.fast(text, pos, onRecord);
      if (next === NEED_MORE && final) next = NOT_FAST;
      if (next === NOT_FAST) next = this.slow(text, pos, final, onRecord);
      if (next === NEED_MORE) break;
      pos = next;
    }
    this.pos = pos;
  }

  /**
   * One ordinary line: cells without line breaks inside, quoted or not. Anything else (a quote
   * inside an unquoted cell, a line break inside quotes, a stray `\r`) is left to `slow`.
   */
  private fast(text: string, pos: number, onRecord: RecordSink): number {
    const mode = this.mode;
    const nl = text.indexOf(mode === Mode.Cr ? '\r' : '\n', pos);
    if (nl === -1) return NEED_MORE;
    let lineEnd = nl;
    if (mode === Mode.CrLf) {
      if (nl === pos || text.charCodeAt(nl - 1) !== CR) return NOT_FAST;
      lineEnd = nl - 1;
    }
    if (this.nextStray < pos) {
      const found = text.indexOf(mode === Mode.Cr ? '\n' : '\r', pos);
      this.nextStray = found === -1 ? text.length : found;
    }
    if (this.nextStray < lineEnd) return NOT_FAST;
    const delimiter = this.delimiter;
    const cells: string[] = [];
    let s = pos;
    while (true) {
      if (s < lineEnd && text.charCodeAt(s) === QUOTE) {
        let value = '';
        let q = s + 1;
        while (true) {
          const e = text.indexOf('"', q);
          if (e === -1 || e >= lineEnd) return NOT_FAST;
          if (e + 1 < lineEnd && text.charCodeAt(e + 1) === QUOTE) {
            value += text.slice(q, e + 1);
            q = e + 2;
            continue;
          }
          value += text.slice(q, e);
          s = e + 1;
          break;
        }
        cells.push(value);
        if (s === lineEnd) break;
        if (text.charCodeAt(s) !== this.delimiterCode) return NOT_FAST;
        s++;
        continue;
      }
      if (this.nextQuote < s) {
        const found = text.indexOf('"', s);
        this.nextQuote = found === -1 ? text.length : found;
      }
      let c = text.indexOf(delimiter, s);
      if (c === -1 || c > lineEnd) c = lineEnd;
      if (this.nextQuote < c) return NOT_FAST;
      cells.push(text.slice(s, c));
      if (c === lineEnd) break;
      s = c + 1;
    }
    onRecord(cells);
    this.lines++;
    return nl + 1;
  }

  /** Length of the record delimiter at `i` (0 if none), discovering it on the first line break. */
  private recordDelimiterAt(text: string, i: number, final: boolean): number {
    const ch = text.charCodeAt(i);
    if (ch !== CR && ch !== LF) return 0;
    const last = i + 1 >= text.length;
    switch (this.mode) {
      case Mode.Unknown:
        if (ch === LF) {
          this.mode = Mode.Lf;
          return 1;
        }
        if (last && !final) return NEED_MORE;
        if (!last && text.charCodeAt(i + 1) === LF) {
          this.mode = Mode.CrLf;
          return 2;
        }
        this.mode = Mode.Cr;
        return 1;
      case Mode.Lf:
        return ch === LF ? 1 : 0;
      case Mode.Cr:
        return ch === CR ? 1 : 0;
      case Mode.CrLf:
        if (ch !== CR) return 0;
        if (last) return final ? 0 : NEED_MORE;
        return text.charCodeAt(i + 1) === LF ? 2 : 0;
    }
  }

  /** csv-parse's state machine for one record: any content, and its errors. */
  private slow(text: string, start: number, final: boolean, onRecord: RecordSink): number {
    const length = text.length;
    const cells: string[] = [];
    let field = '';
    let quoting = false;
    let wasQuoting = false;
    let breaks = 0;
    let i = start;
    while (true) {
      if (i >= length) {
        if (!final) return NEED_MORE;
        if (quoting) this.fail(text, start);
        if (wasQuoting || cells.length !== 0 || field.length !== 0) {
          cells.push(field);
          onRecord(cells);
        }
        this.lines += breaks;
        return length;
      }
      const ch = text.charCodeAt(i);
      if (quoting) {
        if (ch === QUOTE) {
          if (i + 1 >= length && !final) return NEED_MORE;
          if (i + 1 < length && text.charCodeAt(i + 1) === QUOTE) {
            field += '"';
            i += 2;
            continue;
          }
          const after = i + 1 >= length ? 0 : this.recordDelimiterAt(text, i + 1, final);
          if (after === NEED_MORE) return NEED_MORE;
          if (i + 1 >= length || text.charCodeAt(i + 1) === this.delimiterCode || after > 0) {
            quoting = false;
            wasQuoting = true;
            i++;
            continue;
          }
          this.fail(text, start);
        }
        if (ch === CR || ch === LF) breaks++;
        field += text[i];
        i++;
        continue;
      }
      if (ch === QUOTE) {
        if (field.length !== 0) this.fail(text, start);
        quoting = true;
        i++;
        continue;
      }
      const rd = this.recordDelimiterAt(text, i, final);
      if (rd === NEED_MORE) return NEED_MORE;
      if (rd > 0) {
        cells.push(field);
        onRecord(cells);
        this.lines += breaks + 1;
        return i + rd;
      }
      if (ch === this.delimiterCode) {
        cells.push(field);
        field = '';
        wasQuoting = false;
        i++;
        continue;
      }
      if (ch === CR || ch === LF) breaks++;
      field += text[i];
      i++;
    }
  }

  /** csv-parse words the error of the record at `start`, counting lines as it would have. */
  private fail(text: string, start: number): never {
    const eol = this.mode === Mode.CrLf ? '\r\n' : this.mode === Mode.Cr ? '\r' : '\n';
    const options = {
      delimiter: this.delimiter,
      relax_column_count: true,
      ...(this.mode === Mode.Unknown ? {} : { record_delimiter: eol }),
    };
    parseCsvSync(eol.repeat(this.lines) + text.slice(start), options);
    // Not reached while the two readers agree (the tests hold them to it).
    throw Object.assign(new Error(`Invalid CSV at line ${this.lines + 1}`), { lines: this.lines + 1 });
  }
}
