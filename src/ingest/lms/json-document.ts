import { InputError, quoteValue } from '../../errors.js';
import { describeChars } from '../sources.js';
import { MAX_FIELD_CHARS, MAX_RECORD_CHARS } from '../table/reader.js';

/**
 * The records of a JSON document as its text streams in, never the whole document at once: a
 * top-level array (each item a record), an object holding `arrayKey` (each item of that array;
 * the other members are checked and set aside), or, with no `arrayKey`, one object (one record).
 * Each record's text is cut by a scan of the structure and parsed alone, under the limits of the
 * table reader: a record longer than MAX_RECORD_CHARS or a string longer than MAX_FIELD_CHARS is
 * refused, naming the item, so a huge or endless document costs bounded memory and time.
 */
export class JsonDocumentReader {
  private state: State = 'begin';
  private capture: Capture | undefined;
  private item = 0;
  /** The member key just read in the top-level object. */
  private key: string | undefined;
  private keyArrayFound = false;
  private inKeyArray = false;

  constructor(
    private readonly file: string,
    private readonly arrayKey: string | undefined,
    private readonly onValue: (value: unknown, position: number) => void,
  ) {}

  /** Records read so far. */
  get count(): number {
    return this.item;
  }

  write(chunk: string): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.capture) {
        i = this.scan(chunk, i, false);
        continue;
      }
      const c = chunk.charCodeAt(i);
      if (c === SPACE || c === TAB || c === LF || c === CR || (c === BOM && this.state === 'begin')) {
        i++;
        continue;
      }
      i = this.structural(c, i);
    }
  }

  /** The end of the text: a document cut short is refused. Returns the number of records. */
  end(): number {
    if (this.capture) this.scan('', 0, true);
    if (this.state === 'begin') throw this.invalid('the document is empty');
    if (this.state !== 'end')
      throw this.invalid(`the document ends before its closing bracket (after item ${this.item})`);
    return this.item;
  }

  /** One character between values; returns where to go on. */
  private structural(c: number, i: number): number {
    switch (this.state) {
      case 'begin':
        if (c === OPEN_ARRAY) {
          this.state = 'array-first';
          return i + 1;
        }
        if (c === OPEN_OBJECT) {
          if (this.arrayKey === undefined) return this.startCapture('whole', i);
          this.state = 'object-first';
          return i + 1;
        }
        throw this.shapeError();
      case 'array-first':
        if (c === CLOSE_ARRAY) return this.closeArray(i);
        return this.startCapture('item', i);
      case 'array-item':
        if (c === CLOSE_ARRAY) throw this.invalid(`a "," after item ${this.item} is followed by "]"`);
        return this.startCapture('item', i);
      case 'array-next':
        if (c === COMMA) {
          this.state = 'array-item';
          return i + 1;
        }
        if (c === CLOSE_ARRAY) return this.closeArray(i);
        throw this.invalid(`expected "," or "]" after item ${this.item}, found ${shown(c)}`);
      case 'object-first':
      case 'object-key':
        if (c === CLOSE_OBJECT && this.state === 'object-first') return this.closeObject(i);
        if (c !== QUOTE) throw this.invalid(`expected a member name in the top-level object, found ${shown(c)}`);
        return this.startCapture('key', i);
      case 'object-colon':
        if (c !== COLON) throw this.invalid(`expected ":" after ${quoteValue(this.key ?? '')}, found ${shown(c)}`);
        this.state = 'object-value';
        return i + 1;
      case 'object-value':
        if (this.key === this.arrayKey && !this.keyArrayFound) {
          if (c !== OPEN_ARRAY) throw this.shapeError();
          this.keyArrayFound = true;
          this.inKeyArray = true;
          this.state = 'array-first';
          return i + 1;
        }
        return this.startCapture('member', i);
      case 'object-next':
        if (c === COMMA) {
          this.state = 'object-key';
          return i + 1;
        }
        if (c === CLOSE_OBJECT) return this.closeObject(i);
        throw this.invalid(`expected "," or "}" in the top-level object, found ${shown(c)}`);
      case 'end':
        throw this.invalid(`unexpected ${shown(c)} after the end of the document`);
    }
  }

  /** The top-level object ends; it had to hold the records' array. */
  private closeObject(i: number): number {
    if (!this.keyArrayFound) throw this.shapeError();
    this.state = 'end';
    return i + 1;
  }

  private closeArray(i: number): number {
    if (this.inKeyArray) {
      this.inKeyArray = false;
      this.state = 'object-next';
    } else this.state = 'end';
    return i + 1;
  }

  private startCapture(kind: Capture['kind'], i: number): number {
    this.capture = { kind, pieces: [], length: 0, depth: 0, inString: false, escape: false, stringStart: 0 };
    return i;
  }

  /**
   * Goes on with the value being captured from `from`; returns where it stopped (the chunk's end,
   * or just past the value, which is then handed on).
   */
  private scan(chunk: string, from: number, atEnd: boolean): number {
    const cap = this.capture!;
    const n = chunk.length;
    const base = cap.length - from;
    let j = from;
    // The next quote and backslash of the chunk, each searched for again only once passed.
    let quote = -2;
    let backslash = -2;
    while (j < n) {
      if (cap.inString) {
        if (cap.escape) {
          cap.escape = false;
          j++;
          continue;
        }
        if (quote !== -1 && quote < j) quote = chunk.indexOf('"', j);
        if (backslash !== -1 && backslash < j) backslash = chunk.indexOf('\\', j);
        if (backslash !== -1 && (quote === -1 || backslash < quote)) {
          cap.escape = true;
          j = backslash + 1;
          continue;
        }
        if (quote === -1) {
          j = n;
          break;
        }
        j = quote + 1;
        cap.inString = false;
        this.checkString(base + j - 1 - cap.stringStart);
        if (cap.depth === 0) return this.finish(chunk, from, j);
        continue;
      }
      const c = chunk.charCodeAt(j);
      if (c === QUOTE) {
        // A quote right after a number or a word at the top of the value ends it (and is then an error).
        if (cap.depth === 0 && (cap.length > 0 || j > from)) return this.finish(chunk, from, j);
        cap.inString = true;
        cap.stringStart = base + j + 1;
        j++;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        cap.depth++;
        j++;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        if (cap.depth === 0) return this.finish(chunk, from, j);
        cap.depth--;
        j++;
        if (cap.depth === 0) return this.finish(chunk, from, j);
      } else if (cap.depth === 0 && (c === COMMA || c === SPACE || c === TAB || c === LF || c === CR || c === COLON)) {
        return this.finish(chunk, from, j);
      } else j++;
    }
    if (cap.inString) this.checkString(base + j - cap.stringStart);
    if (base + j > MAX_RECORD_CHARS) {
      throw new InputError(
        `${this.what(cap)} is longer than ${describeChars(MAX_RECORD_CHARS)} of text`,
        { file: this.file },
        { hint: 'a record this long is most often a file that is not the export you meant' },
      );
    }
    if (j > from) cap.pieces.push(chunk.slice(from, j));
    cap.length = base + j;
    if (atEnd) {
      // Only a number or a word can end with the text; anything else was cut short.
      if (cap.depth === 0 && !cap.inString && cap.length > 0) return this.finish('', 0, 0);
      throw this.invalid(`the document ends inside ${this.what(cap)}`);
    }
    return j;
  }

  private checkString(chars: number): void {
    if (chars > MAX_FIELD_CHARS) {
      throw new InputError(
        `${this.what(this.capture!)} holds a value of ${chars.toLocaleString('en-US')} characters or more; values are limited to ${MAX_FIELD_CHARS.toLocaleString('en-US')}`,
        { file: this.file },
      );
    }
  }

  /** The value ends at `to` in `chunk`: parse it and hand it on. */
  private finish(chunk: string, from: number, to: number): number {
    const cap = this.capture!;
    if (to > from) cap.pieces.push(chunk.slice(from, to));
    const text = cap.pieces.length === 1 ? cap.pieces[0]! : cap.pieces.join('');
    this.capture = undefined;
    if (text.length === 0) throw this.invalid(`expected a value, found ${shown(chunk.charCodeAt(to))}`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw this.invalid(`${this.what(cap)}: ${(err as Error).message}`);
    }
    switch (cap.kind) {
      case 'item':
        this.item++;
        this.onValue(value, this.item);
        this.state = 'array-next';
        break;
      case 'whole':
        this.item++;
        this.onValue(value, this.item);
        this.state = 'end';
        break;
      case 'key':
        this.key = value as string;
        this.state = 'object-colon';
        break;
      case 'member':
        this.state = 'object-next';
        break;
    }
    return to;
  }

  private what(cap: Capture): string {
    switch (cap.kind) {
      case 'item':
        return `item ${this.item + 1}`;
      case 'whole':
        return 'the record';
      case 'key':
        return 'a member name';
      case 'member':
        return `the value of ${quoteValue(this.key ?? '')}`;
    }
  }

  private invalid(message: string): InputError {
    return new InputError(`is not valid JSON: ${message}`, { file: this.file });
  }

  private shapeError(): InputError {
    return new InputError(
      `must hold an array${this.arrayKey ? ` or an object with a "${this.arrayKey}" array` : ' or an object'}`,
      { file: this.file },
    );
  }
}

type State =
  | 'begin'
  | 'array-first'
  | 'array-item'
  | 'array-next'
  | 'object-first'
  | 'object-key'
  | 'object-colon'
  | 'object-value'
  | 'object-next'
  | 'end';

interface Capture {
  /** An item of the records' array, the whole document (one object), a member's name or another member's value. */
  kind: 'item' | 'whole' | 'key' | 'member';
  pieces: string[];
  /** Characters captured before the current chunk. */
  length: number;
  depth: number;
  inString: boolean;
  escape: boolean;
  /** Where the current string's characters start, counted like `length`. */
  stringStart: number;
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const BOM = 0xfeff;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function shown(c: number): string {
  return Number.isNaN(c) ? 'the end' : JSON.stringify(String.fromCharCode(c));
}
