import { describe, expect, it } from 'vitest';
import { printable } from '../../../src/io/printable.js';

describe('printable', () => {
  it('leaves text with nothing to escape as it is, emoji and accents included', () => {
    const text = 'Café ☕ 👩‍💻 — 12 rows';
    expect(printable(text)).toBe(text);
    expect(printable(text, 100, false)).toBe(text);
  });

  it('escapes what acts on a terminal: C0 and C1 controls, bidi controls, separators, lone surrogates', () => {
    expect(printable('\u001b[2J\rA\u0007\u0000\u009b', Number.POSITIVE_INFINITY, false)).toBe(
      '\\x1b[2J\\rA\\x07\\x00\\x9b',
    );
    expect(printable('a\u202eb\u2066c\u2028d\ud800e', Number.POSITIVE_INFINITY, false)).toBe(
      'a\\u202eb\\u2066c\\u2028d\\ud800e',
    );
    expect(printable('line\nnext\ttab', Number.POSITIVE_INFINITY, false)).toBe('line\\nnext\\ttab');
  });

  it('escapes quotes and backslashes only for quoting', () => {
    expect(printable('say "hi" \\o/')).toBe('say \\"hi\\" \\\\o/');
    expect(printable('say "hi" \\o/', 50, false)).toBe('say "hi" \\o/');
  });

  it('cuts at max characters, never inside a character, with …', () => {
    expect(printable('abcdef', 3)).toBe('abc…');
    expect(printable('abc', 3)).toBe('abc');
    expect(printable('👩👩👩', 2, false)).toBe('👩👩…');
  });
});
