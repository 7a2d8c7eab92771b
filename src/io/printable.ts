/**
 * Text from elsewhere (a service's message, a proxy's page, a cell of a table) as it can be put
 * on a terminal: control characters (ESC, CR, BEL…), bidi controls, line and paragraph
 * separators and lone surrogates escaped, so that it can neither move the cursor, clear the
 * screen, set the window's title nor reorder the line it is on.
 */

/** Anything `printable` escapes (a pair of surrogates is a character: only a lone one is escaped there). */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]/;

/**
 * `text` cut to `max` characters (with `…`), with what could act on a terminal escaped (`\n`,
 * `\x1b`, `\u202e`); with `quoting`, quotes and backslashes too, for text put between quotes.
 */
export function printable(text: string, max = Number.POSITIVE_INFINITY, quoting = true): string {
  if (text.length <= max && !UNSAFE.test(text) && !(quoting && /["\\]/.test(text))) return text;
  // Twice as many UTF-16 units as characters wanted, and one more: never half a character short.
  const head = [...(Number.isFinite(max) ? text.slice(0, 2 * max + 2) : text)];
  const cut = head.length > max;
  const shown = head
    .slice(0, Math.min(head.length, max))
    .map((ch) => {
      if (ch === '\n') return '\\n';
      if (ch === '\r') return '\\r';
      if (ch === '\t') return '\\t';
      if (quoting && (ch === '"' || ch === '\\')) return '\\' + ch;
      const code = ch.codePointAt(0)!;
      if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return `\\x${code.toString(16).padStart(2, '0')}`;
      const invisible =
        (code >= 0x202a && code <= 0x202e) ||
        (code >= 0x2066 && code <= 0x2069) ||
        code === 0x2028 ||
        code === 0x2029 ||
        (code >= 0xd800 && code <= 0xdfff);
      if (invisible) return `\\u${code.toString(16)}`;
      return ch;
    })
    .join('');
  return `${shown}${cut ? '…' : ''}`;
}
