import { hash } from 'node:crypto';

const BLOCK = 64;

/**
 * A fixed prefix of bytes, then a text as UTF-8, in one buffer reused from text to text: hashing a
 * string joined to its prefix would first copy both into a new flat string (the whole input, in a
 * first look over a large export) and then encode it.
 */
class PrefixedText {
  private buffer: Buffer;

  constructor(private readonly prefix: Buffer) {
    this.buffer = Buffer.allocUnsafe(Math.max(4096, 2 * prefix.length));
    prefix.copy(this.buffer);
  }

  /** The prefix and `text`, valid until the next call. */
  bytes(text: string): Buffer {
    const start = this.prefix.length;
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (this.buffer.length < start + 3 * text.length) {
      this.buffer = Buffer.allocUnsafe(2 * (start + 3 * text.length));
      this.prefix.copy(this.buffer);
    }
    return this.buffer.subarray(0, start + this.buffer.write(text, start, 'utf8'));
  }
}

/**
 * HMAC-SHA256 of texts under one key, computed as RFC 2104 defines it, with two one-shot SHA-256
 * calls over reused buffers: the same bytes as `createHmac`, without an Hmac object per text (half
 * the cost over 100,000 customers' payloads). The digests do not change, so nothing recorded
 * before needs to be made again.
 */
export class KeyedDigest {
  /** The key XOR ipad, then the text. */
  private readonly inner: PrefixedText;
  /** The key XOR opad, then the inner digest. */
  private readonly outer = Buffer.allocUnsafe(BLOCK + 32);

  constructor(key: Buffer) {
    const block = key.length > BLOCK ? Buffer.from(hash('sha256', key, 'hex'), 'hex') : key;
    const innerPad = Buffer.alloc(BLOCK, 0x36);
    this.outer.fill(0x5c, 0, BLOCK);
    for (let i = 0; i < block.length; i++) {
      innerPad[i]! ^= block[i]!;
      this.outer[i]! ^= block[i]!;
    }
    this.inner = new PrefixedText(innerPad);
  }

  /** The first `bytes` bytes of HMAC-SHA256(key, text as UTF-8). */
  digest(text: string, bytes = 32): Buffer {
    this.outer.write(hash('sha256', this.inner.bytes(text), 'hex'), BLOCK, 'hex');
    return Buffer.from(hash('sha256', this.outer, 'hex').slice(0, 2 * bytes), 'hex');
  }
}

/** SHA-256 of a fixed prefix then a text (UTF-8), in hex, cut to `bytes` bytes: `hash(prefix + text)` without the joined string. */
export function prefixedDigester(prefix: string, bytes: number): (text: string) => string {
  const scratch = new PrefixedText(Buffer.from(prefix, 'utf8'));
  return (text) => hash('sha256', scratch.bytes(text), 'hex').slice(0, 2 * bytes);
}
