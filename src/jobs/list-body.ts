import type { ListType } from '../schema/list-types.js';
import { digitsToNumber } from '../ingest/lists/dedupe.js';
import { DIGITS_OF, type ListValueKind } from '../ingest/lists/normalise.js';

/** Bytes of JSON text per yielded chunk of a request body. */
const CHUNK_CHARS = 64 * 1024;

/**
 * The distinct valid values in the order they were read, each with its source row, kept as
 * compactly as the kind allows: 4 bytes a value for 9-digit-or-shorter numbers, 8 for phones,
 * a reference to the (already deduplicated) string otherwise; plus 4 bytes of row number. The
 * row lets a service-side refusal of item N be reported against the row of the input file.
 */
export class CollectedValues {
  private numbers: Uint32Array | Float64Array | undefined;
  private strings: string[] | undefined;
  private rows = new Uint32Array(1024);
  private count = 0;
  private readonly width: number | undefined;

  constructor(readonly kind: ListValueKind) {
    this.width = DIGITS_OF[kind];
    if (this.width === undefined) this.strings = [];
    else this.numbers = this.width <= 9 ? new Uint32Array(1024) : new Float64Array(1024);
  }

  get length(): number {
    return this.count;
  }

  /** Numeric kinds keep the number; `value` must then be its digits. */
  push(value: string, row: number): void {
    if (this.numbers) {
      this.pushNumber(digitsToNumber(value), row);
      return;
    }
    if (this.count === this.rows.length) this.grow();
    this.rows[this.count] = row;
    this.strings!.push(value);
    this.count++;
  }

  /** For the numeric kinds: the value already parsed. */
  pushNumber(n: number, row: number): void {
    if (this.count === this.rows.length) this.grow();
    this.rows[this.count] = row;
    this.numbers![this.count] = n;
    this.count++;
  }

  /** The source row of the item at 0-based `index`. */
  rowAt(index: number): number | undefined {
    return index >= 0 && index < this.count ? this.rows[index] : undefined;
  }

  valueAt(index: number): string | undefined {
    if (index < 0 || index >= this.count) return undefined;
    return this.numbers ? String(this.numbers[index]).padStart(this.width!, '0') : this.strings![index];
  }

  /** `{"name":…,"type":…,"list":[…]}` in chunks; call again for a fresh copy (a retry). */
  async *jsonBody(name: string, type: ListType): AsyncGenerator<string> {
    yield `{"name":${JSON.stringify(name)},"type":${JSON.stringify(type)},"list":[`;
    let chunk = '';
    for (let i = 0; i < this.count; i++) {
      const item = this.numbers
        ? '"' + String(this.numbers[i]).padStart(this.width!, '0') + '"'
        : JSON.stringify(this.strings![i]);
      chunk += i === 0 ? item : ',' + item;
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    yield chunk + ']}';
  }

  private grow(): void {
    const size = this.rows.length * 2;
    const rows = new Uint32Array(size);
    rows.set(this.rows);
    this.rows = rows;
    if (this.numbers) {
      const numbers = this.numbers instanceof Uint32Array ? new Uint32Array(size) : new Float64Array(size);
      numbers.set(this.numbers);
      this.numbers = numbers;
    }
  }
}
