import type { ValidCustomer } from './validate.js';

/**
 * Cuts the stream of valid customers into request bodies: at most `maxCustomers` customers and,
 * unless a single customer is larger on its own, at most `maxBytes` bytes of JSON. Depends only
 * on the customers and the two limits, so the same input always gives the same chunks: that is
 * what lets `--resume` skip exactly the chunks the journal says were acknowledged.
 *
 * Each customer's JSON is written into its chunk's request body (bytes, outside the JavaScript
 * heap) as it is added, so a body is serialised once, and the thousand strings of a chunk do not
 * outlive their customer's check: the heap keeps only what is short-lived, and stays small.
 */

export interface ChunkLimits {
  maxCustomers: number;
  maxBytes: number;
}

export interface Chunk {
  /** 0-based position in the run. */
  index: number;
  customers: ValidCustomer[];
  /** Size of the request body in bytes (UTF-8). */
  bytes: number;
  /**
   * Says the chunk is done with (answered, or counted as not sent): its body's memory is used again
   * for a later chunk, and its customers' JSON can no longer be read. Optional: a chunk never
   * released is simply left to the garbage collector.
   */
  release(): void;
}

const PREFIX = Buffer.from('{"customers":[');
const SUFFIX = Buffer.from(']}');
const ENVELOPE = PREFIX.length + SUFFIX.length;
const COMMA = 0x2c;
/**
 * Every body is allocated with room for a whole chunk (`maxBytes`, up to this), not sized from the
 * last one: one size, so a released body always fits the next chunk, and nothing is allocated,
 * outgrown and freed as the run goes. Room costs no memory until it is written (glibc gives a
 * block of megabytes its own mapping, whose pages count only once touched). Growing a body by
 * doubling freed blocks of 64 KB to 4 MB, each of which raised glibc's threshold for a block of
 * its own; every later body then came from the heap, which keeps its pages: 20–30 MB more at a
 * push's peak.
 */
const MAX_CAPACITY = 32 * 1024 * 1024;

/** The bytes of one chunk's body, as they are written. */
interface BodyBuffer {
  buffer: Buffer;
  /** Set once the chunk is closed: the body is `buffer.subarray(0, end)`. */
  end?: number;
  released?: boolean;
}

/**
 * Released bodies kept for reuse. Each request in flight holds its own, so a couple spare is all
 * the next chunks need; more would only stay resident (a body's pages, once written, count).
 */
const POOL_SIZE = 2;

/** Where a customer's JSON is in its chunk's body. */
interface Placement {
  body: BodyBuffer;
  start: number;
  end: number;
}

const placements = new WeakMap<ValidCustomer, Placement>();

export class Chunker {
  private current: ValidCustomer[] = [];
  private bytes = ENVELOPE;
  private index = 0;
  private body: BodyBuffer | undefined;
  private used = 0;
  private readonly pool: Buffer[] = [];

  /** `maxCapacity`: the room a body is first given at most (tests make it small). */
  constructor(
    private readonly limits: ChunkLimits,
    private readonly maxCapacity = MAX_CAPACITY,
  ) {}

  /** Adds a customer; returns the chunk it closed, if any. */
  add(customer: ValidCustomer): Chunk | undefined {
    const json = customer.json ?? customerJson(customer);
    const size = Buffer.byteLength(json);
    let closed: Chunk | undefined;
    if (
      this.current.length > 0 &&
      (this.current.length >= this.limits.maxCustomers || this.bytes + 1 + size > this.limits.maxBytes)
    ) {
      closed = this.close();
    }
    this.bytes += size + (this.current.length ? 1 : 0);
    this.current.push(customer);
    this.place(customer, json, size);
    return closed;
  }

  /** The last, partly filled chunk. */
  finish(): Chunk | undefined {
    return this.current.length ? this.close() : undefined;
  }

  private place(customer: ValidCustomer, json: string, size: number): void {
    const need = this.current.length > 1 ? 1 + size : size;
    if (this.body === undefined) {
      const capacity = Math.max(Math.min(this.limits.maxBytes, this.maxCapacity), ENVELOPE + size);
      const pooled = this.pool.findIndex((b) => b.length >= capacity);
      this.body = { buffer: pooled >= 0 ? this.pool.splice(pooled, 1)[0]! : Buffer.allocUnsafe(capacity) };
      PREFIX.copy(this.body.buffer, 0);
      this.used = PREFIX.length;
    }
    if (this.used + need + SUFFIX.length > this.body.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.body.buffer.length * 2, this.used + need + SUFFIX.length));
      this.body.buffer.copy(grown, 0, 0, this.used);
      this.body.buffer = grown;
    }
    if (this.current.length > 1) this.body.buffer[this.used++] = COMMA;
    const start = this.used;
    this.used += this.body.buffer.write(json, start, 'utf8');
    const placement: Placement = { body: this.body, start, end: this.used };
    placements.set(customer, placement);
    // The string goes; whoever still asks for the customer's JSON reads it from the body
    // (`customerJson`). Not a getter in its place: redefining a property makes every customer an
    // object of its own shape, a tenth of what the collector promoted in a push.
    customer.json = undefined;
  }

  private close(): Chunk {
    const body = this.body!;
    SUFFIX.copy(body.buffer, this.used);
    body.end = this.used + SUFFIX.length;
    const release = () => {
      if (body.released) return;
      body.released = true;
      if (this.pool.length < POOL_SIZE) this.pool.push(body.buffer);
    };
    const chunk: Chunk = { index: this.index++, customers: this.current, bytes: this.bytes, release };
    this.current = [];
    this.bytes = ENVELOPE;
    this.body = undefined;
    this.used = 0;
    return chunk;
  }
}

/** A customer's JSON, from its request's body once it is chunked. */
export function customerJson(customer: ValidCustomer): string {
  const placement = placements.get(customer);
  if (placement === undefined) {
    if (customer.json === undefined) throw new Error(`customer ${customer.customerId} has no JSON`);
    return customer.json;
  }
  if (placement.body.released)
    throw new Error(`the JSON of customer ${customer.customerId} was read after its request was released`);
  return placement.body.buffer.toString('utf8', placement.start, placement.end);
}

/**
 * The request body of customers of a chunk (all of it, or a run of them when a request is split):
 * the bytes written when they were chunked, not serialised again.
 */
export function customersBody(customers: readonly ValidCustomer[]): Buffer {
  if (customers.length === 0) return Buffer.concat([PREFIX, SUFFIX]);
  const first = placements.get(customers[0]!);
  if (first?.body.released) throw new Error('the body of a released request was asked for');
  let contiguous = first !== undefined && first.body.end !== undefined;
  let previous = first;
  for (let i = 1; contiguous && i < customers.length; i++) {
    const p = placements.get(customers[i]!);
    contiguous = p !== undefined && p.body === first!.body && p.start === previous!.end + 1;
    previous = p;
  }
  if (contiguous) {
    const { body } = first!;
    if (first!.start === PREFIX.length && previous!.end + SUFFIX.length === body.end)
      return body.buffer.subarray(0, body.end);
    return Buffer.concat([PREFIX, body.buffer.subarray(first!.start, previous!.end), SUFFIX]);
  }
  return Buffer.from(`{"customers":[${customers.map(customerJson).join(',')}]}`);
}
