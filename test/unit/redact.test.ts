import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_PASSWORD_LENGTH, REDACTED, Redactor, redactError, redactorFor } from '../../src/redact.js';
import { ServiceError } from '../../src/errors.js';

const SPECIAL = ['+', '/', '=', '&', ' ', '"', "'", '%', '\\', '<', '>', '?', '#', ':', '~', '*', '(', ')', '!'];
const OTHER = ['é', '€', '😀', '\n', '\t', 'ß'];
const PLAIN = [...'abcdefghXYZ0123456789'];

/** Secrets as a lender might be given: letters and digits with the characters every encoding treats specially. */
const secretArb = (minLength = 8) =>
  fc.string({ unit: fc.constantFrom(...PLAIN, ...PLAIN, ...SPECIAL, ...OTHER), minLength, maxLength: 48 });

const hex = (c: string) => c.charCodeAt(0).toString(16).padStart(4, '0');

/** Every way a server, a proxy or an error page may write a secret back. */
const ENCODINGS: Record<string, (s: string) => string> = {
  raw: (s) => s,
  'encodeURIComponent (%2B %2F %3D %26 %20)': (s) => encodeURIComponent(s),
  'form encoding (+ for a space)': (s) => new URLSearchParams({ v: s }).toString().slice(2),
  'percent, lower-case hex': (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  'percent, all but letters and digits': (s) =>
    [...s]
      .map((c) =>
        /[A-Za-z0-9]/.test(c)
          ? c
          : [...Buffer.from(c, 'utf8')].map((b) => '%' + b.toString(16).padStart(2, '0').toUpperCase()).join(''),
      )
      .join(''),
  'JSON, HTML-safe (Go: \u003c \u0026)': (s) =>
    JSON.stringify(s).replace(/[<>&'\u007f-\uffff]/g, (c) => '\\u' + hex(c)),
  'JSON string': (s) => JSON.stringify(s),
  'JSON with \\/ (PHP)': (s) => JSON.stringify(s).replace(/\//g, '\\/'),
  'JSON, ASCII only': (s) => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => '\\u' + hex(c)),
  'JSON echo of the form body': (s) =>
    JSON.stringify({
      body: `grant_type=client_credentials&client_id=abc&client_secret=${new URLSearchParams({ v: s }).toString().slice(2)}`,
    }),
  'JSON echo of the headers': (s) => JSON.stringify({ headers: { 'x-echo': s, accept: 'application/json' } }),
  HTML: (s) =>
    s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'),
  'JSON quoted in HTML': (s) => JSON.stringify(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;'),
};

describe('Redactor: every encoding of a secret', () => {
  for (const [name, encode] of Object.entries(ENCODINGS)) {
    it(`removes a secret written as ${name}`, () => {
      fc.assert(
        fc.property(secretArb(8), fc.string({ maxLength: 10 }), (secret, noise) => {
          const r = redactorFor(secret);
          const encoded = encode(secret);
          const out = r.text(`answer ${noise}<${encoded}>${noise} end`);
          expect(out).not.toContain(encoded);
          expect(out).not.toContain(secret);
          expect(out).toContain(REDACTED);
        }),
        { numRuns: 150 },
      );
    });
  }

  it('removes a secret from a Basic header (base64 of client_id:secret), whatever the id', () => {
    fc.assert(
      fc.property(secretArb(8), fc.string({ minLength: 1, maxLength: 20 }), (secret, clientId) => {
        const basic = Buffer.from(`${clientId}:${secret}`, 'utf8').toString('base64');
        // known() only: the Basic header's shape is not what removes it.
        const out = redactorFor(secret).known(`Authorization: Basic ${basic}`);
        expect(out).not.toContain(basic);
        expect(decodesToSecret(out, secret)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('removes base64 of a secret at any alignment, also URL-safe and JSON-escaped (\\/)', () => {
    fc.assert(
      fc.property(
        secretArb(8),
        fc.uint8Array({ maxLength: 5 }),
        fc.uint8Array({ maxLength: 5 }),
        fc.boolean(),
        (secret, before, after, urlSafe) => {
          let b64 = Buffer.concat([before, Buffer.from(secret, 'utf8'), after]).toString('base64');
          if (urlSafe) b64 = b64.replace(/\+/g, '-').replace(/\//g, '_');
          const r = redactorFor(secret);
          for (const text of [b64, JSON.stringify(b64).replace(/\//g, '\\/'), encodeURIComponent(b64)]) {
            const out = r.known(`x=${text};`);
            expect(decodesToSecret(out.replace(/\\\//g, '/'), secret)).toBe(false);
            expect(out).toContain(REDACTED);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('removes a secret written with each character in a different encoding', () => {
    fc.assert(
      fc.property(secretArb(8), fc.array(fc.boolean(), { minLength: 48, maxLength: 48 }), (secret, which) => {
        const mixed = [...secret]
          .map((ch, i) => (which[i] ? encodeURIComponent(ch) : ch === '%' ? '%25' : ch))
          .join('');
        expect(redactorFor(secret).known(`a ${mixed} b`)).toBe(`a ${REDACTED} b`);
      }),
      { numRuns: 200 },
    );
  });

  it('removes every registered secret, the longest first', () => {
    const r = redactorFor('tok-123456', 'tok-123456-longer', 'S3cr3t+/= &"x');
    expect(r.text('a tok-123456-longer b tok-123456 c S3cr3t%2B%2F%3D+%26%22x')).toBe(
      `a ${REDACTED} b ${REDACTED} c ${REDACTED}`,
    );
  });

  it('matches a very long secret in its exact encodings', () => {
    const secret = 'k+/= &'.repeat(300);
    const r = redactorFor(secret);
    for (const text of [secret, encodeURIComponent(secret), new URLSearchParams({ v: secret }).toString().slice(2)]) {
      expect(r.known(`<${text}>`)).toBe(`<${REDACTED}>`);
    }
  });
});

describe('Redactor: what it leaves alone', () => {
  it('leaves ordinary text and too-short values alone', () => {
    const r = redactorFor(undefined, 'zz', '');
    expect(r.size).toBe(0);
    expect(r.text('GET /api/v1/lists → 200 in 12 ms')).toBe('GET /api/v1/lists → 200 in 12 ms');
  });

  it('takes no value under 8 characters for a secret: a mistyped one would blank out, and give away, a word of the message', () => {
    const hint = 'the client id or secret is wrong: the service at http://127.0.0.1:1 refused it';
    expect(redactorFor('wrong', 'service').text(hint)).toBe(hint);
    expect(redactorFor('wrong-secret').text('sent wrong-secret')).toBe(`sent ${REDACTED}`);
    // A proxy's password, a person's choice, is searched for from 4 characters.
    const proxy = new Redactor();
    proxy.add('hunter2');
    proxy.add('hunter2', MIN_PASSWORD_LENGTH);
    expect(proxy.text('via http://bob:hunter2@proxy:3128')).toBe(`via http://bob:${REDACTED}@proxy:3128`);
  });

  it('ends a credential field at a bracket or a semicolon, and takes a schema message about the field for none', () => {
    const r = new Redactor();
    expect(r.text('refused (client_secret=abc123def); retry')).toBe(`refused (client_secret=${REDACTED}); retry`);
    expect(r.text('[api_key: k-123]')).toBe(`[api_key: ${REDACTED}]`);
    const schema = 'the token answer is not one: access_token: Invalid input: expected string, received undefined';
    expect(r.text(schema)).toBe(schema);
    // Values that only begin like a schema's words are values.
    expect(r.text('password=required-Xy9! password: Invalid#2024 api_key=Expected1')).toBe(
      `password=${REDACTED} password: ${REDACTED} api_key=${REDACTED}`,
    );
  });

  it('never changes text that holds no secret (known)', () => {
    fc.assert(
      fc.property(secretArb(12), fc.string({ unit: fc.constantFrom(...'0123456789 ,.-:'), maxLength: 200 }), (s, t) => {
        // Digits and punctuation only: cannot hold a secret with at least one letter-or-symbol mix.
        fc.pre(!/^[0-9 ,.\-:]*$/.test(s));
        expect(redactorFor(s).known(t)).toBe(t);
      }),
    );
  });

  it('knownIn changes only registered values in data, not shapes that look like credentials', () => {
    const r = redactorFor('s3cr3t-value');
    const data = { note: 'Bearer abc and eyJa.eyJb.c', api_key: 'campaign-key', echoed: 'x s3cr3t-value y' };
    expect(r.knownIn(data)).toEqual({ ...data, echoed: `x ${REDACTED} y` });
  });
});

describe('Redactor: diagnostics', () => {
  it('removes bearer credentials, JWTs and credential fields by their shape', () => {
    const r = new Redactor();
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const out = r.text(`Authorization: Bearer abc.def-123 token ${jwt} Basic%20dXNlcjpwYXNz`);
    expect(out).not.toContain('abc.def-123');
    expect(out).not.toContain(jwt);
    expect(out).not.toContain('dXNlcjpwYXNz');
    expect(r.text('client_secret=abc&x=1 {"access_token":"tok","api_key": "key9"} --client-secret=s3cr3t')).toBe(
      `client_secret=${REDACTED}&x=1 {"access_token":"${REDACTED}","api_key": "${REDACTED}"} --client-secret=${REDACTED}`,
    );
  });

  it('details: echoed request headers and credential keys carry nothing, deep', () => {
    const r = redactorFor('the-token-1234');
    const body = {
      message: 'Server Error',
      echo: {
        headers: { Authorization: 'Bearer the-token-1234', 'user-agent': 'leadctl/1', cookie: 'a=b' },
        form: { client_secret: 'whatever', client_id: 'id-1' },
      },
      list: ['the-token-1234', 3],
    };
    const out = r.details(body);
    expect(JSON.stringify(out)).not.toContain('the-token-1234');
    expect(out.echo.headers).toEqual({ Authorization: REDACTED, 'user-agent': 'leadctl/1', cookie: REDACTED });
    expect(out.echo.form).toEqual({ client_secret: REDACTED, client_id: 'id-1' });
    expect(out.list).toEqual([REDACTED, 3]);
    expect(body.echo.headers.Authorization).toBe('Bearer the-token-1234');
  });

  it('redactError: message, hint and details of an error, in place', () => {
    const error = new ServiceError('HTTP 500: echo Bearer the-token-1234', 500, {
      hint: 'tok the-token-1234',
      details: { body: { authorization: 'Bearer the-token-1234' } },
    });
    const out = redactError(error, redactorFor('the-token-1234'));
    expect(out).toBe(error);
    expect(JSON.stringify(out.toJSON())).not.toContain('the-token-1234');
    expect(out.exitCode).toBe(5);
  });
});

describe('Redactor: bounded time', () => {
  it('stays linear on text built to make a backtracking matcher explode', () => {
    const r = redactorFor('\\'.repeat(60) + 'Z', '%'.repeat(60) + 'Y', '&'.repeat(40) + '"');
    const text = '\\'.repeat(50_000) + '%25'.repeat(20_000) + '&amp;'.repeat(20_000);
    const started = performance.now();
    const out = r.text(text);
    expect(out).toBe(text);
    // Generous: a backtracking blow-up would take hours, linear takes milliseconds.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('redacts 8 MB of answer with three secrets in reasonable time', () => {
    const r = redactorFor('S3cr3t+/= &"x9', 'tok-abcdefghijklmnop', 'campaign-key-42');
    const line = '{"id":123,"name":"Jane Doe","reason":"ssn 123-45-6789 is listed"},';
    const text = line.repeat(Math.ceil(8_000_000 / line.length)) + 'tok-abcdefghijklmnop';
    const started = performance.now();
    const out = r.known(text);
    expect(out.endsWith(REDACTED)).toBe(true);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

/** True when some base64 run of `text`, at any of its four alignments, decodes to bytes containing the secret. */
function decodesToSecret(text: string, secret: string): boolean {
  const needle = Buffer.from(secret, 'utf8');
  for (const run of text.match(/[A-Za-z0-9+/_-]{4,}/g) ?? []) {
    const standard = run.replace(/-/g, '+').replace(/_/g, '/');
    for (let skip = 0; skip < 4; skip++) {
      const part = standard.slice(skip);
      const usable = part.slice(0, part.length - (part.length % 4));
      if (Buffer.from(usable, 'base64').includes(needle)) return true;
    }
  }
  return false;
}
