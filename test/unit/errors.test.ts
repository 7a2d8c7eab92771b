import { describe, expect, it } from 'vitest';
import { quoteValue } from '../../src/errors.js';

describe('quoteValue: values quoted in messages and tables', () => {
  it('quotes short values whole and cuts long ones to 60 characters with their length', () => {
    expect(quoteValue('abc')).toBe('"abc"');
    expect(quoteValue('x'.repeat(60))).toBe(`"${'x'.repeat(60)}"`);
    expect(quoteValue('x'.repeat(4000))).toBe(`"${'x'.repeat(60)}…" (4,000 chars)`);
  });

  it('can leave the quotes out and cut shorter, never inside a surrogate pair', () => {
    expect(quoteValue('y'.repeat(100), { quotes: false, max: 10 })).toBe(`${'y'.repeat(10)}… (100 chars)`);
    const emoji = `${'a'.repeat(9)}😀😀`;
    expect(quoteValue(emoji, { max: 10 })).toBe(`"${'a'.repeat(9)}…" (13 chars)`);
  });
});
