/**
 * Personal data and secrets in human output: SSNs and bank account numbers show their last
 * four characters only; secrets and tokens never show at all.
 */

const MASK = '*';

/** Masks every letter and digit but the last `keep`, leaving separators where they were. */
export function maskAllButLast(value: string, keep = 4): string {
  const alnum = value.replace(/[^A-Za-z0-9]/g, '').length;
  let toMask = Math.max(0, alnum - keep);
  let out = '';
  for (const ch of value) {
    if (toMask > 0 && /[A-Za-z0-9]/.test(ch)) {
      out += MASK;
      toMask--;
    } else {
      out += ch;
    }
  }
  return out;
}

/** `123-45-6789` → `***-**-6789`; `123456789` → `*****6789`. */
export function maskSsn(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return maskAllButLast(String(value), 4);
}

/** `000123456789` → `********6789`. */
export function maskAccount(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return maskAllButLast(String(value), 4);
}

export const REDACTED = '[REDACTED]';

/**
 * Removes secrets from a line of diagnostics: the given values wherever they appear,
 * bearer credentials, JWT-shaped tokens and `client_secret=` / `access_token` fields.
 */
export function redact(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out
    .replace(/(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`)
    .replace(/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, REDACTED)
    .replace(/((?:client_secret|access_token|api_key)["']?\s*[=:]\s*["']?)[^\s"'&,}]+/gi, `$1${REDACTED}`);
}
