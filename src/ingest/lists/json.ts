import { InputError } from '../../errors.js';
import type { ListCell } from './cells.js';
import { describeChars } from '../sources.js';
import { MAX_FIELD_CHARS, MAX_RECORD_CHARS } from '../table/reader.js';

/**
 * Streams the items of a top-level JSON array of scalars without holding the document:
 * strings are values, numbers keep the digits as written, null is a blank item, anything
 * else (objects, arrays, booleans) is reported as a problem of that item.
 * Item N (1-based) is reported as row N.
 */
export async function* jsonArrayItems(chunks: AsyncIterable<string>, file: string): AsyncGenerator<ListCell> {
  const scanner = new JsonArrayScanner(file);
  for await (const chunk of chunks) {
    yield* scanner.feed(chunk, false);
  }
  yield* scanner.feed('', true);
}

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

class JsonArrayScanner {
  private buf = '';
  private state: 'start' | 'value' | 'after' | 'done' = 'start';
  private item = 0;
  private sawComma = false;
  /** Text kept aside while an item is incomplete, until there is twice as much (see `feed`). */
  private held: string[] = [];
  private heldChars = 0;

  constructor(private readonly file: string) {}

  *feed(chunk: string, eof: boolean): Generator<ListCell> {
    // An item cut by a chunk's end is scanned again from its start when more text comes: only once
    // the text has doubled, so that a long item costs a few passes, not one a chunk; never beyond the limit.
    const total = this.buf.length + this.heldChars + chunk.length;
    if (!eof && this.buf.length > 0 && total < 2 * this.buf.length && total <= MAX_RECORD_CHARS) {
      this.held.push(chunk);
      this.heldChars += chunk.length;
      return;
    }
    this.buf = this.buf + this.held.join('') + chunk;
    this.held = [];
    this.heldChars = 0;
    let i = 0;
    const buf = this.buf;
    const n = buf.length;
    while (true) {
      while (i < n && WS.has(buf[i]!)) i++;
      if (i >= n) break;
      const c = buf[i]!;
      if (this.state === 'start') {
        if (c !== '[')
          throw this.error('a JSON list file must be an array of values, like ["123-45-6789", "987-65-4321"]');
        this.state = 'value';
        i++;
        continue;
      }
      if (this.state === 'done') throw this.error(`unexpected "${c}" after the closing "]"`);
      if (this.state === 'after') {
        if (c === ',') {
          this.state = 'value';
          this.sawComma = true;
          i++;
          continue;
        }
        if (c === ']') {
          this.state = 'done';
          i++;
          continue;
        }
        throw this.error(`expected "," or "]" after item ${this.item}, found "${c}"`);
      }
      // state 'value'
      if (c === ']') {
        if (this.sawComma) throw this.error(`a "," after item ${this.item} is followed by "]"`);
        this.state = 'done';
        i++;
        continue;
      }
      const end = this.valueEnd(buf, i, eof);
      if (end < 0) {
        // incomplete: wait for more text
        if (n - i > MAX_RECORD_CHARS)
          throw this.error(
            `item ${this.item + 1} is longer than ${describeChars(MAX_RECORD_CHARS)} of text (is the file a JSON list of values?)`,
            this.item + 1,
          );
        break;
      }
      if (end - i > MAX_FIELD_CHARS)
        throw this.error(
          `item ${this.item + 1} holds ${(end - i).toLocaleString('en-US')} characters; values are limited to ${MAX_FIELD_CHARS.toLocaleString('en-US')}`,
          this.item + 1,
        );
      this.item++;
      this.sawComma = false;
      yield this.cell(buf.slice(i, end));
      this.state = 'after';
      i = end;
    }
    this.buf = buf.slice(i);
    if (eof && this.state !== 'done') {
      throw this.error(
        this.state === 'start'
          ? 'is empty; expected a JSON array'
          : `ends after item ${this.item} without the closing "]"`,
      );
    }
  }

  /** Index just past the value starting at `i`, or -1 when the buffer ends inside it. */
  private valueEnd(buf: string, i: number, eof: boolean): number {
    const c = buf[i]!;
    if (c === '"') return this.stringEnd(buf, i, eof);
    if (c === '{' || c === '[') return this.compositeEnd(buf, i, eof);
    if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i;
      if (!NUMBER.test(buf)) throw this.error(`item ${this.item + 1} is not a valid JSON number`);
      const end = NUMBER.lastIndex;
      if (end >= buf.length && !eof) return -1;
      return end;
    }
    for (const word of ['null', 'true', 'false']) {
      if (buf.startsWith(word, i)) return i + word.length;
      if (!eof && word.startsWith(buf.slice(i, i + word.length)) && i + word.length > buf.length) return -1;
    }
    throw this.error(`item ${this.item + 1} is not valid JSON (starts with "${c}")`);
  }

  private stringEnd(buf: string, i: number, eof: boolean): number {
    let j = i + 1;
    while (j < buf.length) {
      const q = buf.indexOf('"', j);
      if (q < 0) break;
      let backslashes = 0;
      for (let k = q - 1; k > i && buf[k] === '\\'; k--) backslashes++;
      if (backslashes % 2 === 0) return q + 1;
      j = q + 1;
    }
    if (eof) throw this.error(`item ${this.item + 1}: a string is never closed`);
    return -1;
  }

  private compositeEnd(buf: string, i: number, eof: boolean): number {
    let depth = 0;
    let inString = false;
    for (let j = i; j < buf.length; j++) {
      const c = buf[j];
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    if (eof) throw this.error(`item ${this.item + 1} is never closed`);
    return -1;
  }

  private cell(token: string): ListCell {
    const c = token[0] ?? '';
    if (c === '"') {
      try {
        return token.indexOf('\\') < 0 ? token.slice(1, -1) : (JSON.parse(token) as string);
      } catch {
        throw this.error(`item ${this.item} is not a valid JSON string`);
      }
    }
    if (c === '-' || (c >= '0' && c <= '9')) return token;
    if (token === 'null') return '';
    const what = c === '{' ? 'an object' : c === '[' ? 'an array' : `the boolean ${token}`;
    return { problem: `is ${what}, not a value`, raw: token };
  }

  private error(message: string, row = this.item): InputError {
    return new InputError(message, { file: this.file, ...(row > 0 ? { row } : {}) });
  }
}
