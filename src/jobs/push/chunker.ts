import type { ValidCustomer } from './validate.js';

/**
 * Cuts the stream of valid customers into request bodies: at most `maxCustomers` customers and,
 * unless a single customer is larger on its own, at most `maxBytes` bytes of JSON. Depends only
 * on the customers and the two limits, so the same input always gives the same chunks: that is
 * what lets `--resume` skip exactly the chunks the journal says were acknowledged.
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
}

const ENVELOPE = Buffer.byteLength('{"customers":[]}');

export class Chunker {
  private current: ValidCustomer[] = [];
  private bytes = ENVELOPE;
  private index = 0;

  constructor(private readonly limits: ChunkLimits) {}

  /** Adds a customer; returns the chunk it closed, if any. */
  add(customer: ValidCustomer): Chunk | undefined {
    const size = Buffer.byteLength(customer.json);
    let closed: Chunk | undefined;
    if (this.current.length > 0 && (this.current.length >= this.limits.maxCustomers || this.bytes + 1 + size > this.limits.maxBytes)) {
      closed = this.close();
    }
    this.bytes += size + (this.current.length ? 1 : 0);
    this.current.push(customer);
    return closed;
  }

  /** The last, partly filled chunk. */
  finish(): Chunk | undefined {
    return this.current.length ? this.close() : undefined;
  }

  private close(): Chunk {
    const chunk: Chunk = { index: this.index++, customers: this.current, bytes: this.bytes };
    this.current = [];
    this.bytes = ENVELOPE;
    return chunk;
  }
}

/** The request body of a chunk. */
export function customersBody(customers: readonly ValidCustomer[]): string {
  return `{"customers":[${customers.map((c) => c.json).join(',')}]}`;
}
