import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyedDigest, prefixedDigester } from '../../../../src/jobs/delta/keyed-digest.js';

describe('KeyedDigest', () => {
  it('is HMAC-SHA256, byte for byte, for any key and any text, one digest after another', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 100 }),
        fc.array(
          fc.oneof(
            fc.string({ unit: 'binary', maxLength: 300 }),
            fc.string({ maxLength: 5000 }),
            fc.constantFrom('', '\u0000', '\ud800', 'é', '😀'.repeat(2000)),
          ),
          { minLength: 1, maxLength: 6 },
        ),
        fc.integer({ min: 1, max: 32 }),
        (key, texts, bytes) => {
          const keyed = new KeyedDigest(Buffer.from(key));
          for (const text of texts) {
            const expected = createHmac('sha256', Buffer.from(key)).update(text).digest().subarray(0, bytes);
            expect(keyed.digest(text, bytes).toString('hex')).toBe(expected.toString('hex'));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('prefixedDigester', () => {
  it('is SHA-256 of the prefix joined to the text, for any texts one after another', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 80 }),
        fc.array(
          fc.oneof(
            fc.string({ unit: 'binary', maxLength: 300 }),
            fc.string({ maxLength: 5000 }),
            fc.constantFrom('', '\u0000', '\ud800', 'a\udc00b', 'é', '😀'.repeat(2000)),
          ),
          { minLength: 1, maxLength: 6 },
        ),
        fc.integer({ min: 1, max: 32 }),
        (prefix, texts, bytes) => {
          const digest = prefixedDigester(prefix, bytes);
          for (const text of texts)
            expect(digest(text)).toBe(
              createHash('sha256')
                .update(prefix + text)
                .digest('hex')
                .slice(0, 2 * bytes),
            );
        },
      ),
      { numRuns: 300 },
    );
  });
});
