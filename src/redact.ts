/**
 * The one redactor: the client secret, access tokens, campaign api keys and proxy passwords of a
 * run never reach a message, a log line, an error's details or a file, in any of the encodings in
 * which a server, a proxy or an error page may echo them back: as typed, URL-encoded (either
 * percent form, `+` for a space, either hex case), JSON-escaped (`\"`, `\/`, `\u00XX`), HTML
 * escaped (`&amp;`, `&quot;`…), or base64 (as in a Basic header, at any alignment), each of these
 * character by character, so that a mix of them is caught too.
 *
 * Whoever learns a secret adds it (the API client adds what it sends); whatever writes
 * diagnostics passes them through `text` or `details`. Data (what a command asked the service for)
 * only goes through `known`, which replaces the registered values and nothing else.
 */

export const REDACTED = '[REDACTED]';

/**
 * Shorter values are not treated as secrets: they would blank out ordinary words, and so give
 * themselves away (a mistyped secret "wrong" turned "the client id or secret is wrong" into "…
 * secret is [REDACTED]"). The service's secrets, tokens and keys are far longer.
 */
const MIN_SECRET_LENGTH = 8;
/**
 * A proxy's password is a person's choice, often shorter: searched for from 4 characters (it shows
 * in proxy URLs, not in the words of a message).
 */
export const MIN_PASSWORD_LENGTH = 4;
/** Base64 fragments shorter than this would match unrelated base64 text. */
const MIN_BASE64_CORE = 8;
/** Longer secrets are matched only in their exact encodings (the per-character pattern would be huge). */
const MAX_PATTERN_SECRET = 1024;

/** Keys whose values are credentials whatever they hold (an echoed request, a token answer). */
const SECRET_KEYS =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api[-_]?key|client[-_]?secret|access[-_]?token|refresh[-_]?token|id[-_]?token|password|passwd)$/i;

/** Credentials recognisable by their shape, whoever's they are. */
const GENERIC: ReadonlyArray<[RegExp, string]> = [
  [/\b(Bearer|Basic)(\s+|%20|\+)[A-Za-z0-9._~+/=%-]+/gi, `$1$2${REDACTED}`],
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, REDACTED],
  [
    // The value ends at a closing bracket or a semicolon too, and a schema's message about the field
    // (`access_token: Invalid input: expected string`) is no value.
    /((?:client[-_]secret|access[-_]token|refresh[-_]token|api[-_]key|password)(?:\\?["'])?\s*(?:=|:|%3D)\s*(?:\\?["'])?)(?!Invalid input:|Required(?:$|[\s,;)])|Expected [a-z]+, received)[^\s"'\\&,;)\]}]+/gi,
    `$1${REDACTED}`,
  ],
];

/** How one character may be written in one encoding layer: fragments of plain text, the first one preferred. */
type Layer = (ch: string) => string[];

const HEX = (n: number, width: number) => n.toString(16).padStart(width, '0');
const ALNUM = /^[A-Za-z0-9]$/;

/** URL encoding, either percent form or left as is (encoders differ on which characters they keep), `+` for a space. */
const urlLayer: Layer = (ch) => {
  // No encoder escapes letters and digits: leaving them out keeps the pattern small and quick to build.
  if (ALNUM.test(ch)) return [ch];
  const percent = [...Buffer.from(ch, 'utf8')].map((b) => '%' + HEX(b, 2)).join('');
  if (ch === '%') return [percent];
  return ch === ' ' ? [ch, '+', percent] : [ch, percent];
};

const JSON_SHORT: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/** JSON string escaping: the short escapes, `\/` (PHP writes it), `\uXXXX` for any other than a letter or digit (ensure-ASCII writers, Go's `\u003c`). */
const jsonLayer: Layer = (ch) => {
  if (ALNUM.test(ch)) return [ch];
  let unicode = '';
  for (let i = 0; i < ch.length; i++) unicode += '\\u' + HEX(ch.charCodeAt(i), 4);
  const short = JSON_SHORT[ch];
  if (short) return [short, unicode];
  if (ch === '/') return [ch, '\\/', unicode];
  return ch.charCodeAt(0) < 0x20 ? [unicode] : [ch, unicode];
};

const HTML_NAMED: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * HTML escaping of the five special characters (an error page quoting what it was sent); escapers
 * differ on which they escape, so only `&` (which starts every escape) must be escaped.
 */
const htmlLayer: Layer = (ch) => {
  const named = HTML_NAMED[ch];
  if (!named) return [ch];
  const code = ch.charCodeAt(0);
  const escaped = [named, `&#${code};`, `&#x${HEX(code, 2)};`, ...(ch === "'" ? ['&apos;'] : [])];
  return ch === '&' ? escaped : [ch, ...escaped];
};

/** `inner` applied first, then `outer` to each character of what it produced (JSON quoted in an HTML page). */
function nested(inner: Layer, outer: Layer): Layer {
  return (ch) =>
    inner(ch).flatMap((form) =>
      [...form].reduce<string[]>((prefixes, c) => prefixes.flatMap((p) => outer(c).map((o) => p + o)), ['']),
    );
}

const LAYERS: readonly Layer[] = [urlLayer, jsonLayer, htmlLayer, nested(jsonLayer, htmlLayer)];

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** A hex digit either case, as a regex fragment. */
function hexPattern(hex: string): string {
  return [...hex].map((d) => (/[a-f]/i.test(d) ? `[${d.toLowerCase()}${d.toUpperCase()}]` : d)).join('');
}

/** A plain-text fragment as a regex, the hex digits of its escapes in either case. */
function fragmentPattern(fragment: string): string {
  return escapeRegex(fragment)
    .replace(/%([0-9a-f]{2})/g, (_m, h: string) => '%' + hexPattern(h))
    .replace(/\\\\u([0-9a-f]{4})/g, (_m, h: string) => '\\\\u' + hexPattern(h))
    .replace(/&#x([0-9a-f]+);/g, (_m, h: string) => `&#[xX]${hexPattern(h)};`);
}

/**
 * One encoding of `secret` as a regex, character by character. Within a layer, a character's
 * forms never start alike (a literal is never an escape's first character), so matching never
 * backtracks over more than one escape: linear, whatever the secret or the text.
 */
function layerPattern(secret: string, layer: Layer): string {
  let out = '';
  for (const ch of secret) {
    if (ALNUM.test(ch)) {
      out += ch;
      continue;
    }
    const key = LAYERS.indexOf(layer) + ch;
    let pattern = CHARACTER_PATTERNS.get(key);
    if (pattern === undefined) {
      // A `%` of a secret is often URL-encoded whatever the rest's encoding: `%25` must be matched
      // whole, before the bare `%` that starts it, or the match would end early and leave `25` behind.
      const raw = ch === '%' && layer !== urlLayer ? ['%25', ...layer(ch)] : layer(ch);
      const forms = [...new Set(raw.map(fragmentPattern))];
      pattern = forms.length === 1 ? forms[0]! : `(?:${forms.join('|')})`;
      CHARACTER_PATTERNS.set(key, pattern);
    }
    out += pattern;
  }
  return out;
}

/** Patterns of the characters met so far, by layer: secrets share most of theirs. */
const CHARACTER_PATTERNS = new Map<string, string>();

/**
 * The parts of the base64 encoding of a larger text that depend only on `secret`, for each of the
 * three alignments it can have in it (a Basic header encodes `client_id:secret`), in the standard
 * and the URL-safe alphabet.
 */
export function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes, Buffer.alloc(2)]);
    const start = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = padded.toString('base64').slice(start, end);
    if (core.length < MIN_BASE64_CORE) continue;
    cores.add(core);
    cores.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...cores];
}

/** The exact encodings of a secret too long for a per-character pattern. */
function exactForms(secret: string): string[] {
  const form = new URLSearchParams({ s: secret }).toString().slice(2);
  return [secret, encodeURIComponent(secret), form, JSON.stringify(secret).slice(1, -1), ...base64Cores(secret)];
}

export class Redactor {
  private readonly secrets = new Set<string>();
  private pattern: RegExp | null | undefined;
  private exact: string[] = [];

  /** Registers a value never to be shown (ignored when empty or too short to tell from words). */
  add(secret: string | undefined | null, minLength = MIN_SECRET_LENGTH): void {
    if (typeof secret !== 'string') return;
    if (secret.length < minLength || this.secrets.has(secret)) return;
    this.secrets.add(secret);
    this.pattern = undefined;
  }

  /** True when at least one secret is registered. */
  get size(): number {
    return this.secrets.size;
  }

  /** Text with every registered secret, in any encoding, replaced; nothing else changes. */
  known(text: string): string {
    const pattern = this.compiled();
    let out = pattern ? text.replace(pattern, REDACTED) : text;
    for (const form of this.exact) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  }

  /** A line of diagnostics: the registered secrets, and credentials recognisable by their shape. */
  text(text: string): string {
    let out = this.known(text);
    for (const [pattern, replacement] of GENERIC) out = out.replace(pattern, replacement);
    return out;
  }

  /**
   * An error's details or a quoted answer, deep: strings as `text`, and the values of keys that
   * name a credential (`authorization`, `client_secret`, `api_key`…) replaced whatever they hold,
   * so that an answer echoing the request's headers carries none of them.
   */
  details<T>(value: T): T {
    return this.walk(value, true, 0) as T;
  }

  /** Data, deep: only the registered secrets are replaced (no shape-based guessing that could alter records). */
  knownIn<T>(value: T): T {
    if (this.secrets.size === 0) return value;
    return this.walk(value, false, 0) as T;
  }

  private walk(value: unknown, diagnostics: boolean, depth: number): unknown {
    if (typeof value === 'string') return diagnostics ? this.text(value) : this.known(value);
    if (value === null || typeof value !== 'object' || depth > 64) return value;
    if (Array.isArray(value)) return value.map((v) => this.walk(v, diagnostics, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      out[key] =
        diagnostics && SECRET_KEYS.test(key) && v !== null && v !== undefined && v !== ''
          ? REDACTED
          : this.walk(v, diagnostics, depth + 1);
    }
    return out;
  }

  private compiled(): RegExp | null {
    if (this.pattern !== undefined) return this.pattern;
    const sources: string[] = [];
    this.exact = [];
    for (const secret of this.secrets) {
      if (secret.length > MAX_PATTERN_SECRET) {
        this.exact.push(...exactForms(secret));
        continue;
      }
      sources.push(escapeRegex(secret));
      for (const form of [secret, ...base64Cores(secret)])
        for (const layer of LAYERS) sources.push(layerPattern(form, layer));
    }
    this.exact = [...new Set(this.exact)].sort((a, b) => b.length - a.length);
    // Longest first, so that a secret containing another is replaced whole.
    const unique = [...new Set(sources)].sort((a, b) => b.length - a.length);
    this.pattern = unique.length ? new RegExp(unique.join('|'), 'g') : null;
    return this.pattern;
  }
}

/** A redactor that knows `secrets` (for one-off use). */
export function redactorFor(...secrets: Array<string | undefined>): Redactor {
  const redactor = new Redactor();
  for (const s of secrets) redactor.add(s);
  return redactor;
}

/**
 * An error with its message, hint and details redacted, in place (errors keep their class and
 * exit code). Errors whose message cannot be set (DOMException) are left as they are.
 */
export function redactError<E>(error: E, redactor: Redactor): E {
  if (!(error instanceof Error)) return error;
  const e = error as Error & { hint?: unknown; details?: unknown; http?: { body?: unknown } };
  try {
    e.message = redactor.text(e.message);
    if (typeof e.hint === 'string') e.hint = redactor.text(e.hint);
    if (e.details !== undefined) e.details = redactor.details(e.details);
    if (e.http?.body !== undefined) e.http = { ...e.http, body: redactor.details(e.http.body) };
    if (typeof e.stack === 'string') e.stack = redactor.text(e.stack);
  } catch {
    // A read-only message: nothing of ours is in it.
  }
  return error;
}
